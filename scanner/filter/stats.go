package filter

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// ColumnStats are what is known of one column in one group of rows: a
// Parquet row group, an ORC stripe, a whole file, or a hive partition (where
// the column is constant). Readers fill them from what the writer recorded,
// leaving out what cannot be trusted, so that everything here is true of
// the group's values:
//   - Min and Max bound the non-null, non-NaN values, inclusive, typed as
//     the column's Arrow type; nil means unknown. Bounds need not be exact
//     (a writer may truncate string statistics, keeping them bounds).
//   - Nulls counts the null values, Rows the rows; -1 means unknown.
//   - NaN says that a floating-point column may hold NaN; readers set it
//     unless they know there is none. NaN is outside [Min, Max].
//   - Exact says that Min and Max are the least and greatest non-null,
//     non-NaN values themselves, not wider bounds (MIN and MAX may be
//     answered with them): the writer cannot have truncated them (a
//     fixed-width type) or says it did not.
type ColumnStats struct {
	Min, Max scalar.Scalar
	Nulls    int64
	Rows     int64
	NaN      bool
	Exact    bool
}

// Unknown is the statistics of a column nothing is known of.
var Unknown = ColumnStats{Nulls: -1, Rows: -1, NaN: true}

// StatsSource gives the statistics of the columns of one group, by dotted
// column name; ok is false when there are none (every answer is then "may
// match").
type StatsSource interface {
	ColumnStats(column string) (stats ColumnStats, ok bool)
}

// StatsMap is a StatsSource held in a map (partitions, tests).
type StatsMap map[string]ColumnStats

// ColumnStats implements StatsSource.
func (m StatsMap) ColumnStats(column string) (ColumnStats, bool) {
	s, ok := m[column]
	return s, ok
}

// ConstantStats are the statistics of a column whose value is the same in
// every row of a file: a partition value, which lives in a path or a
// table's metadata. A nil or null value states that every row is null
// (the row count is not known); a NaN has no bounds, only the flag.
func ConstantStats(v scalar.Scalar) ColumnStats {
	if v == nil || !v.IsValid() {
		return ColumnStats{Nulls: 1, Rows: 1}
	}
	st := ColumnStats{Min: v, Max: v, Nulls: 0, Rows: -1, Exact: true}
	var f float64
	switch s := v.(type) {
	case *scalar.Float32:
		f = float64(s.Value)
	case *scalar.Float64:
		f = s.Value
	}
	if math.IsNaN(f) {
		// NaN lies outside [Min, Max]: no bounds, only the flag.
		st.Min, st.Max, st.NaN, st.Exact = nil, nil, true, false
	}
	return st
}
