package parquet

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// Filter columns as dictionaries. A filtered read whose caller decodes
// dictionaries back (scanner.ReadOptions.FilterDictionaries) gets the
// filter's dictionary-encoded columns (strings, numbers, temporal values,
// decimals) as Arrow dictionary arrays: the page's indices, over the
// chunk's dictionary copied once into an Arrow array. The filter then
// tests each distinct value once (`city = 'Boston'`, IN, LIKE 'San%',
// `fare > 100`) and maps the answers through the indices, where it would
// otherwise hash or compare every row's value; IS NULL reads the indices'
// validity alone; and the values of the rows it rejects are never
// gathered, since the caller decodes only the rows it keeps.
//
// A batch stays plain where a dictionary cannot stand for it: rows that
// reach a page the writer stored PLAIN (it gave up on the dictionary
// mid-chunk), or a dictionary with more entries than the batch has rows
// (testing every entry would cost more than testing every row).

// filterDictLeaves lists the leaves a read may return as dictionaries:
// the flat columns the filter names whose type dictionaryValueType
// allows, when the caller asked for it.
func filterDictLeaves(p *scanner.Projection, impl *projection, opts scanner.ReadOptions) map[int]bool {
	if !opts.FilterDictionaries || opts.Filter == nil || impl.native == nil {
		return nil
	}
	names := map[string]bool{}
	for _, c := range opts.Filter.Columns() {
		names[c] = true
	}
	var out map[int]bool
	for i, c := range impl.native {
		if c.leaf < 0 || c.nested != nil || c.levels || c.repeated || !dictionaryValueType(c) ||
			!names[p.Schema.Field(i).Name] {
			continue
		}
		if out == nil {
			out = map[int]bool{}
		}
		out[c.leaf] = true
	}
	return out
}

// dictionaryValueType says whether the reader makes dictionary arrays of
// c's values: strings and binaries (offsets and data), and the fixed-width
// types the filter compares directly, whose dictionary page is held in
// Arrow's layout once loaded (convertDict).
func dictionaryValueType(c nativeColumn) bool {
	switch c.typ.ID() {
	case arrow.STRING, arrow.BINARY:
		return c.kind == kindBytes
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64,
		arrow.DURATION, arrow.DECIMAL128, arrow.DECIMAL256:
		return c.kind == kindFixed && c.width > 0
	}
	return false
}

// takeDictionary decodes the next n rows of a column as a
// dictionary array over the chunk's dictionary. ok is false, with nothing
// consumed, when the rows cannot be one (see the top of this file).
func (c *columnCursor) takeDictionary(n int, mem memory.Allocator) (_ arrow.ArrayData, ok bool, err error) {
	if c.dict == nil || n == 0 {
		return nil, false, nil
	}
	rows := 0
	for i := c.pi; i < len(c.pages) && rows < n; i++ {
		p := &c.pages[i]
		if err := c.load(p); err != nil {
			return nil, false, err
		}
		if !p.dict {
			return nil, false, nil
		}
		from := 0
		if i == c.pi {
			from = c.row
		}
		rows += p.rows - from
	}
	if rows < n {
		return nil, false, corrupt("column has fewer rows than its row group")
	}
	d, err := c.loadDict()
	if err != nil {
		return nil, false, err
	}
	if d.n > n {
		return nil, false, nil
	}
	values, err := c.arrowValues(d, mem)
	if err != nil {
		return nil, false, err
	}
	indices := memory.NewResizableBuffer(mem)
	indices.Resize(4 * n)
	ix := arrow.Int32Traits.CastFromBytes(indices.Bytes())
	var valid *memory.Buffer
	var vb []byte
	nulls := 0
	for done := 0; done < n; {
		p, err := c.page() // loaded above
		if err != nil {
			release(indices, valid)
			return nil, false, err
		}
		k := min(n-done, p.rows-c.row)
		v := p.valuesBefore(c.row)
		m := p.valuesBefore(c.row+k) - v
		idx, err := c.indices(p, v, m)
		if err != nil {
			release(indices, valid)
			return nil, false, err
		}
		if p.nulls == 0 {
			copy(ix[done:done+k], idx)
			if valid != nil {
				bitutil.SetBitsTo(vb, int64(done), int64(k), true)
			}
		} else {
			if valid == nil {
				valid = memory.NewResizableBuffer(mem)
				valid.Resize(int(bitutil.BytesForBits(int64(n))))
				vb = valid.Bytes()
				vb[len(vb)-1] = 0 // bits past n
				bitutil.SetBitsTo(vb, 0, int64(done), true)
			}
			j := 0
			for i := range k {
				if bitutil.BitIsSet(p.valid, c.row+i) {
					ix[done+i] = idx[j]
					j++
				} else {
					ix[done+i] = 0 // a valid entry: kernels may read it
				}
			}
			bitutil.CopyBitmap(p.valid, c.row, k, vb, done)
			nulls += k - m
		}
		c.row += k
		done += k
	}
	c.dropConsumed()
	if nulls == 0 && valid != nil {
		valid.Release()
		valid = nil
	}
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: c.col.typ}
	out := array.NewDataWithDictionary(dt, n, []*memory.Buffer{valid, indices}, nulls, 0, values)
	release(indices, valid)
	return out, true, nil
}

