package fieldid

import (
	"context"
	"fmt"
	"slices"
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

// NestedNames gives the nested fields of the file's matched columns the
// table's names where they differ (Delta's column mapping names struct
// fields physically too), keyed by the field's dotted path in the file's
// names, lists and maps looked through. Nested fields match one to one
// (Match refuses them otherwise), so the walk pairs them by position. Nil
// when every nested name agrees.
func NestedNames(table, file *arrow.Schema, matched []Column) map[string]string {
	var out map[string]string
	var walk func(from, to arrow.DataType, path string)
	walk = func(from, to arrow.DataType, path string) {
		switch f := from.(type) {
		case *arrow.StructType:
			t, ok := to.(*arrow.StructType)
			if !ok || t.NumFields() != f.NumFields() {
				return
			}
			for i, fc := range f.Fields() {
				tc := t.Field(i)
				p := path + "." + fc.Name
				if fc.Name != tc.Name {
					if out == nil {
						out = map[string]string{}
					}
					out[p] = tc.Name
				}
				walk(fc.Type, tc.Type, p)
			}
		case arrow.ListLikeType:
			if t, ok := to.(arrow.ListLikeType); ok {
				walk(f.Elem(), t.Elem(), path)
			}
		}
	}
	for i, c := range matched {
		if c.File >= 0 {
			walk(file.Field(c.File).Type, table.Field(i).Type, file.Field(c.File).Name)
		}
	}
	return out
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
	// Nested fields renamed (NestedNames): by the field's dotted path in
	// the file's names, and by its path in the scan's names, to the
	// field's own name on the other side.
	nestedToScan, nestedToFile map[string]string
	fileTypes                  map[string]arrow.DataType // top-level file name -> type
}

// Rename wraps f with names (ColumnNames, or a ticket's column_names) and
// nested (NestedNames, or a ticket's nested_names); f itself when both
// are empty.
func Rename(f scanner.File, names []string, nested map[string]string) (scanner.File, error) {
	fs := f.Schema()
	if len(names) == 0 && len(nested) == 0 {
		return f, nil
	}
	if len(names) == 0 {
		names = scanner.ColumnNames(fs)
	}
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
	if len(nested) > 0 {
		r.nestedToScan, r.nestedToFile = nested, map[string]string{}
		r.fileTypes = map[string]arrow.DataType{}
		for _, f := range fs.Fields() {
			r.fileTypes[f.Name] = f.Type
		}
		for path, name := range nested {
			parent, _, ok := cutLast(path)
			if !ok {
				return nil, fmt.Errorf("nested name %q: not a nested path", path)
			}
			r.nestedToFile[r.scanPath(parent)+"."+name] = lastSegment(path)
		}
		for i := range fields {
			fields[i].Type = relabel(fields[i].Type, r.toFile[fields[i].Name], r.nestedToScan)
		}
	}
	md := fs.Metadata()
	r.schema = arrow.NewSchema(fields, &md)
	return r, nil
}

// cutLast splits a dotted path at its last dot.
func cutLast(path string) (parent, last string, ok bool) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", path, false
	}
	return path[:i], path[i+1:], true
}

// scanPath is a file path (file names) in the scan's names.
func (r *Renamed) scanPath(filePath string) string {
	segs := strings.Split(filePath, ".")
	out := make([]string, len(segs))
	at := ""
	for i, seg := range segs {
		if i == 0 {
			at = seg
			out[0] = seg
			if n := r.toScan[seg]; n != "" {
				out[0] = n
			}
			continue
		}
		at += "." + seg
		out[i] = seg
		if n, ok := r.nestedToScan[at]; ok {
			out[i] = n
		}
	}
	return strings.Join(out, ".")
}

// relabel is t with the nested fields below path named by names (keyed
// by dotted path in t's own names); t itself when none is. Lists and maps
// are looked through, as column paths do.
func relabel(t arrow.DataType, path string, names map[string]string) arrow.DataType {
	switch tt := t.(type) {
	case *arrow.StructType:
		fields := tt.Fields()
		changed := false
		for i, f := range fields {
			p := path + "." + f.Name
			typ := relabel(f.Type, p, names)
			if n, ok := names[p]; ok && n != f.Name {
				fields[i].Name, changed = n, true
			}
			if typ != f.Type {
				fields[i].Type, changed = typ, true
			}
		}
		if !changed {
			return t
		}
		return arrow.StructOf(fields...)
	case *arrow.MapType:
		kv := relabel(tt.Elem(), path, names).(*arrow.StructType)
		if kv == tt.Elem() {
			return t
		}
		m := arrow.MapOfFields(kv.Field(0), kv.Field(1))
		m.KeysSorted = tt.KeysSorted
		return m
	case *arrow.ListType:
		e := tt.ElemField()
		if e.Type = relabel(e.Type, path, names); e.Type == tt.Elem() {
			return t
		}
		return arrow.ListOfField(e)
	case *arrow.LargeListType:
		e := tt.ElemField()
		if e.Type = relabel(e.Type, path, names); e.Type == tt.Elem() {
			return t
		}
		return arrow.LargeListOfField(e)
	case *arrow.FixedSizeListType:
		e := tt.ElemField()
		if e.Type = relabel(e.Type, path, names); e.Type == tt.Elem() {
			return t
		}
		return arrow.FixedSizeListOfField(tt.Len(), e)
	}
	return t
}

