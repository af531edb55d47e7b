package sql

import (
	"errors"
	"strings"
	"testing"

	"github.com/scand/scand/scanner/filter"
)

// errorCases are texts Parse refuses with a *filter.Error: where, and
// what the message must say.
var errorCases = []struct {
	text string
	pos  int
	msg  string
}{
	{"", 0, "expected a condition, found end of input"},
	{"  -- only a comment", 19, "expected a condition, found end of input"},
	{"a = 1 AND", 9, `expected a condition after "AND", found end of input`},
	{"a = 1 OR )", 9, `expected a condition after "OR", found ")"`},
	{"NOT", 3, `expected a condition after "NOT", found end of input`},
	{"fare > 10 AND x =", 17, `expected a value after "=", found end of input`},
	{"a = = 1", 4, `expected a value after "=", found "="`},
	{"a == 1", 3, `expected a value after "=", found "=" (use = to compare: SQL has no ==)`},
	{"a = 1 b", 6, `expected AND, OR or end of input, found "b"`},
	{"a = 1)", 5, `expected AND, OR or end of input, found ")"`},
	{"(a = 1", 6, `expected AND, OR or ")" to close the "(" at position 0, found end of input`},
	{"x AND (a = 1 b)", 13, `to close the "(" at position 6, found "b"`},
	{"a b", 2, `expected an operator (=, !=, <>, <, <=, >, >=, IN, NOT IN, LIKE, NOT LIKE, BETWEEN, NOT BETWEEN, IS) after "a", found "b"`},
	{"5", 1, `expected an operator (`},
	{"'x' AND a", 4, `after 'x', found "AND"`},
	{"NULL", 4, `after "NULL", found end of input`},
	{"a = 1 = 2", 6, `expected AND, OR or end of input, found "="`},
	{"WHERE a = 1", 6, "(leave out WHERE: the filter is the condition alone)"},
	{"a = 1 AND in = 2", 10, `expected a condition after "AND", found "in" (a column named in must be double-quoted: "in")`},
	{"a = and", 4, `expected a value after "=", found "and"`},
	{"date = DATE '2026-01-01'", 5, `expected a quoted value after date, like DATE '2026-01-31', found "=" (a column named date must be double-quoted: "date")`},
	{"t = TIMESTAMP 5", 14, `like TIMESTAMP '2026-01-31 12:00:00', found "5"`},
	{"a.", 2, `expected a field name after ".", found end of input`},
	{"a.5 = 1", 1, `after "a", found ".5"`},
	{"'abc", 0, "unterminated string starting at position 0"},
	{"a = 1 AND b = 'x", 14, "unterminated string starting at position 14"},
	{"a = 'it''s", 4, "unterminated string starting at position 4"},
	{`"abc = 1`, 0, "unterminated quoted identifier starting at position 0"},
	{`"" = 1`, 0, "empty quoted identifier"},
	{"a = 1.2.3", 4, `malformed number "1.2.3"`},
	{"a = 12abc", 4, `malformed number "12abc"`},
	{"a = 1e", 4, `malformed number "1e": expected digits after the exponent`},
	{"a = 1e+", 4, `expected digits after the exponent`},
	{"a ! 1", 2, `unexpected character "!": write != or <>`},
	{"a = 1 ; DROP", 6, `unexpected character ';'`},
	{"prix_€ = 1", 5, `unexpected character '€'`},
	{"a = \u00a01", 4, `unexpected character '\u00a0'`},
	{"a = '\xff'", 5, "invalid UTF-8"},
	{"a = -b", 5, `expected a number after "-" (a minus applies to numbers only), found "b"`},
	{"a = --3", 7, `expected a value after "=", found end of input`},
	{"a = - -3", 6, `expected a number after "-"`},
	{"a IN 1", 5, `expected "(" after IN, found "1"`},
	{"a IN ()", 6, `expected a value in the IN list after "(", found ")"`},
	{"a IN (1, b)", 9, `(a literal: IN lists cannot hold columns), found "b"`},
	{"a IN (1 2)", 8, `expected "," or ")" in the IN list opened at position 5, found "2"`},
	{"a IN (1,", 8, `expected a value in the IN list after ",", found end of input`},
	{"a NOT = 1", 6, `expected IN, LIKE or BETWEEN after NOT, found "="`},
	{"a BETWEEN 1", 11, "expected AND between the two bounds of BETWEEN, found end of input"},
	{"a BETWEEN 1 OR 2", 12, `expected AND between the two bounds of BETWEEN, found "OR"`},
	{"a BETWEEN 1 AND", 15, `expected a value after "AND", found end of input`},
	{"a IS 1", 5, `expected NULL or NOT NULL after IS, found "1"`},
	{"a IS NOT TRUE", 9, `expected NULL after IS NOT, found "TRUE"`},
	{"a LIKE b", 7, `expected a quoted pattern after LIKE, found "b"`},
	{`a LIKE 'x\'`, 7, `ends with a lone backslash`},
	{`a LIKE 'x%' ESCAPE '!'`, 12, "ESCAPE is not supported"},
	{"lower(a) = 'x'", 0, "unknown function lower(); the supported functions are: starts_with(column, 'prefix')"},
	{"a = upper(b)", 4, "unknown function upper()"},
	{"a = starts_with(b, 'x')", 4, "starts_with(...) is a condition, not a value"},
	{"starts_with(a)", 13, `expected "," after the first argument of starts_with, found ")"`},
	{"starts_with(a, b)", 15, `expected a quoted prefix as the second argument of starts_with, found "b"`},
	{"starts_with(a, 'x', 'y')", 18, `expected ")" to close starts_with(, found ","`},
	{"starts_with(, 'x')", 12, `expected a column as the first argument of starts_with after "(", found ","`},
	{"d = DATE '2026-02-30'", 9, "invalid DATE '2026-02-30': expected 'YYYY-MM-DD'"},
	{"d = DATE '2026-1-31'", 9, "invalid DATE"},
	{"d = DATE '26-01-31'", 9, "invalid DATE"},
	{"t = TIMESTAMP '2026-01-3'", 14, "invalid TIMESTAMP '2026-01-3': expected 'YYYY-MM-DD HH:MM:SS'"},
	{"t = TIMESTAMP '2026-01-31 1:00'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 24:00:00'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 12:00:00.'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 12:00:00.1234567891'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 12:00:00+2'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 12:00:00+02:60'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 12:00:00 Europe/Paris?'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 12:00:60'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 12:00:00+0260'", 14, "invalid TIMESTAMP"},
	{"t = TIMESTAMP '2026-01-31 12:00:00 Europe/Paris!'", 14, "invalid TIMESTAMP"},
	{"(a = 1) = 2", 8, `expected AND, OR or end of input, found "="`},
	{"x = '" + strings.Repeat("y", 100), 4, "unterminated string"},
	{"a = 1 " + strings.Repeat("z", 100), 6, `found "` + strings.Repeat("z", 40) + `..."`},
}

func TestErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.text, func(t *testing.T) {
			_, err := Parse(tc.text)
			var fe *filter.Error
			if !errors.As(err, &fe) {
				t.Fatalf("Parse(%q) = %v, want a *filter.Error", tc.text, err)
			}
			if fe.Pos != tc.pos || !strings.Contains(fe.Msg, tc.msg) {
				t.Fatalf("Parse(%q):\n got %d: %s\nwant %d: ...%s...", tc.text, fe.Pos, fe.Msg, tc.pos, tc.msg)
			}
			if errors.Is(err, filter.ErrTooComplex) {
				t.Fatal("a syntax error must not be ErrTooComplex")
			}
		})
	}
}

// TestErrorText pins the whole rendering of one error, as a user sees it.
func TestErrorText(t *testing.T) {
	_, err := Parse("fare > 10 AND x =")
	const want = `filter: at position 17: expected a value after "=", found end of input`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}
