package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/fieldid"
)

// A table's listing (source.Listing.Schema set: Iceberg) is planned as
// files are, with four differences:
//   - the scan's schema is the table's (its columns by the table's names
//     and types), not the files' unified: a column added since a file was
//     written reads as nulls there, a promoted one is cast;
//   - each file is opened as its table names its columns (fieldid.Rename,
//     from a match by field id, or by name through the source's physical
//     names: source.Columns), and its tickets say so
//     (ScanTask.column_names), so DoGet sees the same view;
//   - its deletes go into its tickets (ScanTask.deletes, table_path), and
//     a limit is not cut to the files' rows, which deletes make fewer;
//   - the listing's partitions prune files by their values from the
//     table's metadata; a file that holds a partition column reads it
//     from the file, one that lacks it (Delta writes none) has the
//     metadata's value in its tickets (ScanTask.partition_values,
//     partvalues.go), which the stream fills the column from: never from
//     the path, which a table need not spell it in.

// table is what planning needs of a table's listing.
type table struct {
	schema     *arrow.Schema
	partitions []arrow.Field
}

func tableOf(l *source.Listing) *table {
	if l.Schema == nil {
		return nil
	}
	return &table{schema: l.Schema, partitions: l.Partitions}
}

// checkTable checks a table's listing and the request's columns against
// it: top-level columns of the table only.
func checkTable(l *source.Listing, columns []string) error {
	for _, f := range l.Files {
		if len(f.Partition) != len(l.Partitions) {
			return fmt.Errorf("source listed %s with %d partition values for %d partition columns", f.Object.Name, len(f.Partition), len(l.Partitions))
		}
	}
	var unknown []string
	for _, c := range columns {
		if _, ok := pickColumn(l.Schema, c, nil); !ok {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return &scanner.UnknownColumnError{Columns: scanner.SortedUnique(unknown), Available: scanner.ColumnNames(l.Schema)}
}

// schemaFor is the scan's schema: the table's columns requested, in
// the order first named (all of them for none), by the one projection
// rule (projection.go): a struct named only through dotted paths keeps
// only the fields named, in the table's order.
func (t *table) schemaFor(columns []string) *arrow.Schema {
	if len(columns) == 0 {
		return t.schema
	}
	var order []int
	picks := map[int]*pick{}
	for _, c := range columns {
		top, ok := pickColumn(t.schema, c, picks)
		if ok && !slices.Contains(order, top) {
			order = append(order, top)
		}
	}
	fields := make([]arrow.Field, len(order))
	for i, top := range order {
		fields[i] = t.schema.Field(top)
		fields[i].Type = picks[top].prune(fields[i].Type)
	}
	return arrow.NewSchema(fields, nil)
}

// pick is what a scan selects of a column: all of it, or some of its
// children by index.
type pick struct {
	all  bool
	kids map[int]*pick
}

// pickColumn resolves a requested name in schema as the readers do: a
// top-level field by its name, or a dotted path from one through struct
// fields, looking through the one child of lists and maps. It marks what
// the name selects in picks (when not nil) and returns the top-level
// index.
func pickColumn(schema *arrow.Schema, name string, picks map[int]*pick) (int, bool) {
	mark := func(top int) *pick {
		if picks == nil {
			return &pick{}
		}
		if picks[top] == nil {
			picks[top] = &pick{}
		}
		return picks[top]
	}
	if i := schema.FieldIndices(name); len(i) > 0 {
		mark(i[0]).all = true
		return i[0], true
	}
	for i, f := range schema.Fields() {
		if rest, ok := strings.CutPrefix(name, f.Name+"."); ok {
			var trial pick
			if descendPick(f.Type, rest, &trial) {
				mark(i).merge(&trial)
				return i, true
			}
		}
	}
	return -1, false
}

// descendPick marks in p the field of t that path names below t.
func descendPick(t arrow.DataType, path string, p *pick) bool {
	n, ok := t.(arrow.NestedType)
	if !ok {
		return false
	}
	kids := n.Fields()
	for i, c := range kids {
		if _, isStruct := t.(*arrow.StructType); !isStruct {
			break
		}
		if c.Name == path {
			p.kid(i).all = true
			return true
		}
		if rest, ok := strings.CutPrefix(path, c.Name+"."); ok {
			var trial pick
			if descendPick(c.Type, rest, &trial) {
				p.kid(i).merge(&trial)
				return true
			}
		}
	}
	// Lists and maps have one child (element, or the key-value struct)
	// whose name users rarely know: paths look through it.
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		if len(kids) == 1 {
			var trial pick
			if descendPick(kids[0].Type, path, &trial) {
				p.kid(0).merge(&trial)
				return true
			}
		}
	}
	return false
}

func (p *pick) kid(i int) *pick {
	if p.kids == nil {
		p.kids = map[int]*pick{}
	}
	if p.kids[i] == nil {
		p.kids[i] = &pick{}
	}
	return p.kids[i]
}

func (p *pick) merge(o *pick) {
	p.all = p.all || o.all
	for i, k := range o.kids {
		p.kid(i).merge(k)
	}
}

// prune is t with only what p selects: struct fields in t's order, lists
// pruned through their element, maps whole (the readers read both keys
// and values whatever is named).
func (p *pick) prune(t arrow.DataType) arrow.DataType {
	if p == nil || p.all {
		return t
	}
	switch tt := t.(type) {
	case *arrow.StructType:
		var fields []arrow.Field
		for i, f := range tt.Fields() {
			if k := p.kids[i]; k != nil {
				f.Type = k.prune(f.Type)
				fields = append(fields, f)
			}
		}
		return arrow.StructOf(fields...)
	case *arrow.ListType:
		e := tt.ElemField()
		e.Type = p.kids[0].prune(e.Type)
		return arrow.ListOfField(e)
	case *arrow.LargeListType:
		e := tt.ElemField()
		e.Type = p.kids[0].prune(e.Type)
		return arrow.LargeListOfField(e)
	case *arrow.FixedSizeListType:
		e := tt.ElemField()
		e.Type = p.kids[0].prune(e.Type)
		return arrow.FixedSizeListOfField(tt.Len(), e)
	}
	return t
}

// open turns a table's opened file into the table's view of it, and
// returns the names its tickets carry (nil when the file's own serve),
// its nested fields' names where they differ from the table's, and the
// values of the partition columns it lacks, encoded for its tickets
// (nil when it lacks none).
func (t *table) open(o *Opened, f source.File, mem memory.Allocator) ([]string, map[string]string, []byte, error) {
	fileSchema := o.File.Schema()
	if ids, ok := o.File.(scanner.FieldIDs); ok {
		fileSchema = ids.SchemaWithFieldIDs() // ORC: the ids are type attributes
	}
	physical := f.Columns.Physical
	var matched []fieldid.Column
	var err error
	if f.Columns.Match == source.ByFieldID {
		matched, err = fieldid.Match(t.schema, fileSchema, physical, physical != nil)
	} else {
		matched, err = fieldid.MatchByName(t.schema, fileSchema, physical)
	}
	if err != nil {
		var fe *fieldid.Error
		if errors.As(err, &fe) && fe.Unsupported {
			return nil, nil, nil, unimplementedf("%s: %s", f.Object.Name, fe.Msg)
		}
		return nil, nil, nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("%s does not fit its table's schema", f.Object.Name), Err: err}
	}
	for i, c := range matched {
		if c.Cast && !scanner.Promotable(fileSchema.Field(c.File).Type, t.schema.Field(i).Type) {
			return nil, nil, nil, unimplementedf("%s: column %q is %s in the file, %s in the table: scand does not read this promotion yet",
				f.Object.Name, c.Name, fileSchema.Field(c.File).Type, t.schema.Field(i).Type)
		}
	}
	var lacked []arrow.Field
	var values []scalar.Scalar
	for j, p := range t.partitions {
		i := slices.IndexFunc(matched, func(c fieldid.Column) bool { return c.Name == p.Name })
		if i >= 0 && matched[i].File < 0 {
			lacked = append(lacked, t.schema.Field(t.schema.FieldIndices(p.Name)[0]))
			var v scalar.Scalar
			if j < len(f.Partition) {
				v = f.Partition[j]
			}
			values = append(values, v)
		}
	}
	var partValues []byte
	if len(lacked) > 0 {
		if partValues, err = EncodePartitionValues(lacked, values, mem); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", f.Object.Name, err)
		}
	}
	names := fieldid.ColumnNames(fileSchema, matched)
	nested := fieldid.NestedNames(t.schema, fileSchema, matched)
	if o.File, err = fieldid.Rename(o.File, names, nested); err != nil {
		return nil, nil, nil, &source.Error{Kind: source.Corrupt, Msg: f.Object.Name, Err: err}
	}
	return names, nested, partValues, nil
}

