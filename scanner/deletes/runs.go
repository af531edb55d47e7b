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

// piece is the rows runs selects of one array: a batch's column, or a
// child of one.
type piece struct {
	d    arrow.ArrayData
	runs []run
}

// takeRuns copies the rows runs selects (n of them) of d into new
// buffers from mem; ok is false for a layout it does not copy (unions,
// views, extension types), which the caller filters otherwise. The caller
// releases the result.
func takeRuns(d arrow.ArrayData, runs []run, n int64, mem memory.Allocator) (_ arrow.ArrayData, ok bool) {
	return takePieces([]piece{{d, runs}}, n, mem)
}

// takePieces copies the selected rows of pieces of one type, in order,
// into one array of n rows, as takeRuns does one. ok is also false for
// dictionary pieces of different dictionaries.
func takePieces(ps []piece, n int64, mem memory.Allocator) (_ arrow.ArrayData, ok bool) {
	dt := ps[0].d.DataType()
	if dt.ID() == arrow.NULL {
		return array.NewData(dt, int(n), []*memory.Buffer{nil}, nil, int(n), 0), true
	}
	for _, p := range ps {
		if len(p.d.Buffers()) == 0 {
			return nil, false
		}
	}
	valid, nulls := (*memory.Buffer)(nil), 0
	for _, p := range ps {
		if p.d.Buffers()[0] != nil && p.d.NullN() != 0 {
			valid = copyValidity(ps, n, mem)
			nulls = int(n) - bitutil.CountSetBits(valid.Bytes(), 0, int(n))
			break
		}
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
	// buf is the i-th buffer of every piece, or false when one lacks it.
	buf := func(i int) ([][]byte, bool) {
		bs := make([][]byte, len(ps))
		for k, p := range ps {
			b := p.d.Buffers()
			if len(b) <= i || b[i] == nil {
				return nil, false
			}
			bs[k] = b[i].Bytes()
		}
		return bs, true
	}
	layout := dt
	if dd, isDict := dt.(*arrow.DictionaryType); isDict {
		layout, dict = dd.IndexType, ps[0].d.Dictionary()
		for _, p := range ps[1:] {
			if !sameDictionary(dict, p.d.Dictionary()) {
				return fail()
			}
		}
	}
	switch t := layout.(type) {
	case *arrow.BooleanType:
		vals, ok := buf(1)
		if !ok {
			return fail()
		}
		out = []*memory.Buffer{valid, copyBits(vals, ps, n, mem)}
	case *arrow.StringType, *arrow.BinaryType:
		offs, ok := buf(1)
		if !ok {
			return fail()
		}
		offsets, data := takeVarBinary(offs, arrow.Int32Traits.CastFromBytes, dataOf(ps), ps, n, mem)
		out = []*memory.Buffer{valid, offsets, data}
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		offs, ok := buf(1)
		if !ok {
			return fail()
		}
		offsets, data := takeVarBinary(offs, arrow.Int64Traits.CastFromBytes, dataOf(ps), ps, n, mem)
		out = []*memory.Buffer{valid, offsets, data}
	case *arrow.StructType:
		// A struct's offset applies to its children on top of their own.
		for f := range t.NumFields() {
			cps := make([]piece, len(ps))
			for k, p := range ps {
				if len(p.d.Children()) != t.NumFields() {
					return fail()
				}
				cps[k] = piece{p.d.Children()[f], shiftRuns(p.runs, int64(p.d.Offset()))}
			}
			cd, ok := takePieces(cps, n, mem)
			if !ok {
				return fail()
			}
			children = append(children, cd)
		}
		out = []*memory.Buffer{valid}
	case *arrow.ListType, *arrow.MapType, *arrow.LargeListType:
		offs, ok := buf(1)
		if !ok {
			return fail()
		}
		var (
			offsets *memory.Buffer
			cps     []piece
			childN  int64
		)
		if _, large := t.(*arrow.LargeListType); large {
			offsets, cps, childN = takeListOffsets(offs, arrow.Int64Traits.CastFromBytes, ps, n, mem)
		} else {
			offsets, cps, childN = takeListOffsets(offs, arrow.Int32Traits.CastFromBytes, ps, n, mem)
		}
		out = []*memory.Buffer{valid, offsets}
		if cps == nil {
			return fail()
		}
		cd, ok := takePieces(cps, childN, mem)
		if !ok {
			return fail()
		}
		children = append(children, cd)
	case *arrow.FixedSizeListType:
		size := int64(t.Len())
		cps := make([]piece, len(ps))
		for k, p := range ps {
			if len(p.d.Children()) != 1 {
				return fail()
			}
			off := int64(p.d.Offset())
			var childRuns []run
			for _, r := range p.runs {
				if size > 0 {
					childRuns = append(childRuns, run{(off + r.start) * size, (off + r.end) * size})
				}
			}
			cps[k] = piece{p.d.Children()[0], childRuns}
		}
		cd, ok := takePieces(cps, n*size, mem)
		if !ok {
			return fail()
		}
		children = append(children, cd)
		out = []*memory.Buffer{valid}
	case arrow.FixedWidthDataType:
		w := int64(t.BitWidth() / 8)
		vals, ok := buf(1)
		if t.BitWidth()%8 != 0 || w == 0 || !ok {
			return fail()
		}
		out = []*memory.Buffer{valid, copyValues(vals, w, ps, n, mem)}
	default:
		return fail()
	}
	res := array.NewData(dt, int(n), out, children, nulls, 0)
	if dict != nil {
		res.SetDictionary(dict)
	}
	return res, true
}

// sameDictionary says two dictionary pieces can share a's dictionary.
func sameDictionary(a, b arrow.ArrayData) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	x, y := array.MakeFromData(a), array.MakeFromData(b)
	defer x.Release()
	defer y.Release()
	return array.Equal(x, y)
}