// arrowValues is the dictionary's entries as an Arrow array of c's
// type, built the first time a batch needs it and shared by the chunk's
// batches. The returned data is the dictionary's reference; the batches
// retain it.
func (c *columnCursor) arrowValues(d *nativeDict, mem memory.Allocator) (*array.Data, error) {
	if d.arr != nil {
		return d.arr, nil
	}
	typ := c.col.typ
	if w := c.col.width; c.col.kind == kindFixed {
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(d.n * w)
		copy(vals.Bytes(), d.values[:d.n*w])
		d.arr = array.NewData(typ, d.n, []*memory.Buffer{nil, vals}, nil, 0, 0)
		vals.Release()
		return d.arr, nil
	}
	total := 0
	for _, ln := range d.lns {
		total += int(ln)
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("a dictionary of %d bytes of strings: %w", total, scanner.ErrUnsupported)
	}
	offsets := memory.NewResizableBuffer(mem)
	offsets.Resize(4 * (d.n + 1))
	offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	data := memory.NewResizableBuffer(mem)
	data.Resize(total)
	db := data.Bytes()
	at := int32(0)
	offs[0] = 0
	for i := range d.n {
		st, ln := d.starts[i], d.lns[i]
		copy(db[at:at+ln], d.values[st:st+ln])
		at += ln
		offs[i+1] = at
	}
	d.arr = array.NewData(typ, d.n, []*memory.Buffer{nil, offsets, data}, nil, 0, 0)
	release(offsets, data)
	return d.arr, nil
}

// withColumnTypes is sc with each field's type made its column's, where
// a column is a dictionary over the field's type (takeDictionary); sc
// itself when none is.
func withColumnTypes(sc *arrow.Schema, cols []arrow.Array) *arrow.Schema {
	return retyped(sc, cols, func(f arrow.Field, c arrow.Array) bool {
		return c.DataType().ID() == arrow.DICTIONARY && f.Type.ID() != arrow.DICTIONARY
	})
}

// withPlainTypes is sc with each dictionary field that its column holds
// decoded (plainColumn) given its column's type.
func withPlainTypes(sc *arrow.Schema, cols []arrow.Array) *arrow.Schema {
	return retyped(sc, cols, func(f arrow.Field, c arrow.Array) bool { return !arrow.TypeEqual(c.DataType(), f.Type) })
}

// retyped is sc with the fields that take their column's type (takes
// says which) given it; sc itself when none does.
func retyped(sc *arrow.Schema, cols []arrow.Array, takes func(f arrow.Field, c arrow.Array) bool) *arrow.Schema {
	var fields []arrow.Field
	for i, c := range cols {
		if !takes(sc.Field(i), c) {
			continue
		}
		if fields == nil {
			fields = append([]arrow.Field{}, sc.Fields()...)
		}
		fields[i].Type = c.DataType()
	}
	if fields == nil {
		return sc
	}
	md := sc.Metadata()
	return arrow.NewSchema(fields, &md)
}

// plainColumn is a, decoded to its values when it is a dictionary the
// reader made (takeDictionary), whose output type want is not; a new
// reference either way.
func plainColumn(a arrow.Array, want arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	d, ok := a.(*array.Dictionary)
	if !ok || want.ID() == arrow.DICTIONARY {
		a.Retain()
		return a, nil
	}
	return scanner.DecodeDictionary(d, mem)
}
