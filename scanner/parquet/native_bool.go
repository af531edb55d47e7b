package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BOOLEAN columns. PLAIN booleans are bit-packed LSB first, which is
// Arrow's bitmap order, so a page's values (or an RLE page's, decoded to
// a bitmap by decodeRLEBools) are copied bits at a time; pages with nulls
// are spaced out bit by bit.

// takeBools decodes the next n rows of a BOOLEAN column.
func (c *columnCursor) takeBools(n int, mem memory.Allocator) (arrow.ArrayData, error) {
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(n))))
	out := vals.Bytes()
	clear(out[len(out)-1:]) // bits past n
	var valid *memory.Buffer
	nulls := 0
	for done := 0; done < n; {
		p, err := c.page()
		if err != nil {
			release(vals, valid)
			return nil, err
		}
		k := min(n-done, p.rows-c.row)
		v := p.valuesBefore(c.row)
		if p.nulls == 0 {
			bitutil.CopyBitmap(p.values, v, k, out, done)
			if valid != nil {
				bitutil.SetBitsTo(valid.Bytes(), int64(done), int64(k), true)
			}
		} else {
			if valid == nil {
				valid = newValidity(mem, n, done)
			}
			nulls += spaceBools(out, valid.Bytes(), done, p, c.row, v, k)
		}
		c.row += k
		done += k
	}
	c.dropConsumed()
	if nulls == 0 && valid != nil {
		valid.Release()
		valid = nil
	}
	d := array.NewData(c.col.typ, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	release(vals, valid)
	return d, nil
}

// newValidity returns a validity bitmap for n rows whose first done rows
// are valid.
func newValidity(mem memory.Allocator, n, done int) *memory.Buffer {
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(int64(n))))
	vb := valid.Bytes()
	vb[len(vb)-1] = 0 // bits past n
	bitutil.SetBitsTo(vb, 0, int64(done), true)
	return valid
}

// spaceBools writes rows [row, row+k) of page p, whose first value is
// value v, at bit done of out and vb, and returns the nulls among them.
func spaceBools(out, vb []byte, done int, p *nativePage, row, v, k int) (nulls int) {
	for i := range k {
		if bitutil.BitIsSet(p.valid, row+i) {
			bitutil.SetBitTo(out, done+i, bitutil.BitIsSet(p.values, v))
			bitutil.SetBit(vb, done+i)
			v++
		} else {
			bitutil.ClearBit(out, done+i)
			bitutil.ClearBit(vb, done+i)
			nulls++
		}
	}
	return nulls
}
