package sql

import (
	"strings"
	"time"
)

// The shape checks below only make sure the text is one Bind can read;
// Bind converts it (and resolves zone names, which needs the zone
// database), so they do not build time.Time values.

// validDate: YYYY-MM-DD, and a day that exists (no February 30).
func validDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !allDigits(s[:4]+s[5:7]+s[8:]) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// validTimestamp: a date, a space or T, HH:MM:SS, an optional fraction of
// 1 to 9 digits, and an optional zone.
func validTimestamp(s string) bool {
	if len(s) < 19 || !validDate(s[:10]) || (s[10] != ' ' && s[10] != 'T') || !validClock(s[11:19]) {
		return false
	}
	rest := s[19:]
	if strings.HasPrefix(rest, ".") {
		n := len(rest[1:]) - len(strings.TrimLeft(rest[1:], "0123456789"))
		if n < 1 || n > 9 {
			return false
		}
		rest = rest[1+n:]
	}
	return validZone(rest)
}

// validClock: HH:MM:SS on a 24-hour clock.
func validClock(s string) bool {
	return s[2] == ':' && s[5] == ':' && allDigits(s[:2]+s[3:5]+s[6:]) &&
		s[:2] <= "23" && s[3:5] <= "59" && s[6:] <= "59"
}

// validZone: nothing, Z, an offset (+HH, +HH:MM, +HHMM, or with -), each
// optionally after a space, or a space and a zone name (Europe/Paris,
// UTC, Etc/GMT+3).
func validZone(z string) bool {
	if z == "" {
		return true
	}
	spaced := z[0] == ' '
	z = strings.TrimPrefix(z, " ")
	switch {
	case z == "Z":
		return true
	case z != "" && (z[0] == '+' || z[0] == '-'):
		return validOffset(z[1:])
	}
	return spaced && validZoneName(z)
}

func validOffset(o string) bool {
	switch len(o) {
	case 2:
	case 4:
		o = o[:2] + ":" + o[2:]
	case 5:
		if o[2] != ':' {
			return false
		}
	default:
		return false
	}
	if !allDigits(o[:2]) || o[:2] > "23" {
		return false
	}
	return len(o) == 2 || allDigits(o[3:]) && o[3:] <= "59"
}

func validZoneName(z string) bool {
	if z == "" || !isASCIILetter(z[0]) {
		return false
	}
	for i := 1; i < len(z); i++ {
		c := z[i]
		if !isASCIILetter(c) && !isDigit(c) && !strings.ContainsRune("_/+-", rune(c)) {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
