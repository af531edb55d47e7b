package filter

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// newBound makes a Predicate of a tree built by hand in its bound form
// (every literal an arrow scalar of its column's type), for tests that
// must not depend on Bind.
func newBound(e Expr) *Predicate {
	return &Predicate{expr: e, columns: Columns(e)}
}

func col(name string) *Column        { return &Column{Path: []string{name}} }
func lit(s scalar.Scalar) *Literal   { return &Literal{Value: s} }
func i64(v int64) scalar.Scalar      { return scalar.NewInt64Scalar(v) }
func f64(v float64) scalar.Scalar    { return scalar.NewFloat64Scalar(v) }
func str(v string) scalar.Scalar     { return scalar.NewStringScalar(v) }
func boolean(v bool) scalar.Scalar   { return scalar.NewBooleanScalar(v) }
func null(t arrow.DataType) *Literal { return lit(scalar.MakeNullScalar(t)) }
func cmpx(c string, op CompareOp, v scalar.Scalar) *Compare {
	return &Compare{Op: op, Left: col(c), Right: lit(v)}
}

var (
	int64T  = arrow.PrimitiveTypes.Int64
	floatT  = arrow.PrimitiveTypes.Float64
	stringT = arrow.BinaryTypes.String
)

// shapes of one column's statistics, for x an int64 column.
var (
	full      = ColumnStats{Min: i64(10), Max: i64(20), Nulls: 0, Rows: 100}
	someNulls = ColumnStats{Min: i64(10), Max: i64(20), Nulls: 5, Rows: 100}
	allNulls  = ColumnStats{Nulls: 100, Rows: 100}
	noMin     = ColumnStats{Max: i64(20), Nulls: 0, Rows: 100}
	noMax     = ColumnStats{Min: i64(10), Nulls: 0, Rows: 100}
	single    = ColumnStats{Min: i64(15), Max: i64(15), Nulls: 0, Rows: 100}
	countsOff = ColumnStats{Min: i64(10), Max: i64(20), Nulls: -1, Rows: -1}
	noRows    = ColumnStats{Nulls: 0, Rows: 0}
)

