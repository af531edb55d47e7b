package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// conform returns rec with exactly the scan's unified schema: columns in
// its order, columns this file lacks as nulls. rec stays the caller's.
func conform(rec arrow.RecordBatch, schema *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	cols := make([]arrow.Array, schema.NumFields())
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	have := rec.Schema()
	for i, f := range schema.Fields() {
		idx := have.FieldIndices(f.Name)
		if len(idx) == 0 {
			a := array.MakeArrayOfNull(mem, f.Type, int(n))
			made = append(made, a)
			cols[i] = a
			continue
		}
		col := rec.Column(idx[0])
		if d, ok := col.(*array.Dictionary); ok && f.Type.ID() != arrow.DICTIONARY {
			// A filter column the reader kept as the file's dictionary
			// (scanner.ReadOptions.FilterDictionaries): only the rows the
			// filter kept are decoded.
			values, err := scanner.DecodeDictionary(d, mem)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", f.Name, err)
			}
			made = append(made, values)
			col = values
		}
		if !arrow.TypeEqual(col.DataType(), f.Type) {
			changed, err := conformColumn(col, f, mem)
			if err != nil {
				return nil, err
			}
			made = append(made, changed)
			col = changed
		}
		cols[i] = col
	}
	return array.NewRecordBatch(schema, cols, n), nil
}

// stripFieldMetadata is dt with the metadata of its nested fields dropped:
// arrow.TypeEqual compares it for large lists (and through them), where
// readers and the scan's schema may disagree on a child's PARQUET:field_id
// with the same layout.
func stripFieldMetadata(dt arrow.DataType) arrow.DataType {
	plain := func(f arrow.Field) arrow.Field {
		return arrow.Field{Name: f.Name, Type: stripFieldMetadata(f.Type), Nullable: f.Nullable}
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		fields := make([]arrow.Field, t.NumFields())
		for i, f := range t.Fields() {
			fields[i] = plain(f)
		}
		return arrow.StructOf(fields...)
	case *arrow.ListType:
		return arrow.ListOfField(plain(t.ElemField()))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(plain(t.ElemField()))
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), plain(t.ElemField()))
	}
	return dt
}

// relabel gives col the type dt, which has its layout (stripFieldMetadata
// says so), without copying.
func relabel(col arrow.Array, dt arrow.DataType) arrow.Array {
	d := relabelData(col.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d)
}

func relabelData(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	children := d.Children()
	out := make([]arrow.ArrayData, len(children))
	nt, nested := dt.(arrow.NestedType)
	for i, c := range children {
		if nested && len(nt.Fields()) == len(children) {
			out[i] = relabelData(c, nt.Fields()[i].Type)
		} else {
			c.Retain()
			out[i] = c
		}
	}
	defer func() {
		for _, c := range out {
			c.Release()
		}
	}()
	return array.NewData(dt, d.Len(), d.Buffers(), out, d.NullN(), d.Offset())
}

// conformColumn gives col the scan's type of f: a column whose type differs
// only in nested field metadata is relabelled, a struct read wider for a
// filter is narrowed, and a column whose type the scan promotes is cast
// (scanner.Promotable; checked: a value the cast would change fails).
func conformColumn(col arrow.Array, f arrow.Field, mem memory.Allocator) (arrow.Array, error) {
	if arrow.TypeEqual(stripFieldMetadata(col.DataType()), stripFieldMetadata(f.Type)) {
		return relabel(col, f.Type), nil // only nested field metadata differs
	}
	if narrowed, err := narrowStruct(col, f.Type); err == nil {
		return narrowed, nil
	}
	if !scanner.Promotable(col.DataType(), f.Type) {
		return nil, fmt.Errorf("column %q is %s in this file but %s in the scan's schema", f.Name, col.DataType(), f.Type)
	}
	out, err := castColumn(col, f.Type, mem)
	if err != nil {
		return nil, fmt.Errorf("column %q is %s in this file, and casting it to the scan's %s (the first file's type, docs/schemas.md) fails: %w",
			f.Name, col.DataType(), f.Type, err)
	}
	return out, nil
}

// castColumn casts col to type to with arrow-go's safe cast, which
// cannot make dictionaries: a dictionary target is built from the decoded
// values instead.
func castColumn(col arrow.Array, to arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	ctx := compute.WithAllocator(context.Background(), mem)
	dt, ok := to.(*arrow.DictionaryType)
	if !ok {
		return compute.CastArray(ctx, col, compute.SafeCastOptions(to))
	}
	if col.DataType().ID() == arrow.NULL {
		return array.MakeArrayOfNull(mem, to, col.Len()), nil
	}
	values := col
	if !arrow.TypeEqual(col.DataType(), dt.ValueType) {
		var err error
		if values, err = compute.CastArray(ctx, col, compute.SafeCastOptions(dt.ValueType)); err != nil {
			return nil, err
		}
		defer values.Release()
	}
	return encodeDictionary(values, dt, mem)
}

// encodeDictionary builds a dictionary array of type dt from values of its
// value type; more distinct values than dt's indexes can number is an
// error.
func encodeDictionary(values arrow.Array, dt *arrow.DictionaryType, mem memory.Allocator) (_ arrow.Array, err error) {
	b := array.NewDictionaryBuilder(mem, dt)
	defer b.Release()
	defer func() {
		if r := recover(); r != nil { // arrow-go panics on some overflows
			err = fmt.Errorf("dictionary encoding: %v", r)
		}
	}()
	if err := b.AppendArray(values); err != nil {
		return nil, err
	}
	out := b.NewArray()
	if n := out.(*array.Dictionary).Dictionary().Len(); !fitsIndex(n, dt.IndexType) {
		out.Release()
		return nil, fmt.Errorf("%d distinct values do not fit %s dictionary indexes", n, dt.IndexType)
	}
	return out, nil
}