// deletesOf is a file's deletes as its tickets carry them.
func (t *table) deletesOf(f source.File) ([]*scandv1.RowDeletes, error) {
	out := make([]*scandv1.RowDeletes, 0, len(f.Deletes))
	for _, d := range f.Deletes {
		rd := &scandv1.RowDeletes{
			Path: d.Object.Name, Size: d.Object.Size, Version: d.Object.Version, Format: formatProto(d.Format),
			Offset: d.Offset, Length: d.Length, Inline: d.Inline, Cardinality: d.Cardinality,
		}
		switch d.Kind {
		case source.PositionDeletes:
			rd.Kind = scandv1.RowDeletes_POSITION
		case source.DeletionVector:
			rd.Kind = scandv1.RowDeletes_DELETION_VECTOR
		case source.EqualityDeletes:
			rd.Kind = scandv1.RowDeletes_EQUALITY
			for _, id := range d.EqualityFieldIDs {
				name, ok := t.columnOfID(id)
				if !ok {
					return nil, unimplementedf("%s: equality deletes %s compare field id %d, which is no top-level column of the table", f.Object.Name, d.Object.Name, id)
				}
				rd.EqualityFieldIds = append(rd.EqualityFieldIds, int32(id))
				rd.EqualityColumns = append(rd.EqualityColumns, name)
			}
		default:
			return nil, unimplementedf("%s: deletes of kind %d", f.Object.Name, d.Kind)
		}
		out = append(out, rd)
	}
	return out, nil
}