// fileRest is a nested path below a file field of type t at path (file
// names), given in the scan's names, in the file's names.
func (r *Renamed) fileRest(t arrow.DataType, path, rest string) (string, bool) {
	switch tt := t.(type) {
	case *arrow.StructType:
		for _, c := range tt.Fields() {
			cp := path + "." + c.Name
			name := c.Name
			if n, ok := r.nestedToScan[cp]; ok {
				name = n
			}
			if rest == name {
				return c.Name, true
			}
			if after, ok := strings.CutPrefix(rest, name+"."); ok {
				if sub, ok := r.fileRest(c.Type, cp, after); ok {
					return c.Name + "." + sub, true
				}
			}
		}
	case interface{ ElemField() arrow.Field }: // lists and maps
		// Named through the element (or entries) field, as the readers
		// allow, or looked through.
		e := tt.ElemField()
		if rest == e.Name {
			return e.Name, true
		}
		if after, ok := strings.CutPrefix(rest, e.Name+"."); ok {
			if sub, ok := r.fileRest(e.Type, path, after); ok {
				return e.Name + "." + sub, true
			}
		}
		return r.fileRest(e.Type, path, rest)
	}
	return "", false
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
		if !nested {
			return f
		}
		if r.nestedToScan != nil {
			// The file's own nested names must not answer a scan path.
			sub, ok := r.fileRest(r.fileTypes[f], f, rest)
			if !ok {
				return hiddenPrefix + c
			}
			return f + "." + sub
		}
		return f + "." + rest
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

// rename is s with its fields renamed by names (toScan or toFile) and
// their nested fields by nested (nestedToScan or nestedToFile; keyed by
// paths in s's own names).
func (r *Renamed) rename(s *arrow.Schema, names, nested map[string]string) *arrow.Schema {
	fields := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		if nested != nil {
			f.Type = relabel(f.Type, f.Name, nested)
		}
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
	out.Schema = r.rename(p.Schema, r.toScan, r.nestedToScan)
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
	inner.Schema = r.rename(p.Schema, r.toFile, r.nestedToFile)
	return r.File.Read(ctx, &inner, opts, func(rec arrow.RecordBatch) error {
		schema := r.rename(rec.Schema(), r.toScan, r.nestedToScan)
		cols := rec.Columns()
		var relabelled []arrow.Array
		if r.nestedToScan != nil {
			cols = slices.Clone(cols)
			for i, col := range cols {
				if want := schema.Field(i).Type; !arrow.TypeEqual(col.DataType(), want) {
					d := retype(col.Data(), want)
					cols[i] = array.MakeFromData(d)
					d.Release()
					relabelled = append(relabelled, cols[i])
				}
			}
		}
		renamed := array.NewRecordBatch(schema, cols, rec.NumRows())
		for _, a := range relabelled {
			a.Release()
		}
		rec.Release()
		return emit(renamed)
	})
}

// retype is d as type t, which has d's layout and differs only in the
// names of nested fields: the buffers are shared, not copied.
func retype(d arrow.ArrayData, t arrow.DataType) arrow.ArrayData {
	children := d.Children()
	if len(children) == 0 || arrow.TypeEqual(d.DataType(), t) {
		d.Retain()
		return d
	}
	var childTypes []arrow.DataType
	switch tt := t.(type) {
	case *arrow.StructType:
		for _, f := range tt.Fields() {
			childTypes = append(childTypes, f.Type)
		}
	case arrow.ListLikeType:
		childTypes = []arrow.DataType{tt.Elem()}
	}
	if len(childTypes) != len(children) {
		d.Retain()
		return d // not a relabelling: conforming the batch will say so
	}
	newChildren := make([]arrow.ArrayData, len(children))
	for i, c := range children {
		newChildren[i] = retype(c, childTypes[i])
	}
	out := array.NewData(t, d.Len(), d.Buffers(), newChildren, d.NullN(), d.Offset())
	for _, c := range newChildren {
		c.Release()
	}
	return out
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