// fitsIndex says whether n dictionary entries can be indexed by t.
func fitsIndex(n int, t arrow.DataType) bool {
	limit := map[arrow.Type]int{arrow.INT8: 1 << 7, arrow.UINT8: 1 << 8, arrow.INT16: 1 << 15, arrow.UINT16: 1 << 16}
	if l, ok := limit[t.ID()]; ok {
		return n <= l
	}
	return true
}

// errNotNarrower says a column cannot be narrowed to the wanted type.
var errNotNarrower = errors.New("not a narrower struct")

// narrowStruct keeps the children of a struct column that want names: a
// filter read more of a struct than the scan returns ("s.a" filtered,
// "s.b" returned). The result shares col's buffers.
func narrowStruct(col arrow.Array, want arrow.DataType) (arrow.Array, error) {
	d, err := narrowData(col.Data(), want)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// narrowData works on the array data: a struct's own child data are
// unsliced (its offset applies to them), unlike its Field arrays.
func narrowData(d arrow.ArrayData, want arrow.DataType) (arrow.ArrayData, error) {
	have, ok := d.DataType().(*arrow.StructType)
	wt, wok := want.(*arrow.StructType)
	if !ok || !wok {
		return nil, errNotNarrower
	}
	children := make([]arrow.ArrayData, 0, wt.NumFields())
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	for _, wf := range wt.Fields() {
		i, ok := have.FieldIdx(wf.Name)
		if !ok {
			return nil, errNotNarrower
		}
		child := d.Children()[i]
		if arrow.TypeEqual(child.DataType(), wf.Type) {
			child.Retain()
		} else {
			var err error
			if child, err = narrowData(child, wf.Type); err != nil {
				return nil, err
			}
		}
		children = append(children, child)
	}
	return array.NewData(wt, d.Len(), d.Buffers()[:1], children, d.NullN(), d.Offset()), nil
}

func emptyBatch(schema *arrow.Schema, mem memory.Allocator) arrow.RecordBatch {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	rec := array.NewRecordBatch(schema, cols, 0)
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// splitBatch cuts rec into slices of at most cutAt bytes each (by
// estimate), halving until they fit; with cutAt 0 it returns rec whole.
// The slices share rec's buffers. Ownership of rec passes to the result.
func splitBatch(rec arrow.RecordBatch, cutAt int64) []arrow.RecordBatch {
	if cutAt <= 0 || rec.NumRows() <= 1 || BatchBytes(rec) <= cutAt {
		return []arrow.RecordBatch{rec}
	}
	mid := rec.NumRows() / 2
	left, right := rec.NewSlice(0, mid), rec.NewSlice(mid, rec.NumRows())
	rec.Release()
	return append(splitBatch(left, cutAt), splitBatch(right, cutAt)...)
}

// BatchBytes estimates the IPC body size of rec, counting only the part of
// each buffer a sliced array uses.
func BatchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += arrayBytes(c.Data())
	}
	return n
}

func arrayBytes(d arrow.ArrayData) int64 {
	length, offset := int64(d.Len()), int64(d.Offset())
	n := (length + 7) / 8 // validity bitmap, when present; cheap to over-count
	bufs := d.Buffers()
	switch dt := d.DataType().(type) {
	case *arrow.BooleanType:
		return n + (length+7)/8
	case arrow.FixedWidthDataType:
		return n + length*int64(dt.BitWidth()+7)/8
	case *arrow.StringType, *arrow.BinaryType:
		if len(bufs) < 3 || bufs[1] == nil || length == 0 {
			return n
		}
		offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())
		if int64(len(offs)) < offset+length+1 {
			return n + int64(bufLen(bufs))
		}
		return n + 4*(length+1) + int64(offs[offset+length]-offs[offset])
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if len(bufs) < 3 || bufs[1] == nil || length == 0 {
			return n
		}
		offs := arrow.Int64Traits.CastFromBytes(bufs[1].Bytes())
		if int64(len(offs)) < offset+length+1 {
			return n + int64(bufLen(bufs))
		}
		return n + 8*(length+1) + offs[offset+length] - offs[offset]
	case *arrow.ListType, *arrow.MapType:
		if len(bufs) < 2 || bufs[1] == nil || length == 0 || len(d.Children()) == 0 {
			return n
		}
		offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())
		if int64(len(offs)) < offset+length+1 {
			return n + int64(bufLen(bufs)) + childBytes(d)
		}
		child := d.Children()[0]
		start, end := int64(offs[offset]), int64(offs[offset+length])
		whole := arrayBytes(child)
		if clen := int64(child.Len()); clen > 0 {
			return n + 4*(length+1) + whole*(end-start)/clen
		}
		return n + 4*(length+1)
	case *arrow.StructType:
		var c int64
		for _, ch := range d.Children() {
			whole := arrayBytes(ch)
			if clen := int64(ch.Len()); clen > 0 {
				c += whole * length / clen
			}
		}
		return n + c
	}
	return n + int64(bufLen(bufs)) + childBytes(d)
}

func childBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, c := range d.Children() {
		n += arrayBytes(c)
	}
	// Dictionary returns a typed nil for arrays without one.
	if d.DataType().ID() == arrow.DICTIONARY {
		if dict := d.Dictionary(); dict != nil && dict.(*array.Data) != nil {
			n += arrayBytes(dict)
		}
	}
	return n
}

func bufLen(bufs []*memory.Buffer) int {
	n := 0
	for _, b := range bufs {
		if b != nil {
			n += b.Len()
		}
	}
	return n
}