func TestMayMatchCompare(t *testing.T) {
	cases := []struct {
		op    CompareOp
		v     int64
		stats ColumnStats
		want  bool
	}{
		{Lt, 10, full, false}, {Lt, 11, full, true}, {Lt, 5, noMin, true}, {Lt, 10, allNulls, false},
		{Le, 9, full, false}, {Le, 10, full, true}, {Le, 9, noMin, true},
		{Gt, 20, full, false}, {Gt, 19, full, true}, {Gt, 30, noMax, true}, {Gt, 30, countsOff, false},
		{Ge, 21, full, false}, {Ge, 20, full, true}, {Ge, 21, noMax, true},
		{Eq, 9, full, false}, {Eq, 21, full, false}, {Eq, 10, full, true}, {Eq, 15, full, true},
		{Eq, 15, single, true}, {Eq, 16, single, false}, {Eq, 15, allNulls, false},
		{Ne, 15, single, false}, {Ne, 16, single, true}, {Ne, 15, full, true},
		{Ne, 15, ColumnStats{Min: i64(15), Max: i64(15), Nulls: 3, Rows: 10}, false},
		{Eq, 15, noRows, false}, {Ne, 15, noRows, false},
		{Eq, 100, Unknown, true},
	}
	for _, c := range cases {
		p := newBound(cmpx("x", c.op, i64(c.v)))
		if got := p.MayMatch(StatsMap{"x": c.stats}); got != c.want {
			t.Errorf("x %s %d on %+v: MayMatch = %v, want %v", c.op, c.v, c.stats, got, c.want)
		}
		// The flipped form says the same: c op' x.
		flipped := newBound(&Compare{Op: c.op.Flip(), Left: lit(i64(c.v)), Right: col("x")})
		if got := flipped.MayMatch(StatsMap{"x": c.stats}); got != c.want {
			t.Errorf("%d %s x on %+v: MayMatch = %v, want %v", c.v, c.op.Flip(), c.stats, got, c.want)
		}
	}
	// Missing statistics, a missing column, a NULL literal, two columns.
	checks := []struct {
		name  string
		e     Expr
		stats StatsSource
		want  bool
	}{
		{"no stats for column", cmpx("x", Eq, i64(1)), StatsMap{}, true},
		{"nil source", cmpx("x", Eq, i64(1)), nil, true},
		{"x = NULL", &Compare{Op: Eq, Left: col("x"), Right: null(int64T)}, StatsMap{}, false},
		{"x = y", &Compare{Op: Eq, Left: col("x"), Right: col("y")}, StatsMap{"x": full}, true},
		{"type mismatch: no bound", cmpx("x", Eq, scalar.NewInt32Scalar(1)), StatsMap{"x": full}, true},
	}
	for _, c := range checks {
		if got := newBound(c.e).MayMatch(c.stats); got != c.want {
			t.Errorf("%s: MayMatch = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMayMatchNaN(t *testing.T) {
	withNaN := ColumnStats{Min: f64(1), Max: f64(2), Nulls: 0, Rows: 10, NaN: true}
	noNaN := ColumnStats{Min: f64(1), Max: f64(2), Nulls: 0, Rows: 10}
	onlyNaN := ColumnStats{Nulls: 0, Rows: 10, NaN: true}
	nan := math.NaN()
	cases := []struct {
		name  string
		e     Expr
		stats ColumnStats
		want  bool
	}{
		{"f > 5, NaN rows", cmpx("f", Gt, f64(5)), withNaN, false},
		{"f != 1.5, NaN rows", cmpx("f", Ne, f64(1.5)), withNaN, true},
		{"f != 1 on [1,1] with NaN", cmpx("f", Ne, f64(1)), ColumnStats{Min: f64(1), Max: f64(1), Nulls: 0, Rows: 3, NaN: true}, true},
		{"f != 1 on [1,1] without NaN", cmpx("f", Ne, f64(1)), ColumnStats{Min: f64(1), Max: f64(1), Nulls: 0, Rows: 3}, false},
		{"NOT f < 5, NaN rows", &Not{cmpx("f", Lt, f64(5))}, withNaN, true},
		{"NOT f < 5, no NaN", &Not{cmpx("f", Lt, f64(5))}, noNaN, false},
		{"f = NaN", cmpx("f", Eq, f64(nan)), withNaN, false},
		{"f < NaN", cmpx("f", Lt, f64(nan)), withNaN, false},
		{"f != NaN", cmpx("f", Ne, f64(nan)), noNaN, true},
		{"NOT f = NaN", &Not{cmpx("f", Eq, f64(nan))}, noNaN, true},
		{"only NaN, no bounds: f > 5 unknown", cmpx("f", Gt, f64(5)), onlyNaN, true},
		{"-0 = 0", cmpx("f", Eq, f64(0)), ColumnStats{Min: f64(math.Copysign(0, -1)), Max: f64(math.Copysign(0, -1)), Nulls: 0, Rows: 1}, true},
		{"f IN (NaN), NaN rows", &In{Term: col("f"), Values: []*Literal{lit(f64(nan))}}, withNaN, true},
		{"f IN (NaN), no NaN", &In{Term: col("f"), Values: []*Literal{lit(f64(nan))}}, noNaN, false},
		{"f NOT IN (1, 2) on [1,2], NaN rows", &In{Term: col("f"), Values: []*Literal{lit(f64(1)), lit(f64(2))}, Negated: true}, withNaN, true},
	}
	for _, c := range cases {
		if got := newBound(c.e).MayMatch(StatsMap{"f": c.stats}); got != c.want {
			t.Errorf("%s: MayMatch = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMayMatchLogic(t *testing.T) {
	st := StatsMap{"x": full, "y": someNulls, "n": allNulls, "b": {Min: boolean(false), Max: boolean(false), Nulls: 0, Rows: 10}}
	no, yes := cmpx("x", Gt, i64(50)), cmpx("x", Lt, i64(15))
	cases := []struct {
		name string
		e    Expr
		want bool
	}{
		{"AND with an impossible term", &And{[]Expr{yes, no}}, false},
		{"AND of possible terms", &And{[]Expr{yes, cmpx("y", Gt, i64(12))}}, true},
		{"OR with a possible term", &Or{[]Expr{no, yes}}, true},
		{"OR of impossible terms", &Or{[]Expr{no, cmpx("x", Eq, i64(0))}}, false},
		{"NOT impossible", &Not{no}, true},
		{"NOT always true", &Not{cmpx("x", Le, i64(20))}, false},
		{"NOT always true, nulls", &Not{cmpx("y", Le, i64(20))}, false},
		{"NOT (all-null column compare) is unknown", &Not{cmpx("n", Eq, i64(1))}, false},
		{"empty AND", &And{}, true},
		{"empty OR", &Or{}, false},
		{"x IS NULL, no nulls", &IsNull{Term: col("x")}, false},
		{"y IS NULL", &IsNull{Term: col("y")}, true},
		{"n IS NOT NULL", &IsNull{Term: col("n"), Negated: true}, false},
		{"n IS NULL", &IsNull{Term: col("n")}, true},
		{"x IS NOT NULL", &IsNull{Term: col("x"), Negated: true}, true},
		{"(n = 1) IS NULL", &IsNull{Term: cmpx("n", Eq, i64(1))}, true},
		{"(x < 15) IS NULL", &IsNull{Term: yes}, false},
		{"unknown nulls: IS NULL", &IsNull{Term: col("x")}, true},
		{"bool column all false", col("b"), false},
		{"NOT bool column all false", &Not{col("b")}, true},
		{"literal TRUE", lit(boolean(true)), true},
		{"literal FALSE", lit(boolean(false)), false},
		{"literal NULL", null(arrow.FixedWidthTypes.Boolean), false},
		{"NOT NULL literal", &Not{null(arrow.FixedWidthTypes.Boolean)}, false},
		{"NULL OR x < 15", &Or{[]Expr{null(arrow.FixedWidthTypes.Boolean), yes}}, true},
	}
	for _, c := range cases {
		src := StatsSource(st)
		if c.name == "unknown nulls: IS NULL" {
			src = StatsMap{"x": countsOff}
		}
		if got := newBound(c.e).MayMatch(src); got != c.want {
			t.Errorf("%s: MayMatch = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMayMatchIn(t *testing.T) {
	in := func(neg bool, sem NullSemantics, vals ...*Literal) *In {
		return &In{Term: col("x"), Values: vals, Negated: neg, Nulls: sem}
	}
	l := func(v int64) *Literal { return lit(i64(v)) }
	n := null(int64T)
	cases := []struct {
		name  string
		e     Expr
		stats ColumnStats
		want  bool
	}{
		{"IN outside", in(false, SQLNulls, l(1), l(30)), full, false},
		{"IN one inside", in(false, SQLNulls, l(1), l(12)), full, true},
		{"IN bound", in(false, SQLNulls, l(20)), full, true},
		{"IN empty", in(false, SQLNulls), full, false},
		{"IN unknown bounds", in(false, SQLNulls, l(1)), countsOff.withBounds(nil, nil), true},
		{"NOT IN, single value listed", in(true, SQLNulls, l(15)), single, false},
		{"NOT IN, single value not listed", in(true, SQLNulls, l(16)), single, true},
		{"NOT IN outside", in(true, SQLNulls, l(1)), full, true},
		{"SQL: NOT IN with NULL never true", in(true, SQLNulls, l(1), n), full, false},
		{"Arrow: NOT IN with NULL true", in(true, ArrowNulls, l(1), n), full, true},
		{"SQL: NULL operand, IN (NULL)", in(false, SQLNulls, n), allNulls, false},
		{"Arrow: NULL operand, IN (NULL)", in(false, ArrowNulls, n), allNulls, true},
		{"Arrow: NULL operand, NOT IN (1)", in(true, ArrowNulls, l(1)), allNulls, true},
		{"SQL: NULL operand, NOT IN (1)", in(true, SQLNulls, l(1)), allNulls, false},
		{"NULL operand, NOT IN ()", in(true, SQLNulls), allNulls, true},
	}
	for _, c := range cases {
		if got := newBound(c.e).MayMatch(StatsMap{"x": c.stats}); got != c.want {
			t.Errorf("%s: MayMatch = %v, want %v", c.name, got, c.want)
		}
	}
}

func (s ColumnStats) withBounds(lo, hi scalar.Scalar) ColumnStats {
	s.Min, s.Max = lo, hi
	return s
}

func TestMayMatchPrefix(t *testing.T) {
	strs := func(lo, hi string) ColumnStats { return ColumnStats{Min: str(lo), Max: str(hi), Nulls: 0, Rows: 10} }
	like := func(p string, neg bool) Expr { return &Like{Term: col("s"), Pattern: p, Negated: neg} }
	sw := func(p string) Expr { return &StartsWith{Term: col("s"), Prefix: p} }
	cases := []struct {
		name  string
		e     Expr
		stats ColumnStats
		want  bool
	}{
		{"prefix inside", sw("b"), strs("apple", "cherry"), true},
		{"prefix above", sw("d"), strs("apple", "cherry"), false},
		{"prefix below", sw("a"), strs("banana", "cherry"), false},
		{"prefix = min's prefix", sw("ban"), strs("banana", "cherry"), true},
		{"max is prefix's successor", sw("ab"), strs("aa", "ac"), true},
		{"min is prefix's successor", sw("ab"), strs("ac", "az"), false},
		{"truncated max below prefix extension", sw("abc"), strs("a", "abc"), true},
		{"truncated min still a bound", sw("abd"), strs("abc", "abz"), true},
		{"0xff prefix", sw("\xff"), strs("\xfe", "\xff\x01"), true},
		{"0xff prefix, all below", sw("\xff"), strs("a", "\xfe\xff"), false},
		{"empty prefix", sw(""), strs("a", "b"), true},
		{"NOT LIKE 'a%' all start with a", like("a%", true), strs("aa", "az"), false},
		{"NOT LIKE 'a%_' may not match", like("a%_", true), strs("aa", "az"), true},
		{"NOT LIKE '%' never true", like("%", true), strs("aa", "az"), false},
		{"LIKE 'q%' outside", like("q%", false), strs("aa", "az"), false},
		{"LIKE 'a_c' inside", like("a_c", false), strs("aa", "az"), true},
		{"LIKE 'b_c' outside", like("b_c", false), strs("aa", "az"), false},
		{"LIKE escaped % is literal", like(`a\%%`, false), strs("ab", "az"), false},
		{"LIKE escaped % inside", like(`a\%%`, false), strs("a", "az"), true},
		{"LIKE no wildcard", like("abc", false), strs("abd", "abz"), false},
		{"LIKE trailing backslash", like(`zz\`, false), strs("abd", "abz"), false},
		{"LIKE on all nulls", like("a%", false), allNulls, false},
		{"LIKE without bounds", like("a%", false), ColumnStats{Nulls: 0, Rows: 5}, true},
	}
	for _, c := range cases {
		if got := newBound(c.e).MayMatch(StatsMap{"s": c.stats}); got != c.want {
			t.Errorf("%s: MayMatch = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLikePrefix(t *testing.T) {
	cases := []struct {
		pattern, prefix string
		pure            bool
	}{
		{"abc%", "abc", true}, {"abc%%", "abc", true}, {"abc", "abc", false}, {"a_c", "a", false},
		{"%a", "", false}, {`a\_b%`, "a_b", true}, {`a\\%`, `a\`, true}, {`ab\`, "ab", false}, {"", "", false},
	}
	for _, c := range cases {
		p, pure := likePrefix(c.pattern)
		if p != c.prefix || pure != c.pure {
			t.Errorf("likePrefix(%q) = %q, %v; want %q, %v", c.pattern, p, pure, c.prefix, c.pure)
		}
	}
}
