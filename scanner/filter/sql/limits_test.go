package sql

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/scand/scand/scanner/filter"
)

// nested wraps inner n times: open + inner + close.
func nested(n int, open, inner, close string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// inList is "x IN (0, 1, ..., n-1)".
func inList(n int) string {
	var b strings.Builder
	b.WriteString("x IN (")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(")")
	return b.String()
}

func TestLimits(t *testing.T) {
	chain := strings.Repeat("a = 1 AND ", filter.MaxTextBytes/10-1) + "a = 1"
	full := chain + strings.Repeat(" ", filter.MaxTextBytes-len(chain))
	cases := []struct {
		name string
		text string
		pos  int // of the refusal; -1 when the text is accepted
	}{
		{"text at the limit", full, -1},
		{"text one byte over", full + " ", 0},
		{"100 parentheses", nested(100, "(", "a = 1", ")"), -1},
		{"101 parentheses", nested(101, "(", "a = 1", ")"), 100},
		{"100 parentheses around a column", nested(100, "(", "a", ")"), -1},
		{"a million parentheses", nested(filter.MaxTextBytes/2-1, "(", "a", ")"), 100},
		{"100 NOTs", strings.Repeat("NOT ", 100) + "a", -1},
		{"101 NOTs", strings.Repeat("NOT ", 101) + "a", 400},
		{"100 NOTs over a comparison", strings.Repeat("NOT ", 100) + "a = 1", 0},
		{"250k NOTs", strings.Repeat("NOT ", 250_000) + "a", 400},
		{"100 rendered NOTs", nested(100, "(NOT ", "a", ")"), -1},
		{"101 rendered NOTs", nested(101, "(NOT ", "a", ")"), 500},
		{"100 levels of AND", nested(99, "(a = 1 AND ", "a = 1", ")"), -1},
		{"101 levels of AND", nested(100, "(a = 1 AND ", "a = 1", ")"), 0},
		{"alternating OR and AND", nested(99, "(a = 1 OR b = 2 AND ", "c", ")"), 0},
		{"IN at the limit", inList(filter.MaxInValues), -1},
		{"IN one over", inList(filter.MaxInValues + 1), len(inList(filter.MaxInValues)) - 1 + len(", ")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse(tc.text)
			if tc.pos < 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				roundTrip(t, e)
				return
			}
			if !errors.Is(err, filter.ErrTooComplex) {
				t.Fatalf("got %v, want ErrTooComplex", err)
			}
			var fe *filter.Error
			if errors.As(err, &fe) {
				t.Fatal("a limit must not also be a *filter.Error: the server maps the two to different codes")
			}
			if tc.pos > 0 && !strings.Contains(err.Error(), "at position "+strconv.Itoa(tc.pos)+":") {
				t.Fatalf("got %v, want position %d", err, tc.pos)
			}
			if !strings.Contains(err.Error(), "filter.Max") {
				t.Fatalf("%v does not name the limit", err)
			}
		})
	}
}

// roundTrip checks that e renders to text that parses back to e; a text
// the rendering makes too long is skipped, that limit is on bytes.
func roundTrip(t *testing.T, e filter.Expr) {
	t.Helper()
	s := e.String()
	if len(s) > filter.MaxTextBytes {
		return
	}
	back, err := Parse(s)
	if err != nil {
		t.Fatalf("rendered text does not parse: %v", err)
	}
	if !reflect.DeepEqual(back, e) {
		t.Fatal("rendered text parses to another tree")
	}
}

func TestChainIsFlat(t *testing.T) {
	const n = 100_000
	e, err := Parse(strings.Repeat("a = 1 OR ", n-1) + "a = 1")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(e.(*filter.Or).Terms); got != n {
		t.Fatalf("got %d terms, want %d", got, n)
	}
}

func TestInLimitMessage(t *testing.T) {
	_, err := Parse(inList(filter.MaxInValues + 1))
	if err == nil || !strings.Contains(err.Error(), "IN list longer than filter.MaxInValues (100000 values)") {
		t.Fatalf("got %v", err)
	}
}
