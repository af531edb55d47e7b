package filter

import (
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var likeCases = []struct {
	pattern, s string
	want       bool
}{
	{"", "", true},
	{"", "a", false},
	{"%", "", true},
	{"%", "anything", true},
	{"%%", "", true},
	{"_", "", false},
	{"_", "a", true},
	{"_", "ab", false},
	{"_", "é", true}, // one character, two bytes
	{"__", "é", false},
	{"_", "日", true},
	{"a_c", "a日c", true},
	{"abc", "abc", true},
	{"abc", "abcd", false},
	{"abc", "ABC", false}, // case-sensitive
	{"a%", "abc", true},
	{"a%", "ba", false},
	{"%c", "abc", true},
	{"%c", "abcd", false},
	{"%b%", "abc", true},
	{"%b%", "ac", false},
	{"a%c", "ac", true},
	{"a%c", "abbbc", true},
	{"a%c", "abcb", false},
	{"a%b%c", "aXbYc", true},
	{"a%b%c", "acb", false},
	{"%a%a%", "aa", true},
	{"%a%a%", "a", false},
	{"%ab_", "abxabyz", false},
	{"%ab_", "abxaby", true},
	{"a%%b", "ab", true},
	{"_%_", "é", false},
	{"_%_", "éé", true},
	{"%é", "café", true},
	{`100\%`, "100%", true},
	{`100\%`, "1000", false},
	{`a\_b`, "a_b", true},
	{`a\_b`, "axb", false},
	{`a\\b`, `a\b`, true},
	{`\a`, "a", true},
	{"%xyz%", "xxyxyz", true},
	{"_b%", "ab", true},
	{"%_", "", false},
	{"%__", "é", false},
	{"%__", "éa", true},
}

func TestLikeMatch(t *testing.T) {
	for _, c := range likeCases {
		p, err := compileLike(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := p.match([]byte(c.s), true); got != c.want {
			t.Errorf("%q LIKE %q = %v, want %v", c.s, c.pattern, got, c.want)
		}
		if got := p.matcher(true)([]byte(c.s)); got != c.want {
			t.Errorf("matcher: %q LIKE %q = %v, want %v", c.s, c.pattern, got, c.want)
		}
	}
}

// TestLikeAgainstRegexp checks the matcher against a regexp translation of
// the same patterns over many strings, to catch a shortcut in the greedy
// segment search.
func TestLikeAgainstRegexp(t *testing.T) {
	patterns := []string{"%a%b", "a%a", "%ab%ba%", "_a%", "%_a_%", "a%_", "%aa%a", "b%%a_", "%a_b%"}
	alphabet := []string{"a", "b", "é"}
	var strs []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		strs = append(strs, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+c, n-1)
		}
	}
	gen("", 5)
	for _, pat := range patterns {
		p, _ := compileLike(pat)
		re := regexp.MustCompile("^(?s:" + strings.NewReplacer("%", ".*", "_", ".").Replace(pat) + ")$")
		for _, s := range strs {
			if got, want := p.match([]byte(s), true), re.MatchString(s); got != want {
				t.Errorf("%q LIKE %q = %v, regexp says %v", s, pat, got, want)
			}
		}
	}
}

func TestLikeBinaryCountsBytes(t *testing.T) {
	p, _ := compileLike("_")
	if p.match([]byte("é"), false) {
		t.Error("binary: _ matched two bytes")
	}
	if !p.match([]byte{0xff}, false) || !p.match([]byte{0xff}, true) {
		t.Error("_ did not match an invalid byte as one character")
	}
}

func TestLikeEval(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, c := range []struct {
		dt   arrow.DataType
		data string
		e    Expr
		want string
	}{
		{arrow.BinaryTypes.String, `["apple", "banana", null, "", "app"]`, &Like{Term: x, Pattern: "app%"}, "TFNFT"},
		{arrow.BinaryTypes.String, `["apple", "banana", null, "", "app"]`, &Like{Term: x, Pattern: "app%", Negated: true}, "FTNTF"},
		{arrow.BinaryTypes.String, `["apple", "banana", null, "", "app"]`, &Like{Term: x, Pattern: "%an_n%"}, "FTNFF"},
		{arrow.BinaryTypes.String, `["apple", "banana", null, "", "app"]`, &Like{Term: x, Pattern: ""}, "FFNTF"},
		{arrow.BinaryTypes.LargeString, `["naïve", "naive"]`, &Like{Term: x, Pattern: "na_ve"}, "TT"},
		{arrow.BinaryTypes.StringView, `["a long string beyond twelve bytes", "short"]`, &Like{Term: x, Pattern: "%twelve%"}, "TF"},
		{arrow.BinaryTypes.Binary, `["YWJj", "w6k="]`, &Like{Term: x, Pattern: "__"}, "FT"}, // "abc", "é" as bytes
		{arrow.BinaryTypes.LargeBinary, `["YWJj", null]`, &Like{Term: x, Pattern: "a%"}, "TN"},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
			`["x1", "y1", null, "x2"]`, &Like{Term: x, Pattern: "x%"}, "TFNT"},
		{arrow.BinaryTypes.String, `["apple", "banana", null]`, &StartsWith{Term: x, Prefix: "ban"}, "FTN"},
		{arrow.BinaryTypes.String, `["apple", "banana", null]`, &StartsWith{Term: x, Prefix: ""}, "TTN"},
		{arrow.BinaryTypes.Binary, `["YWJj", "w6k="]`, &StartsWith{Term: x, Prefix: "ab"}, "TF"},
	} {
		rec := oneColumn(t, mem, c.dt, c.data)
		if got := evalTruth(t, rec, c.e); got != c.want {
			t.Errorf("%s on %s %s = %s, want %s", c.e, c.dt, c.data, got, c.want)
		}
		sliced := rec.NewSlice(1, rec.NumRows())
		if got := evalTruth(t, sliced, c.e); got != c.want[1:] {
			t.Errorf("sliced: %s on %s = %s, want %s", c.e, c.data, got, c.want[1:])
		}
		sliced.Release()
		rec.Release()
	}
}

// BenchmarkLike matches a pattern with a _ (the general matcher) over 64k
// strings; BenchmarkLikeContains the '%abc%' shortcut.
func BenchmarkLike(b *testing.B) {
	benchEval(b, &Like{Term: col("s"), Pattern: "user-0_1%@example.com"})
}

func BenchmarkLikeContains(b *testing.B) { benchEval(b, &Like{Term: col("s"), Pattern: "%999%"}) }

func BenchmarkStartsWith(b *testing.B) { benchEval(b, &StartsWith{Term: col("s"), Prefix: "user-01"}) }
