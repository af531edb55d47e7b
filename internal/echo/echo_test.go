package echo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"short", "a/b.parquet", `"a/b.parquet"`},
		{"at the limit", strings.Repeat("x", MaxName), `"` + strings.Repeat("x", MaxName) + `"`},
		{"over", strings.Repeat("x", MaxName+10), `"` + strings.Repeat("x", MaxName) + `"... (10 more bytes)`},
		// A rune cut in two is dropped, not sent as invalid UTF-8.
		{"rune cut", strings.Repeat("x", MaxName-1) + "é", `"` + strings.Repeat("x", MaxName-1) + `"... (1 more bytes)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Quote(tc.in)
			if got != tc.want {
				t.Errorf("Quote = %.40q...(%d bytes), want %d bytes", got, len(got), len(tc.want))
			}
			if !utf8.ValidString(got) {
				t.Error("not UTF-8")
			}
		})
	}
}

func TestCut(t *testing.T) {
	if got := Cut("abc", 3); got != "abc" {
		t.Errorf("Cut = %q", got)
	}
	if got := Cut("abcdef", 3); got != "abc... (3 more bytes)" {
		t.Errorf("Cut = %q", got)
	}
}
