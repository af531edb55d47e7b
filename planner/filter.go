package planner

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	sqlfilter "github.com/scand/scand/scanner/filter/sql"
	"github.com/scand/scand/scanner/filter/substrait"
	"github.com/scand/scand/source"
)

// Filter is a request's row filter: the expression, and the form the
// client sent, which every ticket carries so that DoGet (on any replica)
// binds it to its own file.
type Filter struct {
	Expr      filter.Expr
	SQL       string
	Substrait []byte
}

// ParseFilter reads the filter of a request or ticket; nil without one.
// The front ends' errors (filter.Error, filter.ErrTooComplex) pass
// through for the server to classify.
func ParseFilter(sqlText string, substraitMsg []byte) (*Filter, error) {
	var e filter.Expr
	var err error
	switch {
	case sqlText != "" && len(substraitMsg) > 0:
		return nil, invalidf("set one of filter (SQL) and filter_substrait, not both")
	case sqlText != "":
		e, err = sqlfilter.Parse(sqlText)
	case len(substraitMsg) > 0:
		e, err = substrait.Translate(substraitMsg)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := filter.CheckCost(e); err != nil {
		return nil, err
	}
	return &Filter{Expr: e, SQL: sqlText, Substrait: substraitMsg}, nil
}

// columns are the filter's columns; none without a filter.
func (f *Filter) columns() []string {
	if f == nil {
		return nil
	}
	return filter.Columns(f.Expr)
}

// partitions are a scan's partition columns (source.Listing.Partitions)
// and each listed file's values.
type partitions struct {
	fields []arrow.Field
	byFile [][]scalar.Scalar
}

func partitionsOf(l *source.Listing) *partitions {
	p := &partitions{fields: l.Partitions, byFile: make([][]scalar.Scalar, len(l.Files))}
	for i, f := range l.Files {
		p.byFile[i] = f.Partition
	}
	return p
}

// field returns the partition column called name.
func (p *partitions) field(name string) (arrow.Field, bool) {
	i := slices.IndexFunc(p.fields, func(f arrow.Field) bool { return f.Name == name })
	if i < 0 {
		return arrow.Field{}, false
	}
	return p.fields[i], true
}

func (p *partitions) has(name string) bool {
	_, ok := p.field(name)
	return ok
}

// stats are file i's partition values as statistics: each is constant
// over the file.
func (p *partitions) stats(i int) (filter.StatsMap, error) {
	m := make(filter.StatsMap, len(p.fields))
	for j, f := range p.fields {
		var v scalar.Scalar
		if j < len(p.byFile[i]) {
			v = p.byFile[i][j]
		}
		if v != nil && v.IsValid() && !arrow.TypeEqual(v.DataType(), f.Type) {
			return nil, fmt.Errorf("partition column %s: a value of type %s for a column of type %s", f.Name, v.DataType(), f.Type)
		}
		m[f.Name] = filter.ConstantStats(v)
	}
	return m, nil
}

// statsOf returns the pruning statistics of a file: its reader's, when the
// format has them, or none.
func statsOf(f scanner.File) func(g int) filter.StatsSource {
	if s, ok := f.(scanner.Statistics); ok {
		return s.GroupStats
	}
	return nil
}

// joinedStats answers from the file's statistics first, then from its
// partition values, and drops statistics whose type is not the one the
// predicate was bound to (a column typed differently in this file than in
// the first file that has it), so that bounds are only ever compared with
// literals of their own type.
type joinedStats struct {
	file  filter.StatsSource
	parts filter.StatsMap
	types map[string]arrow.DataType
}

func (j joinedStats) ColumnStats(column string) (filter.ColumnStats, bool) {
	if st, ok := j.parts[column]; ok {
		return st, true
	}
	if j.file == nil {
		return filter.Unknown, false
	}
	st, ok := j.file.ColumnStats(column)
	if !ok {
		return filter.Unknown, false
	}
	want, known := j.types[column]
	if (st.Min != nil && (!known || !arrow.TypeEqual(st.Min.DataType(), want))) ||
		(st.Max != nil && (!known || !arrow.TypeEqual(st.Max.DataType(), want))) {
		st.Min, st.Max = nil, nil
	}
	return st, true
}