func (t *table) columnOfID(id int) (string, bool) {
	for _, f := range t.schema.Fields() {
		if fid, ok := fieldid.ID(f); ok && fid == id {
			return f.Name, true
		}
	}
	return "", false
}

// filterSchema is what a filter binds to: the table's columns (its
// identity partition columns among them).
func (t *table) filterSchema() *arrow.Schema {
	fields := make([]arrow.Field, t.schema.NumFields())
	for i, f := range t.schema.Fields() {
		fields[i] = plainField(f)
	}
	return arrow.NewSchema(fields, nil)
}

// hasDeletes says whether any of a table's files has deletes (false for
// files of no table): their statistics count rows the deletes remove.
func (t *table) hasDeletes(files []plannedFile) bool {
	return t != nil && slices.ContainsFunc(files, func(f plannedFile) bool { return len(f.deletes) > 0 })
}

// deleteFiles counts the distinct delete files attached to the files kept:
// a deletion-vector file shared by several data files counts once, and a
// vector stored inline in the log counts as one of its own. It is the
// figure for tables whose source leaves planning to the planner (Delta);
// Iceberg's source counts its own.
func deleteFiles(files []plannedFile) int64 {
	seen := map[string]bool{}
	var n int64
	for _, f := range files {
		for _, d := range f.deletes {
			if d.GetPath() == "" {
				n++
				continue
			}
			if !seen[d.GetPath()] {
				seen[d.GetPath()] = true
				n++
			}
		}
	}
	return n
}

// pruneFiles drops the chosen files whose statistics in the table's
// metadata (source.File.Stats) rule the filter out, before their footers
// are read. The scan's schema is the table's whatever files are left, so
// skipping a file changes no column. A skipped file's whole size counts
// in bytes_without_filter, as a partition-pruned one's does.
func (t *table) pruneFiles(f *Filter, parts *partitions, listed []source.File, chosen []int, stats *scandv1.PlanStats) ([]int, error) {
	if f == nil || !slices.ContainsFunc(chosen, func(i int) bool { return listed[i].Stats != nil }) {
		return chosen, nil
	}
	schema := t.filterSchema()
	pred, err := filter.Bind(f.Expr, schema)
	if err != nil {
		return nil, err
	}
	types := columnTypes(schema)
	kept := chosen[:0:0]
	for _, i := range chosen {
		file := listed[i]
		if file.Stats == nil {
			kept = append(kept, i)
			continue
		}
		pstats, err := parts.stats(i)
		if err != nil {
			return nil, err
		}
		if pred.MayMatch(joinedStats{file: file.Stats, parts: pstats, types: types}) {
			kept = append(kept, i)
			continue
		}
		stats.FilesPrunedByStats++
		stats.BytesWithoutFilter += file.Object.Size
	}
	return kept, nil
}
