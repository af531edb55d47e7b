package deletes

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Deleted positions are sorted, so a batch's kept rows are runs: a table
// that deleted every tenth row keeps runs of nine. Apply copies the runs
// of each column itself (values run-wise, offsets rebased) rather than
// through compute's Filter, whose var-binary kernel takes value by value
// through an index array: that Take was most of the extra CPU of a scan
// with deletes (issue #28's profile).

// run is the rows [start, end) of an array, from its logical start.
type run struct{ start, end int64 }

// keptRuns lists the rows of a batch made of spans that rows does not
// delete, and counts them.
func keptRuns(rows *Rows, spans []Span) (runs []run, kept int64) {
	at := int64(0) // the batch row of the span's first row
	keep := func(start, end int64) {
		if end <= start {
			return
		}
		kept += end - start
		if k := len(runs); k > 0 && runs[k-1].end == start {
			runs[k-1].end = end
			return
		}
		runs = append(runs, run{start, end})
	}
	for _, s := range spans {
		from := at
		for _, d := range deletedIn(rows, s.FirstRow, s.Rows) {
			keep(from, at+d)
			from = at + d + 1
		}
		keep(from, at+s.Rows)
		at += s.Rows
	}
	return runs, kept
}

// takeRuns copies the rows runs selects (n of them) of d into new
// buffers from mem; ok is false for a layout it does not copy (unions,
// views, extension types), which the caller filters otherwise. The caller
// releases the result.
func takeRuns(d arrow.ArrayData, runs []run, n int64, mem memory.Allocator) (_ arrow.ArrayData, ok bool) {
	dt := d.DataType()
	if dt.ID() == arrow.NULL {
		return array.NewData(dt, int(n), []*memory.Buffer{nil}, nil, int(n), 0), true
	}
	off := int64(d.Offset())
	bufs := d.Buffers()
	if len(bufs) == 0 {
		return nil, false
	}
	valid, nulls := (*memory.Buffer)(nil), 0
	if bufs[0] != nil && d.NullN() != 0 {
		valid = copyBits(bufs[0].Bytes(), off, runs, n, mem)
		nulls = int(n) - bitutil.CountSetBits(valid.Bytes(), 0, int(n))
	}
	var (
		out      []*memory.Buffer
		children []arrow.ArrayData
		dict     arrow.ArrayData
	)
	defer func() {
		release(out...)
		for _, c := range children {
			c.Release()
		}
	}()
	fail := func() (arrow.ArrayData, bool) {
		release(valid)
		return nil, false
	}
	layout := dt
	if dd, isDict := dt.(*arrow.DictionaryType); isDict {
		layout, dict = dd.IndexType, d.Dictionary()
	}
	switch t := layout.(type) {
	case *arrow.BooleanType:
		if len(bufs) != 2 || bufs[1] == nil {
			return fail()
		}
		out = []*memory.Buffer{valid, copyBits(bufs[1].Bytes(), off, runs, n, mem)}
	case *arrow.StringType, *arrow.BinaryType:
		if len(bufs) != 3 || bufs[1] == nil {
			return fail()
		}
		offsets, data := takeVarBinary(arrow.Int32Traits.CastFromBytes(bufs[1].Bytes()), arrow.Int32Traits.CastFromBytes, bytesOf(bufs[2]), off, runs, n, mem)
		out = []*memory.Buffer{valid, offsets, data}
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if len(bufs) != 3 || bufs[1] == nil {
			return fail()
		}
		offsets, data := takeVarBinary(arrow.Int64Traits.CastFromBytes(bufs[1].Bytes()), arrow.Int64Traits.CastFromBytes, bytesOf(bufs[2]), off, runs, n, mem)
		out = []*memory.Buffer{valid, offsets, data}
	case *arrow.StructType:
		// A struct's offset applies to its children on top of their own.
		shifted := shiftRuns(runs, off)
		for _, c := range d.Children() {
			cd, ok := takeRuns(c, shifted, n, mem)
			if !ok {
				return fail()
			}
			children = append(children, cd)
		}
		out = []*memory.Buffer{valid}
	case *arrow.ListType, *arrow.MapType:
		if len(bufs) != 2 || bufs[1] == nil || len(d.Children()) != 1 {
			return fail()
		}
		offsets, childRuns, childN := takeListOffsets(arrow.Int32Traits.CastFromBytes(bufs[1].Bytes()), arrow.Int32Traits.CastFromBytes, off, runs, n, mem)
		out = []*memory.Buffer{valid, offsets}
		cd, ok := takeRuns(d.Children()[0], childRuns, childN, mem)
		if !ok {
			return fail()
		}
		children = append(children, cd)
	case *arrow.LargeListType:
		if len(bufs) != 2 || bufs[1] == nil || len(d.Children()) != 1 {
			return fail()
		}
		offsets, childRuns, childN := takeListOffsets(arrow.Int64Traits.CastFromBytes(bufs[1].Bytes()), arrow.Int64Traits.CastFromBytes, off, runs, n, mem)
		out = []*memory.Buffer{valid, offsets}
		cd, ok := takeRuns(d.Children()[0], childRuns, childN, mem)
		if !ok {
			return fail()
		}
		children = append(children, cd)
	case *arrow.FixedSizeListType:
		if len(d.Children()) != 1 {
			return fail()
		}
		size := int64(t.Len())
		childRuns := make([]run, 0, len(runs))
		for _, r := range runs {
			if size > 0 {
				childRuns = append(childRuns, run{(off + r.start) * size, (off + r.end) * size})
			}
		}
		cd, ok := takeRuns(d.Children()[0], childRuns, n*size, mem)
		if !ok {
			return fail()
		}
		children = append(children, cd)
		out = []*memory.Buffer{valid}
	case arrow.FixedWidthDataType:
		w := int64(t.BitWidth() / 8)
		if t.BitWidth()%8 != 0 || w == 0 || len(bufs) != 2 || bufs[1] == nil {
			return fail()
		}
		out = []*memory.Buffer{valid, copyValues(bufs[1].Bytes(), w, off, runs, n, mem)}
	default:
		return fail()
	}
	res := array.NewData(dt, int(n), out, children, nulls, 0)
	if dict != nil {
		res.SetDictionary(dict)
	}
	return res, true
}

