package scanner

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// DecodeDictionary returns the values of a dictionary array (the
// dictionary taken by the indices; a null index is a null value), a new
// array. Readers hand the filter's columns over as dictionaries
// (ReadOptions.FilterDictionaries) and their callers decode them back a
// batch, or a slice of one, at a time: for int32 indices over fixed-width,
// string or binary values it gathers directly, sizing the output first,
// which costs a small part of arrow-go's take kernel on the small batches
// a late read makes; other dictionaries go through take.
func DecodeDictionary(d *array.Dictionary, mem memory.Allocator) (arrow.Array, error) {
	idx, ok := d.Indices().(*array.Int32)
	if ok {
		if out, ok, err := gatherDictionary(d.Dictionary(), idx, mem); ok || err != nil {
			return out, err
		}
	}
	out, err := compute.TakeArray(compute.WithAllocator(context.Background(), mem), d.Dictionary(), d.Indices())
	if err != nil {
		return nil, fmt.Errorf("decoding a dictionary: %w", err)
	}
	return out, nil
}

// gatherDictionary is DecodeDictionary for the layouts it gathers
// itself; ok is false for the others.
func gatherDictionary(dict arrow.Array, idx *array.Int32, mem memory.Allocator) (_ arrow.Array, ok bool, err error) {
	if dict.NullN() > 0 || dict.Data().Offset() != 0 {
		return nil, false, nil
	}
	n, m := idx.Len(), dict.Len()
	ix := idx.Int32Values()
	nulls := idx.NullN()
	// Every valid index must name an entry; a null one may hold anything
	// and reads entry 0 (or nothing, from an empty dictionary).
	for i, e := range ix {
		if uint32(e) >= uint32(m) {
			if nulls == 0 || idx.IsValid(i) {
				return nil, false, fmt.Errorf("dictionary index %d of a dictionary of %d", e, m)
			}
		}
	}
	var valid *memory.Buffer
	if nulls > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(idx.NullBitmapBytes(), idx.Data().Offset(), n, valid.Bytes(), 0)
	}
	at := func(i int) int {
		if e := ix[i]; uint32(e) < uint32(m) {
			return int(e)
		}
		return -1 // a null slot's out-of-range index
	}
	var bufs []*memory.Buffer
	switch dt := dict.DataType().(type) {
	case arrow.FixedWidthDataType:
		w := dt.BitWidth() / 8
		if dt.BitWidth()%8 != 0 || w == 0 || len(dict.Data().Buffers()) != 2 {
			release(valid)
			return nil, false, nil
		}
		src := dict.Data().Buffers()[1].Bytes()
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(n * w)
		out := vals.Bytes()
		for i := range n {
			if e := at(i); e >= 0 {
				copy(out[i*w:(i+1)*w], src[e*w:(e+1)*w])
			} else {
				clear(out[i*w : (i+1)*w])
			}
		}
		bufs = []*memory.Buffer{valid, vals}
	case *arrow.StringType, *arrow.BinaryType:
		bin := dict.Data()
		offs := arrow.Int32Traits.CastFromBytes(bin.Buffers()[1].Bytes())
		var src []byte
		if b := bin.Buffers()[2]; b != nil {
			src = b.Bytes()
		}
		total := 0
		for i := range n {
			if e := at(i); e >= 0 && (nulls == 0 || idx.IsValid(i)) {
				total += int(offs[e+1] - offs[e])
			}
		}
		if total > math.MaxInt32 {
			release(valid)
			return nil, false, nil
		}
		offsets := memory.NewResizableBuffer(mem)
		offsets.Resize(4 * (n + 1))
		oo := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
		data := memory.NewResizableBuffer(mem)
		data.Resize(total)
		db := data.Bytes()
		pos := int32(0)
		oo[0] = 0
		for i := range n {
			if e := at(i); e >= 0 && (nulls == 0 || idx.IsValid(i)) {
				pos += int32(copy(db[pos:], src[offs[e]:offs[e+1]]))
			}
			oo[i+1] = pos
		}
		bufs = []*memory.Buffer{valid, offsets, data}
	default:
		release(valid)
		return nil, false, nil
	}
	out := array.NewData(dict.DataType(), n, bufs, nil, nulls, 0)
	release(bufs...)
	defer out.Release()
	return array.MakeFromData(out), true, nil
}

func release(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}
