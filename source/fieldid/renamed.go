package fieldid

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// ColumnNames turns a Match into the name the scan gives each top-level
// field of the file, in the file's order: the table's name of the column
// read from it, or "" for a field no table column reads (a dropped
// column, or one whose name a re-added column took). Nil when every field
// keeps its own name and none is hidden.
func ColumnNames(file *arrow.Schema, matched []Column) []string {
	names := make([]string, file.NumFields())
	for _, c := range matched {
		if c.File >= 0 {
			names[c.File] = c.Name
		}
	}
	for i, f := range file.Fields() {
		if names[i] != f.Name {
			return names
		}
	}
	return nil
}

// Renamed is a data file as a table names its columns: each top-level
// field under the name ColumnNames gave it, and fields named "" hidden.
// Planning and reading see the same view, so a column selection, a filter
// or a schema delta written for one holds for the other. Statistics are
// passed on under the new names; the readers' other optional interfaces
// (late-materialization plans, bloom filters) are not, so that nothing
// resolves a column by the file's own names.
type Renamed struct {
	scanner.File
	schema *arrow.Schema
	toFile map[string]string // scan name -> file name
	toScan map[string]string // file name -> scan name ("" hidden)
	all    []string          // the visible fields, by file name, in order
	stats  scanner.Statistics
}

// Rename wraps f with names (ColumnNames, or a ticket's column_names);
// f itself when names is empty.
func Rename(f scanner.File, names []string) (scanner.File, error) {
	if len(names) == 0 {
		return f, nil
	}
	fs := f.Schema()
	if len(names) != fs.NumFields() {
		return nil, fmt.Errorf("%d column names for a file of %d columns", len(names), fs.NumFields())
	}
	r := &Renamed{File: f, toFile: map[string]string{}, toScan: map[string]string{}}
	r.stats, _ = f.(scanner.Statistics)
	var fields []arrow.Field
	for i, n := range names {
		ff := fs.Field(i)
		if _, dup := r.toScan[ff.Name]; dup {
			return nil, fmt.Errorf("the file has column %q twice", ff.Name)
		}
		r.toScan[ff.Name] = n
		if n == "" {
			continue
		}
		if _, dup := r.toFile[n]; dup {
			return nil, fmt.Errorf("two columns named %q", n)
		}
		r.toFile[n] = ff.Name
		r.all = append(r.all, ff.Name)
		ff.Name = n
		fields = append(fields, ff)
	}
	md := fs.Metadata()
	r.schema = arrow.NewSchema(fields, &md)
	return r, nil
}

// Schema is the file's schema as renamed, hidden fields left out.
func (r *Renamed) Schema() *arrow.Schema { return r.schema }

// hiddenPrefix marks a name that reaches the reader for a scan column the
// file must not answer: no field of a file is named so.
const hiddenPrefix = "\x00hidden\x00"

// fileName is a scan column's name in the file: a top-level field renamed
// back, a nested path below it kept. A scan name that is another field's
// file name (renamed or hidden) must not find that field.
func (r *Renamed) fileName(c string) string {
	top, rest, nested := strings.Cut(c, ".")
	if f, ok := r.toFile[top]; ok {
		if nested {
			return f + "." + rest
		}
		return f
	}
	if _, isFileName := r.toScan[top]; isFileName {
		return hiddenPrefix + c
	}
	return c
}

func (r *Renamed) scanName(c string) string {
	if s, ok := strings.CutPrefix(c, hiddenPrefix); ok {
		return s
	}
	top, rest, nested := strings.Cut(c, ".")
	if n, ok := r.toScan[top]; ok && n != "" {
		if nested {
			return n + "." + rest
		}
		return n
	}
	return c
}

func (r *Renamed) rename(s *arrow.Schema, names map[string]string) *arrow.Schema {
	fields := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		if n, ok := names[f.Name]; ok && n != "" {
			f.Name = n
		}
		fields[i] = f
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// Project resolves scan names (dotted for nested fields); nil means every
// visible column.
func (r *Renamed) Project(columns []string) (*scanner.Projection, error) {
	cols := r.all
	if columns != nil {
		cols = make([]string, len(columns))
		for i, c := range columns {
			cols[i] = r.fileName(c)
		}
	}
	p, err := r.File.Project(cols)
	if err != nil {
		var uc *scanner.UnknownColumnError
		if ok := asUnknown(err, &uc); ok {
			for i, c := range uc.Columns {
				uc.Columns[i] = r.scanName(c)
			}
			uc.Available = scanner.ColumnNames(r.schema)
		}
		return nil, err
	}
	out := *p
	out.Schema = r.rename(p.Schema, r.toScan)
	out.Missing = make([]string, len(p.Missing))
	for i, m := range p.Missing {
		out.Missing[i] = r.scanName(m)
	}
	return &out, nil
}

func asUnknown(err error, target **scanner.UnknownColumnError) bool {
	e, ok := err.(*scanner.UnknownColumnError)
	if ok {
		*target = e
	}
	return ok
}

// Read reads as the wrapped file does, and names the batches' columns as
// the scan does.
func (r *Renamed) Read(ctx context.Context, p *scanner.Projection, opts scanner.ReadOptions, emit func(arrow.RecordBatch) error) error {
	inner := *p
	inner.Schema = r.rename(p.Schema, r.toFile)
	return r.File.Read(ctx, &inner, opts, func(rec arrow.RecordBatch) error {
		renamed := array.NewRecordBatch(r.rename(rec.Schema(), r.toScan), rec.Columns(), rec.NumRows())
		rec.Release()
		return emit(renamed)
	})
}

// GroupStats implements scanner.Statistics under the scan's names; a
// file without statistics answers none.
func (r *Renamed) GroupStats(g int) filter.StatsSource {
	if r.stats == nil {
		return filter.StatsMap{}
	}
	return renamedStats{r: r, inner: r.stats.GroupStats(g)}
}

type renamedStats struct {
	r     *Renamed
	inner filter.StatsSource
}

func (s renamedStats) ColumnStats(column string) (filter.ColumnStats, bool) {
	name := s.r.fileName(column)
	if strings.HasPrefix(name, hiddenPrefix) {
		return filter.ColumnStats{}, false
	}
	return s.inner.ColumnStats(name)
}

var _ scanner.Statistics = (*Renamed)(nil)
