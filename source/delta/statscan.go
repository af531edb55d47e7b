package delta

import (
	"strconv"
	"strings"
)

// scanStats decodes the statistics JSON without encoding/json: one pass
// that slices the input instead of copying it. ok is false where it does
// not decide (a string with an escape or a byte outside ASCII, a key twice
// in one object, nesting past maxStatsDepth) and where the JSON is not
// valid; parseStats then asks encoding/json, which decides both.
func scanStats(s string) (*decodedStats, bool) {
	p := statsScanner{s: s}
	d := &decodedStats{}
	var keys []string
	ok := p.object(func(key string) bool {
		if contains(keys, key) {
			return false
		}
		keys = append(keys, key)
		switch key {
		case "numRecords":
			if p.lit("null") {
				d.numRecords = nil
				return true
			}
			num, ok := p.number()
			if !ok {
				return false
			}
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				return false
			}
			d.numRecords = &n
			return true
		case "tightBounds":
			switch {
			case p.lit("null"):
				d.tightBounds = nil
			case p.lit("true"):
				t := true
				d.tightBounds = &t
			case p.lit("false"):
				f := false
				d.tightBounds = &f
			default:
				return false
			}
			return true
		case "minValues", "maxValues", "nullCount":
			sec := secMin
			switch key {
			case "maxValues":
				sec = secMax
			case "nullCount":
				sec = secNulls
			}
			if p.lit("null") {
				return true
			}
			if p.peek() != '{' {
				return false
			}
			return p.columns(d, sec, "", 0)
		}
		for _, k := range []string{"numRecords", "tightBounds", "minValues", "maxValues", "nullCount"} {
			if strings.EqualFold(k, key) {
				return false // encoding/json matches field names without case
			}
		}
		return p.skip(0)
	})
	return d, ok
}

func contains(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

type statsScanner struct {
	s string
	i int
}

func (p *statsScanner) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *statsScanner) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// lit consumes the literal word if it comes next.
func (p *statsScanner) lit(word string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], word) {
		p.i += len(word)
		return true
	}
	return false
}

// object scans an object, calling member for each key with the scanner at
// its value, which member consumes.
func (p *statsScanner) object(member func(key string) bool) bool {
	if p.peek() != '{' {
		return false
	}
	p.i++
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		key, ok := p.str()
		if !ok || p.peek() != ':' {
			return false
		}
		p.i++
		p.space()
		if !member(key) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// columns scans an object of per-column statistics: objects nest (struct
// fields), anything else is a leaf value.
func (p *statsScanner) columns(d *decodedStats, sec int, prefix string, depth int) bool {
	if depth >= maxStatsDepth {
		return false
	}
	var keys []string
	return p.object(func(key string) bool {
		if contains(keys, key) {
			return false
		}
		keys = append(keys, key)
		name := join(prefix, key)
		if p.peek() == '{' {
			return p.columns(d, sec, name, depth+1)
		}
		start := p.i
		if !p.skip(depth + 1) {
			return false
		}
		d.entries = append(d.entries, statEntry{section: sec, name: name, raw: p.s[start:p.i]})
		return true
	})
}

// str scans a string without escapes or bytes outside ASCII and returns
// its contents.
func (p *statsScanner) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.i + 1
	for j := start; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '"':
			p.i = j + 1
			return p.s[start:j], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", false
		}
	}
	return "", false
}

// number scans a JSON number and returns its text.
func (p *statsScanner) number() (string, bool) {
	p.space()
	s, i := p.s, p.i
	start := i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	p.i = i
	return s[start:i], true
}

// skip scans any value.
func (p *statsScanner) skip(depth int) bool {
	if depth >= maxStatsDepth {
		return false
	}
	switch c := p.peek(); {
	case c == '{':
		var keys []string
		return p.object(func(key string) bool {
			if contains(keys, key) {
				return false
			}
			keys = append(keys, key)
			return p.skip(depth + 1)
		})
	case c == '[':
		p.i++
		if p.peek() == ']' {
			p.i++
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		_, ok := p.number()
		return ok
	}
	return p.lit("true") || p.lit("false") || p.lit("null")
}
