package planner

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
)

// Tickets carry no schema. A ticket names its file and split, the
// request's columns as that file sees them (ColumnSelection: indexes into
// the file's column names, so a byte or two per column; nothing at all for
// all columns), and how the scan's unified schema differs from the file's
// projection (SchemaDelta: usually nothing; columns cast, metadata of the
// first file, when they differ). DoGet projects the file anyway
// and applies the delta, so a FlightInfo grows with the number of files,
// not with files x columns. See ScanTask in proto/scand/v1/scan.proto.

// selectColumns encodes columns for a file whose column names are names:
// index i+1 is the file's column i, 0 the next name of absent (a column
// the file lacks). The order is the request's.
func selectColumns(names, columns []string) *scandv1.ColumnSelection {
	at := make(map[string]int, len(names))
	for i, n := range names {
		if _, dup := at[n]; !dup {
			at[n] = i
		}
	}
	sel := &scandv1.ColumnSelection{Index: make([]uint32, 0, len(columns))}
	for _, c := range columns {
		i, ok := at[c]
		if !ok {
			sel.Index = append(sel.Index, 0)
			sel.Absent = append(sel.Absent, c)
			continue
		}
		sel.Index = append(sel.Index, uint32(i)+1)
	}
	return sel
}

// SelectedColumns decodes a ColumnSelection against the file's column
// names; nil means all columns.
func SelectedColumns(sel *scandv1.ColumnSelection, names []string) ([]string, error) {
	if sel == nil {
		return nil, nil // all columns
	}
	out := make([]string, 0, len(sel.Index))
	absent := sel.Absent
	for _, i := range sel.Index {
		switch {
		case i == 0 && len(absent) > 0:
			out = append(out, absent[0])
			absent = absent[1:]
		case i > 0 && int(i) <= len(names):
			out = append(out, names[i-1])
		default:
			return nil, invalidf("ticket names column %d, but the file has %d and the ticket %d absent ones: pass GetFlightInfo's tickets unchanged", i, len(names), len(sel.Absent))
		}
	}
	if len(absent) > 0 || len(out) == 0 {
		return nil, invalidf("ticket's column selection does not match the file: pass GetFlightInfo's tickets unchanged")
	}
	return out, nil
}

// plainField is f without metadata (the filter's schema needs none).
func plainField(f arrow.Field) arrow.Field {
	return arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
}

// SchemaDelta says how u differs from p, a file's projected schema (see
// SchemaDelta in scan.proto); nil when it does not.
func SchemaDelta(p, u *arrow.Schema, mem memory.Allocator) *scandv1.SchemaDelta {
	d := fieldsDelta(p, u, mem)
	if d == nil {
		d = &scandv1.SchemaDelta{}
	}
	d.Metadata = metadataDelta(p, u)
	if len(d.Fields) == 0 && len(d.Nullable) == 0 && d.Metadata == nil {
		return nil
	}
	return d
}

// fieldsDelta is the part of the delta about fields: a field of u is
// stated when p lacks it, or has it with another type (a promotion) or
// other field metadata, nested metadata included: a stream's schema must
// be the scan's to the last key, or clients cannot concatenate streams.
func fieldsDelta(p, u *arrow.Schema, mem memory.Allocator) *scandv1.SchemaDelta {
	d := &scandv1.SchemaDelta{}
	var stated []arrow.Field
	pf := p.Fields()
	j := 0
	for i, f := range u.Fields() {
		if !p.HasField(f.Name) {
			stated = append(stated, f)
			d.Positions = append(d.Positions, int32(i))
			continue
		}
		if j >= len(pf) || pf[j].Name != f.Name || (pf[j].Nullable && !f.Nullable) {
			return fullDelta(u, mem) // u's order is not p's
		}
		own := scanner.CleanField(pf[j])
		j++
		if !identicalTypes(own.Type, f.Type) || !own.Metadata.Equal(f.Metadata) {
			stated = append(stated, f)
			d.Positions = append(d.Positions, int32(i))
			continue
		}
		if f.Nullable && !own.Nullable {
			d.Nullable = append(d.Nullable, int32(i))
		}
	}
	if j != len(pf) {
		return fullDelta(u, mem) // p has a field twice
	}
	if len(stated) > 0 {
		d.Fields = SerializeSchema(arrow.NewSchema(stated, nil), mem)
	}
	return d
}

// identicalTypes says whether a and b are the same type to the names of
// their nested fields: arrow.TypeEqual ignores a list's element name, and
// the scan's type (the first file's: Parquet's list<element: ...>) must
// reach the stream of a file whose reader names it otherwise (ORC's
// list<item: ...>).
func identicalTypes(a, b arrow.DataType) bool {
	if !arrow.TypeEqual(a, b, arrow.CheckMetadata()) {
		return false
	}
	na, okA := a.(arrow.NestedType)
	nb, okB := b.(arrow.NestedType)
	if !okA || !okB {
		return okA == okB
	}
	fa, fb := na.Fields(), nb.Fields()
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i].Name != fb[i].Name || !identicalTypes(fa[i].Type, fb[i].Type) {
			return false
		}
	}
	return true
}

