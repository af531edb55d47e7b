package sql

import (
	"regexp"
	"strings"
	"time"
)

// The shape checks below accept exactly the texts Bind can read (its
// grammar is in filter's coerce.go; keep the two in step), so that a bad
// literal is refused here, with its position. Bind converts the text and
// resolves zone names, which needs the zone database; so these checks
// build no time.Time.
var (
	timestampShape = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(.*)$`)
	offsetShape    = regexp.MustCompile(`^[+-](\d{2})(?::?(\d{2}))?$`)
	zoneNameShape  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_/+-]*$`)
)

// validDate: YYYY-MM-DD, and a day that exists (no February 30).
func validDate(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !allDigits(s[:4]+s[5:7]+s[8:]) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// validTimestamp: a date; optionally a space or T and HH:MM[:SS[.fraction]];
// optionally a zone, after spaces or not.
func validTimestamp(s string) bool {
	m := timestampShape.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || !validDate(m[1]) {
		return false
	}
	if m[2] > "23" || m[3] > "59" || m[4] > "59" {
		return false // "" (no time, no seconds) sorts before any digits
	}
	// Bind keeps nanoseconds: trailing zeros add no precision.
	if len(strings.TrimRight(m[5], "0")) > 9 {
		return false
	}
	return validZone(m[6])
}

// validZone: nothing, Z, an offset (+HH, +HH:MM, +HHMM, or with -), or a
// zone name (Europe/Paris, UTC, Etc/GMT+3), whose existence Bind checks.
func validZone(z string) bool {
	switch {
	case z == "" || z == "Z" || z == "z":
		return true
	case z[0] == '+' || z[0] == '-':
		m := offsetShape.FindStringSubmatch(z)
		return m != nil && m[1] <= "23" && m[2] <= "59"
	}
	return zoneNameShape.MatchString(z)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
