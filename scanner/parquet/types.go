package parquet

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Types pqarrow (arrow-go v18.8.0) cannot read, read through it anyway.
//
// pqarrow's leaf readers pick their conversion by the Arrow type of the
// schema manifest's leaf field. Two leaf types fail there, and both are
// read by handing pqarrow a copy of the manifest whose leaf says another
// type (readManifest), then relabelling or converting the arrays it
// returns into the schema's type (retype, in parquet.go):
//
//   - duration (pyarrow's duration[unit], pandas' timedelta): an INT64
//     column that the stored Arrow schema calls duration. pqarrow has no
//     duration case; read as int64, the array is relabelled, no copy.
//   - INT96 timestamps (Spark, Impala): pqarrow converts them to
//     nanoseconds and fails on any value outside 1677..2262. pyarrow 26
//     (pq.read_table, coerce_int96_timestamp_unit=None) reads them as
//     timestamp[ns] and lets such values wrap around in 64 bits; scand
//     does the same, so that a scan equals pyarrow's read. Read as the
//     int96Raw marker type, pqarrow hands over the decoded 12-byte values
//     untouched; toTimestamp converts them (one int64 array per batch).
//
// The File keeps the untouched manifest for everything else (column
// resolution, output types, statistics).

// int96Raw marks a leaf whose array holds INT96 values as decoded, 12
// bytes each, behind an int64-typed storage array: pqarrow reads int64
// storage zero-copy, which hands the record reader's value buffer over
// as it is. Its arrays never leave this package.
type int96Raw struct{ arrow.ExtensionBase }

type int96RawArray struct{ array.ExtensionArrayBase }

func newInt96Raw() *int96Raw {
	return &int96Raw{ExtensionBase: arrow.ExtensionBase{Storage: arrow.PrimitiveTypes.Int64}}
}

func (*int96Raw) ArrayType() reflect.Type { return reflect.TypeOf(int96RawArray{}) }
func (*int96Raw) ExtensionName() string   { return "scand.parquet.int96_raw" }
func (*int96Raw) Serialize() string       { return "" }
func (*int96Raw) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) {
	return newInt96Raw(), nil
}
func (t *int96Raw) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == t.ExtensionName()
}
func (t *int96Raw) String() string { return "int96_raw" }

// readManifest returns the manifest pqarrow reads with: m with the leaves
// readType changes given new fields, or m itself when none changes.
func readManifest(m *pqarrow.SchemaManifest, descr *schema.Schema) *pqarrow.SchemaManifest {
	fields, changed := cloneFields(m.Fields, descr)
	if !changed {
		return m
	}
	// Only Fields is read by pqarrow's record readers; the lookup maps
	// (ColIndexToField, ChildToParent) still point at m's nodes.
	cp := *m
	cp.Fields = fields
	return &cp
}

func cloneFields(fields []pqarrow.SchemaField, descr *schema.Schema) ([]pqarrow.SchemaField, bool) {
	out := make([]pqarrow.SchemaField, len(fields))
	changed := false
	for i := range fields {
		out[i] = fields[i]
		if !fields[i].IsLeaf() {
			var c bool
			out[i].Children, c = cloneFields(fields[i].Children, descr)
			changed = changed || c
			continue
		}
		if t := readType(fields[i].Field.Type, descr.Column(fields[i].ColIndex).PhysicalType()); t != nil {
			fld := *fields[i].Field
			fld.Type = t
			out[i].Field = &fld
			changed = true
		}
	}
	return out, changed
}

// readType is the type pqarrow must read a leaf of type t and physical
// type phys as, nil when t itself works.
func readType(t arrow.DataType, phys parquet.Type) arrow.DataType {
	switch {
	case phys == parquet.Types.Int96:
		return newInt96Raw()
	case t.ID() == arrow.DURATION && phys == parquet.Types.Int64:
		return arrow.PrimitiveTypes.Int64
	}
	return nil
}

// julianUnixEpoch is the Julian day number of 1970-01-01.
const julianUnixEpoch = 2440588

// toTimestamp converts an int96Raw array into timestamps of t's unit the
// way Arrow C++ does (parquet/types.h Int96GetNanoSeconds and its
// siblings): days since the epoch times the unit's ticks per day, plus
// the nanoseconds of the day in that unit, in unsigned 64-bit arithmetic,
// so values outside the unit's range wrap around as they do in pyarrow.
func toTimestamp(d arrow.ArrayData, t *arrow.TimestampType, mem memory.Allocator) (arrow.ArrayData, error) {
	bufs := d.Buffers()
	n, off := d.Len(), d.Offset()
	if len(bufs) < 2 || bufs[1] == nil || bufs[1].Len() < 12*(off+n) {
		return nil, fmt.Errorf("INT96 column: decoded %d values into a %d-byte buffer", off+n, bufLen(bufs))
	}
	// The result keeps d's offset, so that d's validity bits still apply;
	// the off values before it are not computed. Its 8 bytes a value are
	// less than the 12 of the decoded buffer checked above.
	raw := bufs[1].Bytes()
	perDay, nanosPer := int96Units(t.Unit)
	out := memory.NewResizableBuffer(mem)
	out.Resize(8 * (off + n))
	vals := arrow.Int64Traits.CastFromBytes(out.Bytes())
	for i := off; i < off+n; i++ {
		v := raw[12*i:]
		nanos := binary.LittleEndian.Uint64(v)
		days := uint64(binary.LittleEndian.Uint32(v[8:])) - julianUnixEpoch
		vals[i] = int64(days*perDay + nanos/nanosPer)
	}
	res := array.NewData(t, n, []*memory.Buffer{bufs[0], out}, nil, d.NullN(), off)
	out.Release()
	return res, nil
}

