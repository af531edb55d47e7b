package server

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	sqlfilter "github.com/scand/scand/scanner/filter/sql"
	"github.com/scand/scand/scanner/filter/substrait"
	"github.com/scand/scand/scanner/hive"
	"github.com/scand/scand/storage"
)

// scanFilter is a request's row filter: the expression, and the form the
// client sent, which every ticket carries so that DoGet (on any replica)
// binds it to its own file.
type scanFilter struct {
	expr      filter.Expr
	sql       string
	substrait []byte
}

// parseFilter reads the filter of a request or ticket; nil without one.
// The front ends' errors (filter.Error, filter.ErrTooComplex) pass
// through for toStatus to classify.
func parseFilter(sqlText string, substraitMsg []byte) (*scanFilter, error) {
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
	return &scanFilter{expr: e, sql: sqlText, substrait: substraitMsg}, nil
}

// columns are the filter's columns; none without a filter.
func (f *scanFilter) columns() []string {
	if f == nil {
		return nil
	}
	return filter.Columns(f.expr)
}

// partitions are a scan's hive partition columns: the fields inferred over
// all its files, and each file's values.
type partitions struct {
	fields []arrow.Field
	byFile []map[string]hive.Value
}

func partitionsOf(infos []storage.Info) *partitions {
	p := &partitions{byFile: make([]map[string]hive.Value, len(infos))}
	all := make([][]hive.Value, len(infos))
	for i, info := range infos {
		all[i] = hive.Parse(info.Name)
		p.byFile[i] = hive.ByKey(all[i])
	}
	p.fields = hive.Fields(all)
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

// value is file i's value of partition column key: null when its path
// lacks the key.
func (p *partitions) value(i int, key string) hive.Value {
	if v, ok := p.byFile[i][key]; ok {
		return v
	}
	return hive.Value{Key: key, Null: true}
}

// stats are file i's partition values as statistics: each is constant
// over the file.
func (p *partitions) stats(i int) (filter.StatsMap, error) {
	m := make(filter.StatsMap, len(p.fields))
	for _, f := range p.fields {
		st, err := hive.Stats(p.value(i, f.Name), f.Type)
		if err != nil {
			return nil, fmt.Errorf("partition column %s: %w", f.Name, err)
		}
		m[f.Name] = st
	}
	return m, nil
}

// pathValues are the partition values of one path, by key, for DoGet.
func pathValues(path string) map[string]hive.Value {
	return hive.ByKey(hive.Parse(path))
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