// fullDelta states every field of u.
func fullDelta(u *arrow.Schema, mem memory.Allocator) *scandv1.SchemaDelta {
	d := &scandv1.SchemaDelta{Fields: SerializeSchema(arrow.NewSchema(u.Fields(), nil), mem), Positions: make([]int32, u.NumFields())}
	for i := range d.Positions {
		d.Positions[i] = int32(i)
	}
	return d
}

// metadataDelta is u's schema metadata when it is not p's own (cleaned as
// Unify cleans it); nil when it is.
func metadataDelta(p, u *arrow.Schema) *scandv1.SchemaMetadata {
	own, want := scanner.CleanSchemaMetadata(p.Metadata()), u.Metadata()
	if own.Equal(want) {
		return nil
	}
	return &scandv1.SchemaMetadata{Keys: want.Keys(), Values: want.Values()}
}

// schemaMetadata is the scan's schema metadata as a ticket rebuilds it:
// the delta's when it states one, else the file's own.
func schemaMetadata(p *arrow.Schema, d *scandv1.SchemaMetadata) (*arrow.Metadata, error) {
	m := scanner.CleanSchemaMetadata(p.Metadata())
	if d != nil {
		if len(d.Keys) != len(d.Values) {
			return nil, mismatchf("%d metadata keys for %d values", len(d.Keys), len(d.Values))
		}
		m = arrow.NewMetadata(d.Keys, d.Values)
	}
	if m.Len() == 0 {
		return nil, nil
	}
	return &m, nil
}

// ApplyDelta rebuilds the scan's schema from a file's projected schema p
// and a ticket's delta. A delta that does not fit p (a forged or foreign
// ticket) is an invalid argument.
func ApplyDelta(p *arrow.Schema, d *scandv1.SchemaDelta, mem memory.Allocator) (*arrow.Schema, error) {
	stated, err := statedFields(p, d, mem)
	if err != nil {
		return nil, err
	}
	isStated := make(map[string]bool, len(stated))
	for _, f := range stated {
		isStated[f.Name] = true
	}
	var rest []arrow.Field
	for _, f := range p.Fields() {
		if !isStated[f.Name] {
			rest = append(rest, scanner.CleanField(f))
		}
	}
	n := len(rest) + len(stated)
	out := make([]arrow.Field, 0, n)
	fromFile := make([]bool, n)
	positions := d.GetPositions()
	for i := range n {
		if len(positions) > 0 && int(positions[0]) == i {
			out, stated, positions = append(out, stated[0]), stated[1:], positions[1:]
			continue
		}
		if len(rest) == 0 {
			return nil, mismatchf("the stated fields' positions are not within the %d fields", n)
		}
		out, rest, fromFile[i] = append(out, rest[0]), rest[1:], true
	}
	if len(positions) > 0 {
		return nil, mismatchf("position %d is out of order or past the %d fields", positions[0], n)
	}
	for _, pos := range d.GetNullable() {
		if pos < 0 || int(pos) >= n || !fromFile[pos] {
			return nil, mismatchf("nullable position %d names no field of the file", pos)
		}
		out[pos].Nullable = true
	}
	meta, err := schemaMetadata(p, d.GetMetadata())
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(out, meta), nil
}

// statedFields decodes the delta's fields and checks them against p: one
// per position, each name once, and a field the file has keeps its type
// or is promoted (scanner.Promotable): a forged ticket asks for no other
// cast.
func statedFields(p *arrow.Schema, d *scandv1.SchemaDelta, mem memory.Allocator) ([]arrow.Field, error) {
	if len(d.GetFields()) == 0 {
		if len(d.GetPositions()) > 0 {
			return nil, mismatchf("%d positions but no fields", len(d.GetPositions()))
		}
		return nil, nil
	}
	s, err := DecodeSchema(d.GetFields(), mem)
	if err != nil {
		return nil, invalidf("ticket holds an invalid schema delta: %v", err)
	}
	if s.NumFields() != len(d.GetPositions()) {
		return nil, mismatchf("%d fields for %d positions", s.NumFields(), len(d.GetPositions()))
	}
	seen := make(map[string]bool, s.NumFields())
	for _, f := range s.Fields() {
		if seen[f.Name] {
			return nil, mismatchf("field %q stated twice", f.Name)
		}
		seen[f.Name] = true
		if idx := p.FieldIndices(f.Name); len(idx) > 0 && !scanner.Promotable(p.Field(idx[0]).Type, f.Type) {
			return nil, mismatchf("column %q is %s in the file, %s in the ticket, which scand does not cast it to", f.Name, p.Field(idx[0]).Type, f.Type)
		}
	}
	return s.Fields(), nil
}

func mismatchf(format string, args ...any) error {
	return invalidf("ticket's schema delta does not match the file (%s): pass GetFlightInfo's tickets unchanged", fmt.Sprintf(format, args...))
}