func bufLen(bufs []*memory.Buffer) int {
	if len(bufs) < 2 || bufs[1] == nil {
		return 0
	}
	return bufs[1].Len()
}

// int96Units returns a unit's ticks per day and nanoseconds per tick.
func int96Units(u arrow.TimeUnit) (perDay, nanosPer uint64) {
	const nanosPerDay = 86400 * 1_000_000_000
	switch u {
	case arrow.Second:
		return 86400, 1_000_000_000
	case arrow.Millisecond:
		return 86400 * 1000, 1_000_000
	case arrow.Microsecond:
		return 86400 * 1_000_000, 1000
	}
	return nanosPerDay, 1
}

// legacyListOfLists recognises, under the list node n, the legacy layout
// of a list of lists that old parquet-avro writers used
// (old_list_structure.parquet):
//
//	required group a (LIST) {
//	  repeated group array (LIST) {   // "array" or "a_tuple"
//	    repeated int32 array;
//	  }
//	}
//
// By the format's backward-compatibility rules the repeated group is the
// element, and being a LIST itself, a list. pyarrow 26 reads it so:
// list<array: list<array: int32 not null> not null>. pqarrow makes the
// repeated group a struct, list<array: struct<array: list<item: int32>>>;
// it returns pyarrow's element field, and retype unwraps the struct.
func legacyListOfLists(n *pqarrow.SchemaField, descr *schema.Schema) (arrow.Field, bool) {
	if len(n.Children) != 1 || n.Children[0].Field.Type.ID() != arrow.STRUCT {
		return arrow.Field{}, false
	}
	st := &n.Children[0]
	if len(st.Children) != 1 || len(st.Children[0].Children) != 1 || !st.Children[0].Children[0].IsLeaf() {
		return arrow.Field{}, false
	}
	leaf := &st.Children[0].Children[0]
	node := descr.Column(leaf.ColIndex).SchemaNode()
	group, ok := node.Parent().(*schema.GroupNode)
	if !ok || node.RepetitionType() != parquet.Repetitions.Repeated || group.NumFields() != 1 ||
		group.RepetitionType() != parquet.Repetitions.Repeated || !isListGroup(group) {
		return arrow.Field{}, false
	}
	inner := arrow.Field{Name: node.Name(), Type: leaf.Field.Type, Nullable: false}
	return arrow.Field{Name: group.Name(), Type: arrow.ListOfField(inner), Nullable: false}, true
}

// unannotatedElement is the element field of list n as pyarrow reads it
// when n is a bare repeated field (no LIST annotation: a repeated
// primitive, or a repeated group as in repeated_no_annotation.parquet).
// pqarrow names such an element "item" and makes it nullable; pyarrow
// names it after the repeated field and makes it required, which it is:
// a repeated field's values cannot be null. Any other list keeps elem.
func unannotatedElement(n *pqarrow.SchemaField, elem arrow.Field, descr *schema.Schema) arrow.Field {
	leaf := firstLeaf(n)
	if leaf == nil || leaf.ColIndex < 0 || leaf.ColIndex >= descr.NumColumns() {
		return elem
	}
	// The list's own node is an ancestor of its leaves with its name. A
	// standard list's repeated group may share that name
	// (alltypes-java.parquet: list (LIST) { repeated group list }): an
	// annotated ancestor of that name wins.
	var repeated schema.Node
	for node := descr.Column(leaf.ColIndex).SchemaNode(); node != nil; node = node.Parent() {
		if node.Name() != n.Field.Name {
			continue
		}
		if g, ok := node.(*schema.GroupNode); ok && (isListGroup(g) || g.ConvertedType() == schema.ConvertedTypes.Map) {
			return elem
		}
		if node.RepetitionType() == parquet.Repetitions.Repeated {
			repeated = node
		}
	}
	if repeated == nil {
		return elem
	}
	return arrow.Field{Name: repeated.Name(), Type: elem.Type, Nullable: false, Metadata: elem.Metadata}
}

// firstLeaf is the first leaf under n, nil when there is none.
func firstLeaf(n *pqarrow.SchemaField) *pqarrow.SchemaField {
	if n.IsLeaf() {
		return n
	}
	for i := range n.Children {
		if l := firstLeaf(&n.Children[i]); l != nil {
			return l
		}
	}
	return nil
}

// isListGroup reports whether g is annotated LIST, by its logical or its
// converted type.
func isListGroup(g *schema.GroupNode) bool {
	if _, ok := g.LogicalType().(schema.ListLogicalType); ok {
		return true
	}
	return g.ConvertedType() == schema.ConvertedTypes.List
}

// storedZone returns typ, the type of top-level field i, with the time
// zone the stored Arrow schema gives it. pyarrow writes timestamp[s] as
// milliseconds (Parquet has no seconds) and keeps the zone in
// ARROW:schema; pqarrow drops a stored zone when the units differ and
// says UTC, pyarrow keeps it. The zone is a label: the values are UTC
// either way.
func storedZone(typ arrow.DataType, m *pqarrow.SchemaManifest, i int) arrow.DataType {
	ts, ok := typ.(*arrow.TimestampType)
	if !ok || ts.TimeZone == "" || m.OriginSchema == nil || i >= len(m.Fields) {
		return typ
	}
	idx := m.OriginSchema.FieldIndices(m.Fields[i].Field.Name)
	if len(idx) != 1 {
		return typ
	}
	stored, ok := m.OriginSchema.Field(idx[0]).Type.(*arrow.TimestampType)
	if !ok || stored.TimeZone == "" || stored.TimeZone == ts.TimeZone {
		return typ
	}
	return &arrow.TimestampType{Unit: ts.Unit, TimeZone: stored.TimeZone}
}