// dataOf is the data buffer of every var-binary piece (nil where none).
func dataOf(ps []piece) [][]byte {
	out := make([][]byte, len(ps))
	for k, p := range ps {
		if b := p.d.Buffers(); len(b) > 2 && b[2] != nil {
			out[k] = b[2].Bytes()
		}
	}
	return out
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

// copyValidity copies the validity bits of the pieces' runs into a new
// bitmap of n bits; a piece without a validity bitmap is all valid.
func copyValidity(ps []piece, n int64, mem memory.Allocator) *memory.Buffer {
	srcs := make([][]byte, len(ps))
	for k, p := range ps {
		if b := p.d.Buffers()[0]; b != nil {
			srcs[k] = b.Bytes()
		}
	}
	return copyBits(srcs, ps, n, mem)
}

// copyBits copies the bits of the runs of each piece's srcs[k] (from the
// piece's offset) into a new bitmap of n bits; a nil src is all set.
func copyBits(srcs [][]byte, ps []piece, n int64, mem memory.Allocator) *memory.Buffer {
	buf := newBuffer(mem, bitutil.BytesForBits(n))
	dst := buf.Bytes()
	at := int64(0)
	for k, p := range ps {
		src, off := srcs[k], int64(p.d.Offset())
		for _, r := range p.runs {
			k := r.end - r.start
			switch {
			case src == nil:
				bitutil.SetBitsTo(dst, at, k, true)
				at += k
			case k >= 64:
				bitutil.CopyBitmap(src, int(off+r.start), int(k), dst, int(at))
				at += k
			default:
				// Short runs bit by bit: CopyBitmap sets up a reader and
				// a writer per call.
				for i := off + r.start; i < off+r.end; i++ {
					bitutil.SetBitTo(dst, int(at), bitutil.BitIsSet(src, int(i)))
					at++
				}
			}
		}
	}
	return buf
}

// copyValues copies the runs of each piece's values (w bytes each, from
// the piece's offset) into a new buffer of n values.
func copyValues(srcs [][]byte, w int64, ps []piece, n int64, mem memory.Allocator) *memory.Buffer {
	buf := newBuffer(mem, n*w)
	dst := buf.Bytes()
	at := int64(0)
	for k, p := range ps {
		src, off := srcs[k], int64(p.d.Offset())
		for _, r := range p.runs {
			at += int64(copy(dst[at:], src[(off+r.start)*w:(off+r.end)*w]))
		}
	}
	return buf
}

// takeVarBinary copies the runs of var-binary pieces (offsets from each
// piece's offset, and their data): the data run-wise, the offsets
// rebased.
func takeVarBinary[O int32 | int64](offBufs [][]byte, cast func([]byte) []O, srcs [][]byte, ps []piece, n int64, mem memory.Allocator) (offsets, data *memory.Buffer) {
	var total O
	for k, p := range ps {
		offs, off := cast(offBufs[k]), int64(p.d.Offset())
		for _, r := range p.runs {
			total += offs[off+r.end] - offs[off+r.start]
		}
	}
	var zero O
	offsets = newBuffer(mem, (n+1)*int64(sizeOf(zero)))
	data = newBuffer(mem, int64(total))
	oo, db := cast(offsets.Bytes()), data.Bytes()
	var pos O
	at := 0
	oo[0] = 0
	for k, p := range ps {
		offs, src, off := cast(offBufs[k]), srcs[k], int64(p.d.Offset())
		for _, r := range p.runs {
			base := offs[off+r.start]
			shift := pos - base
			for _, o := range offs[off+r.start+1 : off+r.end+1] {
				at++
				oo[at] = o + shift
			}
			pos += O(copy(db[pos:], src[base:offs[off+r.end]]))
		}
	}
	return offsets, data
}

// takeListOffsets rebases the offsets of list pieces' runs and gives the
// child pieces they cover (adjacent runs merged) and the child's rows;
// nil pieces when a list lacks its child.
func takeListOffsets[O int32 | int64](offBufs [][]byte, cast func([]byte) []O, ps []piece, n int64, mem memory.Allocator) (offsets *memory.Buffer, children []piece, childN int64) {
	var zero O
	offsets = newBuffer(mem, (n+1)*int64(sizeOf(zero)))
	oo := cast(offsets.Bytes())
	var pos O
	at := 0
	oo[0] = 0
	for k, p := range ps {
		if len(p.d.Children()) != 1 {
			return offsets, nil, 0
		}
		offs, off := cast(offBufs[k]), int64(p.d.Offset())
		var childRuns []run
		for _, r := range p.runs {
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
		children = append(children, piece{p.d.Children()[0], childRuns})
	}
	return offsets, children, int64(pos)
}

func sizeOf[O int32 | int64](o O) int {
	if _, is32 := any(o).(int32); is32 {
		return 4
	}
	return 8
}
