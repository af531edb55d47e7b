package planner

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner/filter"
)

// PlanExtremes plans req for the least and greatest values of columns
// (dotted names of the scan's schema): as Plan, except that the row
// groups whose statistics answer for every one of the columns are not
// read but folded into Plan.Extremes. A row group answers when the
// filter (if any) holds on every one of its rows and each column's
// statistics are exact (filter.ColumnStats.Exact: never truncated
// strings) or show only nulls. Never for a table with deletes (deleted
// rows are in the statistics). The rest is read as any scan: the
// extremes are Plan.Extremes merged with what its tasks return. The
// request must have no limit.
func (pl *Planner) PlanExtremes(ctx context.Context, req *scandv1.ScanRequest, columns []string) (*Plan, error) {
	if req.GetLimit() != 0 {
		return nil, invalidf("extremes are planned without a limit (got %d)", req.GetLimit())
	}
	if columns == nil {
		columns = []string{}
	}
	return pl.planWithin(ctx, req, planMode{extremes: columns})
}

// takeExtremes takes out of each file's kept row groups those whose
// statistics answer for the columns, and returns their extremes, merged
// per column (the zero ColumnStats where no group answered).
func takeExtremes(f *Filter, files []plannedFile, parts *partitions, tbl *table, unified *arrow.Schema, columns []string) (map[string]filter.ColumnStats, error) {
	schema := unified // without a filter the files' whole schemas were not kept
	var pred *filter.Predicate
	if f != nil {
		schema = filterSchema(files, parts)
		if tbl != nil {
			schema = tbl.filterSchema()
		}
		var err error
		if pred, err = filter.Bind(f.Expr, schema); err != nil {
			return nil, err
		}
	}
	types := columnTypes(schema)
	want := map[string]arrow.DataType{}
	for _, c := range columns {
		dt := leafType(unified, c)
		if dt == nil {
			return map[string]filter.ColumnStats{}, nil // the read reports it
		}
		want[c] = dt
	}
	out := make(map[string]filter.ColumnStats, len(columns))
	for i := range files {
		pf := &files[i]
		if pf.stats == nil || (pf.keep != nil && len(pf.keep) == 0) {
			continue
		}
		pstats, err := parts.stats(pf.part)
		if err != nil {
			return nil, err
		}
		groups := pf.kept()
		if groups == nil {
			groups = pf.groups()
		}
		left := make([]int, 0, len(groups))
		for _, g := range groups {
			src := joinedStats{file: pf.stats(g), parts: pstats, types: types}
			if pred != nil && !pred.AllMatch(src) {
				left = append(left, g)
				continue
			}
			got, ok := exactStats(src, want)
			if !ok {
				left = append(left, g)
				continue
			}
			for c, st := range got {
				out[c] = filter.MergeStats(out[c], st)
			}
		}
		pf.keep = left
	}
	return out, nil
}

// exactStats are the statistics of a group for each column, if every one
// is exact, of the column's type in the scan, or shows only nulls.
func exactStats(src filter.StatsSource, want map[string]arrow.DataType) (map[string]filter.ColumnStats, bool) {
	out := make(map[string]filter.ColumnStats, len(want))
	for c, dt := range want {
		st, ok := src.ColumnStats(c)
		switch {
		case !ok:
			return nil, false
		case st.Rows >= 0 && st.Nulls == st.Rows:
			st = filter.ColumnStats{Exact: true} // nothing to fold in
		case !st.Exact || st.Min == nil || st.Max == nil ||
			!arrow.TypeEqual(st.Min.DataType(), dt) || !arrow.TypeEqual(st.Max.DataType(), dt):
			return nil, false
		}
		out[c] = st
	}
	return out, true
}

// leafType is the type of the dotted column name in s (a dictionary's
// values' type); nil when there is none.
func leafType(s *arrow.Schema, name string) arrow.DataType {
	fields := s.Fields()
	var dt arrow.DataType
	for _, part := range strings.Split(name, ".") {
		dt = nil
		for _, f := range fields {
			if f.Name == part {
				dt = f.Type
				break
			}
		}
		if dt == nil {
			return nil
		}
		if st, ok := dt.(*arrow.StructType); ok {
			fields = st.Fields()
		} else {
			fields = nil
		}
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	return dt
}
