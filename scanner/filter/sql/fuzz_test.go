package sql

import (
	"strings"
	"testing"

	"github.com/scand/scand/scanner/filter"
)

// FuzzParse: Parse never panics, and what it accepts renders (String) to
// text that parses again and renders the same. Run it with
//
//	go test -run=^$ -fuzz=FuzzParse -fuzztime=60s ./scanner/filter/sql
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.text)
	}
	for _, tc := range errorCases {
		f.Add(tc.text)
	}
	f.Add(nested(100, "(NOT ", "a", ")"))
	f.Add(nested(101, "(", "a = 1", ")"))
	f.Fuzz(func(t *testing.T, text string) {
		e, err := Parse(text)
		if err != nil {
			return
		}
		s := e.String()
		if len(s) > filter.MaxTextBytes {
			return // rendering adds parentheses and spaces: longer, not wrong
		}
		back, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %s, which does not parse: %v", text, s, err)
		}
		if again := back.String(); again != s {
			t.Fatalf("Parse(%q) renders %s, which parses to %s", text, s, again)
		}
	})
}

// BenchmarkParseIn100k parses an IN list at filter.MaxInValues, the
// largest list a client may send.
func BenchmarkParseIn100k(b *testing.B) {
	text := inList(filter.MaxInValues)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseChain parses a 100k-term AND chain.
func BenchmarkParseChain(b *testing.B) {
	text := strings.Repeat("a = 1 AND ", 99_999) + "a = 1"
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}