func bytesOf(b *memory.Buffer) []byte {
	if b == nil {
		return nil
	}
	return b.Bytes()
}

func release(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

func newBuffer(mem memory.Allocator, n int64) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(int(n))
	return b
}

func shiftRuns(runs []run, by int64) []run {
	if by == 0 {
		return runs
	}
	out := make([]run, len(runs))
	for i, r := range runs {
		out[i] = run{r.start + by, r.end + by}
	}
	return out
}

// copyBits copies the bits of the runs of src (from bit off) into a new
// bitmap of n bits.
func copyBits(src []byte, off int64, runs []run, n int64, mem memory.Allocator) *memory.Buffer {
	buf := newBuffer(mem, bitutil.BytesForBits(n))
	dst := buf.Bytes()
	at := int64(0)
	for _, r := range runs {
		if k := r.end - r.start; k >= 64 {
			bitutil.CopyBitmap(src, int(off+r.start), int(k), dst, int(at))
			at += k
			continue
		}
		// Short runs bit by bit: CopyBitmap sets up a reader and a writer
		// per call.
		for i := off + r.start; i < off+r.end; i++ {
			bitutil.SetBitTo(dst, int(at), bitutil.BitIsSet(src, int(i)))
			at++
		}
	}
	return buf
}

// copyValues copies the runs of src, values of w bytes from value off,
// into a new buffer of n values.
func copyValues(src []byte, w, off int64, runs []run, n int64, mem memory.Allocator) *memory.Buffer {
	buf := newBuffer(mem, n*w)
	dst := buf.Bytes()
	at := int64(0)
	for _, r := range runs {
		at += int64(copy(dst[at:], src[(off+r.start)*w:(off+r.end)*w]))
	}
	return buf
}

// takeVarBinary copies the runs of a var-binary layout (offsets from value
// off, and their data): the data run-wise, the offsets rebased.
func takeVarBinary[O int32 | int64](offs []O, cast func([]byte) []O, src []byte, off int64, runs []run, n int64, mem memory.Allocator) (offsets, data *memory.Buffer) {
	var total O
	for _, r := range runs {
		total += offs[off+r.end] - offs[off+r.start]
	}
	var zero O
	offsets = newBuffer(mem, (n+1)*int64(sizeOf(zero)))
	data = newBuffer(mem, int64(total))
	oo, db := cast(offsets.Bytes()), data.Bytes()
	var pos O
	at := 0
	oo[0] = 0
	for _, r := range runs {
		base := offs[off+r.start]
		shift := pos - base
		for _, o := range offs[off+r.start+1 : off+r.end+1] {
			at++
			oo[at] = o + shift
		}
		pos += O(copy(db[pos:], src[base:offs[off+r.end]]))
	}
	return offsets, data
}

// takeListOffsets rebases the offsets of a list layout's runs and lists
// the child's runs they cover (adjacent ones merged) and its rows.
func takeListOffsets[O int32 | int64](offs []O, cast func([]byte) []O, off int64, runs []run, n int64, mem memory.Allocator) (offsets *memory.Buffer, childRuns []run, childN int64) {
	var zero O
	offsets = newBuffer(mem, (n+1)*int64(sizeOf(zero)))
	oo := cast(offsets.Bytes())
	var pos O
	at := 0
	oo[0] = 0
	for _, r := range runs {
		base, end := offs[off+r.start], offs[off+r.end]
		shift := pos - base
		for _, o := range offs[off+r.start+1 : off+r.end+1] {
			at++
			oo[at] = o + shift
		}
		pos += end - base
		if end == base {
			continue
		}
		if k := len(childRuns); k > 0 && childRuns[k-1].end == int64(base) {
			childRuns[k-1].end = int64(end)
		} else {
			childRuns = append(childRuns, run{int64(base), int64(end)})
		}
	}
	return offsets, childRuns, int64(pos)
}

func sizeOf[O int32 | int64](o O) int {
	if _, is32 := any(o).(int32); is32 {
		return 4
	}
	return 8
}
