package sql

import (
	"strings"
	"testing"
	_ "time/tzdata" // zone names resolve without the system database

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/scand/scand/scanner/filter"
)

// TestShapesAgreeWithBind: the parser's DATE and TIMESTAMP shape checks
// accept what Bind converts and refuse what it refuses, so that the two
// grammars cannot drift apart unnoticed.
func TestShapesAgreeWithBind(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
	}, nil)
	texts := []string{
		"2026-01-31", "2024-02-29", "2026-02-29", "2026-13-01", "2026-1-31", " 2026-01-31 ",
		"2026-01-31 12:00:00", "2026-01-31T12:00:00", "2026-01-31 12:00", "2026-01-31 1:00:00",
		"2026-01-31 24:00:00", "2026-01-31 12:60:00", "2026-01-31 12:00:60",
		"2026-01-31 12:00:00.5", "2026-01-31 12:00:00.123456789", "2026-01-31 12:00:00.1234567891",
		"2026-01-31 12:00:00.1234567890", "2026-01-31 12:00:00.", "2026-01-31 12:00.5",
		"2026-01-31 12:00:00Z", "2026-01-31 12:00:00z", "2026-01-31 12:00:00 Z", "2026-01-31Z",
		"2026-01-31 12:00:00+02:00", "2026-01-31 12:00:00-0530", "2026-01-31 12:00:00+02", "2026-01-31 12:00:00+2",
		"2026-01-31 12:00:00+24:00", "2026-01-31 12:00:00+02:60", "2026-01-31 12:00:00 +02:00",
		"2026-01-31 12:00:00 Europe/Paris", "2026-01-31 12:00:00Europe/Paris", "2026-01-31 Europe/Paris",
		"2026-01-31 12:00:00 UTC", "2026-01-31 12:00:00 Etc/GMT+3", "2026-01-31 12:00:00 Europe/Paris!",
	}
	for _, text := range texts {
		for _, c := range []struct {
			kw, col string
			valid   func(string) bool
		}{{"DATE", "d", validDate}, {"TIMESTAMP", "t", validTimestamp}} {
			e := &filter.Compare{Op: filter.Eq, Left: &filter.Column{Path: []string{c.col}},
				Right: &filter.Literal{Value: typed(c.kw, text)}}
			_, err := filter.Bind(e, schema)
			if parsed := c.valid(text); parsed != (err == nil) {
				t.Errorf("%s '%s': the parser accepts it: %v; Bind: %v", c.kw, text, parsed, err)
			}
		}
	}
}

func typed(kw, text string) any {
	if kw == "DATE" {
		return filter.Date(text)
	}
	return filter.Timestamp(text)
}

// TestQuotingHints: a value written as other languages write strings
// binds to no column, and the message says how SQL writes strings.
func TestQuotingHints(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "city", Type: arrow.BinaryTypes.String}}, nil)
	for _, tc := range []struct{ text, want string }{
		{`city = "Boston"`, `unknown column "Boston" in filter (string literals take single quotes: 'Boston'); available columns: city`},
		{`city <> Boston`, `unknown column "Boston" in filter (string literals take single quotes: 'Boston'); available columns: city`},
		{`city = "O'Hare"`, `(string literals take single quotes: 'O''Hare')`},
		{`twon = 'Boston'`, `unknown column "twon" in filter; available columns: city`},
	} {
		e, err := Parse(tc.text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.text, err)
		}
		_, err = filter.Bind(e, schema)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Bind(%q) = %v, want ...%s...", tc.text, err, tc.want)
		}
	}
}
