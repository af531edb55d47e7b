package filter

import (
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// bloomStats is statistics plus a membership test holding exactly the
// int64 values in set (a bloom filter without false positives).
type bloomStats struct {
	StatsMap
	set map[string][]int64
}

func (b bloomStats) MayContain(column string, v scalar.Scalar) bool {
	vals, ok := b.set[column]
	if !ok {
		return true
	}
	i, ok := v.(*scalar.Int64)
	return !ok || slices.Contains(vals, i.Value)
}

func TestMayMatchMembership(t *testing.T) {
	st := bloomStats{
		StatsMap: StatsMap{"x": full, "y": full, "f": {Min: f64(1), Max: f64(2), Nulls: 0, Rows: 10, NaN: true}},
		set:      map[string][]int64{"x": {12, 17}},
	}
	in := func(c string, negated bool, vals ...scalar.Scalar) *In {
		n := &In{Term: col(c), Negated: negated}
		for _, v := range vals {
			n.Values = append(n.Values, lit(v))
		}
		return n
	}
	cases := []struct {
		name string
		e    Expr
		want bool
	}{
		{"x = 12: in the filter", cmpx("x", Eq, i64(12)), true},
		{"x = 13: ruled out", cmpx("x", Eq, i64(13)), false},
		{"13 = x: flipped", &Compare{Op: Eq, Left: lit(i64(13)), Right: col("x")}, false},
		{"x != 13: not asked", cmpx("x", Ne, i64(13)), true},
		{"NOT x = 13", &Not{cmpx("x", Eq, i64(13))}, true},
		{"NOT x = 12", &Not{cmpx("x", Eq, i64(12))}, true},
		{"y = 13: no filter", cmpx("y", Eq, i64(13)), true},
		{"x IN (13, 14)", in("x", false, i64(13), i64(14)), false},
		{"x IN (13, 17)", in("x", false, i64(13), i64(17)), true},
		{"x IN (13, NULL)", in("x", false, i64(13), nil), false},
		{"x NOT IN (13, 14)", in("x", true, i64(13), i64(14)), true},
		{"x = 13 AND y = 15", &And{Terms: []Expr{cmpx("x", Eq, i64(13)), cmpx("y", Eq, i64(15))}}, false},
		{"x = 13 OR y = 15", &Or{Terms: []Expr{cmpx("x", Eq, i64(13)), cmpx("y", Eq, i64(15))}}, true},
		{"x = 13 OR x = 14", &Or{Terms: []Expr{cmpx("x", Eq, i64(13)), cmpx("x", Eq, i64(14))}}, false},
		{"f IN (NaN): not asked", in("f", false, f64(math.NaN())), true},
	}
	for _, c := range cases {
		if c.name == "x IN (13, NULL)" {
			c.e.(*In).Values[1] = null(int64T)
		}
		if got := newBound(c.e).MayMatch(st); got != c.want {
			t.Errorf("%s: MayMatch = %v, want %v", c.name, got, c.want)
		}
		// Without the membership test, statistics alone keep every case.
		if !newBound(c.e).MayMatch(st.StatsMap) {
			t.Errorf("%s: statistics alone dropped the group", c.name)
		}
	}
}

func TestEqualityColumns(t *testing.T) {
	e := &And{Terms: []Expr{
		cmpx("a", Eq, i64(1)),
		&Or{Terms: []Expr{&In{Term: col("b"), Values: []*Literal{lit(i64(1))}}, cmpx("c", Lt, i64(3))}},
		&Not{cmpx("a", Eq, i64(2))},
		&Compare{Op: Eq, Left: lit(i64(4)), Right: col("d")},
	}}
	got := newBound(e).EqualityColumns()
	if want := []string{"a", "b", "d"}; !slices.Equal(got, want) {
		t.Errorf("EqualityColumns = %v, want %v", got, want)
	}
	if got := (*Predicate)(nil).EqualityColumns(); got != nil {
		t.Errorf("nil predicate: %v", got)
	}
}
