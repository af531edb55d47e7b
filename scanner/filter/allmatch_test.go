package filter

import (
	"math"
	"testing"
)

// TestAllMatch: a group is wholly inside a predicate only when its
// statistics leave no row false, NULL or NaN.
func TestAllMatch(t *testing.T) {
	withNaN := ColumnStats{Min: f64(1), Max: f64(2), Nulls: 0, Rows: 10, NaN: true}
	noNaN := ColumnStats{Min: f64(1), Max: f64(2), Nulls: 0, Rows: 10}
	cases := []struct {
		name  string
		e     Expr
		stats StatsMap
		want  bool
	}{
		{"inside", cmpx("x", Ge, i64(10)), StatsMap{"x": full}, true},
		{"straddles", cmpx("x", Gt, i64(10)), StatsMap{"x": full}, false},
		{"outside", cmpx("x", Gt, i64(20)), StatsMap{"x": full}, false},
		{"nulls make some rows unknown", cmpx("x", Ge, i64(10)), StatsMap{"x": someNulls}, false},
		{"null count unknown", cmpx("x", Ge, i64(10)), StatsMap{"x": countsOff}, false},
		{"no min", cmpx("x", Ge, i64(10)), StatsMap{"x": noMin}, false},
		{"no statistics", cmpx("x", Ge, i64(10)), StatsMap{}, false},
		{"equal to a single value", cmpx("x", Eq, i64(15)), StatsMap{"x": single}, true},
		{"not equal outside the range", cmpx("x", Ne, i64(30)), StatsMap{"x": full}, true},
		{"NaN may be a row", cmpx("f", Ge, f64(0)), StatsMap{"f": withNaN}, false},
		{"no NaN", cmpx("f", Ge, f64(0)), StatsMap{"f": noNaN}, true},
		{"NaN literal", cmpx("f", Ne, f64(math.NaN())), StatsMap{"f": noNaN}, true},
		{"and of two inside", &And{Terms: []Expr{cmpx("x", Ge, i64(10)), cmpx("x", Le, i64(20))}}, StatsMap{"x": full}, true},
		{"and with one straddling", &And{Terms: []Expr{cmpx("x", Ge, i64(10)), cmpx("x", Le, i64(15))}}, StatsMap{"x": full}, false},
		{"or with one inside", &Or{Terms: []Expr{cmpx("x", Ge, i64(10)), cmpx("x", Lt, i64(12))}}, StatsMap{"x": full}, true},
		{"not of outside", &Not{Term: cmpx("x", Gt, i64(20))}, StatsMap{"x": full}, true},
		{"is null of no nulls", &IsNull{Term: col("x"), Negated: true}, StatsMap{"x": full}, true},
		{"is null of some", &IsNull{Term: col("x")}, StatsMap{"x": someNulls}, false},
		{"is null of all", &IsNull{Term: col("x")}, StatsMap{"x": allNulls}, true},
	}
	for _, tc := range cases {
		if got := newBound(tc.e).AllMatch(tc.stats); got != tc.want {
			t.Errorf("%s: AllMatch(%s) = %v, want %v", tc.name, tc.e, got, tc.want)
		}
		if tc.want && !newBound(tc.e).MayMatch(tc.stats) {
			t.Errorf("%s: AllMatch but not MayMatch", tc.name)
		}
	}
	var nilPred *Predicate
	if nilPred.AllMatch(StatsMap{"x": full}) {
		t.Error("a nil predicate matches nothing for sure")
	}
}
