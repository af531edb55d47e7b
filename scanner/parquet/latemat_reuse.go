package parquet

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The first pass of a late read decodes the filter columns over every
// row the plan kept; the second pass needs them again over the rows it
// emits, a subset. Instead of decoding them a second time, the first
// pass keeps its batches (filterKept) and the second pass slices them:
// it opens only the other columns, and puts the filter columns' slices
// back in their output places.
//
// The kept batches are charged to the read's budget while they are held
// (they outlive the batch they were decoded for); when the budget cannot
// take them the read keeps nothing and decodes the filter columns twice,
// as it did before.

// keptBatch is one first-pass batch of the filter columns: rows
// [start, start+rec.NumRows()) of the group.
type keptBatch struct {
	start int64
	rec   arrow.RecordBatch
}

// filterKept holds a row group's first-pass batches, in row order.
type filterKept struct {
	batches []keptBatch
	charged int64
	acct    *account
	// off is set when the budget refused a batch: nothing is kept.
	off bool
}

// keep retains rec, rows [start, ...) of the group, unless the budget
// refuses its bytes: then every batch kept so far is given back and the
// second pass decodes the filter columns again.
func (k *filterKept) keep(start int64, rec arrow.RecordBatch) {
	if k.off {
		return
	}
	n := recordBufferBytes(rec)
	if err := k.acct.reserve(n, "late materialization: kept filter columns"); err != nil {
		k.release()
		k.off = true
		return
	}
	rec.Retain()
	k.charged += n
	k.batches = append(k.batches, keptBatch{start: start, rec: rec})
}

// release gives back every kept batch and its budget.
func (k *filterKept) release() {
	for _, b := range k.batches {
		b.rec.Release()
	}
	k.batches = nil
	k.acct.release(k.charged)
	k.charged = 0
}

// usable reports whether the kept batches cover rows, so the second pass
// can take the filter columns from them (they cover every row the first
// pass read, of which the second pass's are a subset).
func (k *filterKept) usable(rows rowRanges) bool {
	if k.off {
		return false
	}
	covered := rowRanges{}
	for _, b := range k.batches {
		covered = covered.add(b.start, b.start+b.rec.NumRows())
	}
	return slices.Equal(intersect(covered, rows), rows)
}

// column returns column c of the kept batches over rows [r0, r0+n), or
// with sel only those of its rows (positions from r0; nil: all): a slice
// of one batch, or the slices of several concatenated (the second pass
// cuts its batches at its own columns' page bounds, so some span two kept
// batches; cutting them at the kept batches' bounds as well was tried and
// cost more in smaller batches than the copies). The caller releases it.
func (k *filterKept) column(c int, r0, n int64, sel rowRanges, lr *lateRead) (arrow.Array, error) {
	var parts []arrow.Array
	defer func() { releaseArrays(parts) }()
	r1 := r0 + n
	for _, b := range k.batches {
		b0, b1 := b.start, b.start+b.rec.NumRows()
		if b1 <= r0 || b0 >= r1 {
			continue
		}
		from, to := max(r0, b0)-b0, min(r1, b1)-b0
		s := array.NewSlice(b.rec.Column(c), from, to)
		if sel != nil {
			// The rows of sel in this slice, as positions in it.
			picked, err := takeRows(s, within(sel, b0+from-r0, b0+to-r0), lr.mem())
			s.Release()
			if err != nil {
				return nil, err
			}
			s = picked
		}
		// The filter's dictionaries (native_dict.go) are decoded here,
		// over the rows the second pass emits only: the batches of a
		// read from page headers are gathered, and must agree on their
		// types.
		part, err := plainColumn(s, lr.filterSchema.Field(c).Type, lr.mem())
		s.Release()
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	return joinKept(parts, lr)
}

// rowsOf returns column c of the kept batches over the rows keep of the
// group, in order, their dictionaries decoded (as column does).
func (k *filterKept) rowsOf(c int, keep rowRanges, lr *lateRead) (arrow.Array, error) {
	var parts []arrow.Array
	defer func() { releaseArrays(parts) }()
	for _, b := range k.batches {
		b0, b1 := b.start, b.start+b.rec.NumRows()
		sel := within(keep, b0, b1)
		if len(sel) == 0 {
			continue
		}
		picked, err := takeRows(b.rec.Column(c), sel, lr.mem())
		if err != nil {
			return nil, err
		}
		part, err := plainColumn(picked, lr.filterSchema.Field(c).Type, lr.mem())
		picked.Release()
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	return joinKept(parts, lr)
}

// joinKept returns the parts of a kept filter column as one array, which
// the caller releases: the part itself when there is one, else their
// concatenation. The parts stay the caller's.
func joinKept(parts []arrow.Array, lr *lateRead) (arrow.Array, error) {
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	a, err := array.Concatenate(parts, lr.mem())
	if err != nil {
		return nil, fmt.Errorf("late materialization: joining kept filter columns: %w", err)
	}
	return a, nil
}

// recordBufferBytes is the size of the buffers rec's columns hold (whole
// buffers: a kept batch holds all of them).
func recordBufferBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBufferBytes(c.Data())
	}
	return n
}

func dataBufferBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBufferBytes(c)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		n += dataBufferBytes(dict)
	}
	return n
}

// otherColumns are the projection's native columns the filter does not
// name, with their schema, in output order.
func (lr *lateRead) otherColumns() ([]nativeColumn, *arrow.Schema) {
	var cols []nativeColumn
	var fields []arrow.Field
	for i, c := range lr.impl.native {
		if !lr.filterLeaf[c.leaf] {
			cols = append(cols, c)
			fields = append(fields, lr.p.Schema.Field(i))
		}
	}
	return cols, arrow.NewSchema(fields, nil)
}

// emitReusing is the second pass over plan second with the filter
// columns taken from kept: it decodes only the other columns, and emits
// the survivors only. It returns errNotNative, having emitted nothing,
// when their pages need pqarrow.
//
// The second pass's rows are a superset of the survivors (whole pages,
// runs joined across gaps, or every row of a group whose survivors are
// too dense to read run by run): emitted as they are, the caller would
// evaluate the filter again over all of them, and the filter's columns
// would be decoded from their dictionaries over all of them first, work a
// one-pass read does over the survivors only (bench/taxi q4: the second
// pass cost more than the whole one-pass read). The first pass knows the
// survivors exactly, so each batch is cut to them here.
func (lr *lateRead) emitReusing(ctx context.Context, second *groupPlan, kept *filterKept, survivors rowRanges, batchRows int64, acct *account, emit func(arrow.RecordBatch) error) error {
	cols, sc := lr.otherColumns()
	gr, err := lr.f.openGroup(second, cols, acct)
	if gr != nil {
		defer gr.release()
	}
	if err != nil {
		return err
	}
	lr.f.nativeGroups++
	if lr.opts.Counts != nil && lr.byHeaders(second) {
		lr.opts.Counts.PagesSkipped += pagesOutside(gr, second.rows)
	}
	if lr.byHeaders(second) && len(second.rows) > 1 && gr.pq == nil {
		return lr.emitRuns(ctx, gr, sc, second, kept, survivors, batchRows, emit)
	}
	pos := rowCursor{ranges: second.rows}
	return gr.emitRanges(ctx, sc, batchRows, second.rows, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		start := pos.at(0)
		pos.advance(int(rec.NumRows()))
		sel, all := selectRows(survivors, start, rec.NumRows())
		if !all && len(sel) == 0 {
			return nil
		}
		if all {
			sel = nil
		}
		out, err := lr.withFilterColumns(rec, kept, start, sel)
		if err != nil {
			return fmt.Errorf("%s: row group %d: %w", lr.f.name, second.g, err)
		}
		return emit(out)
	})
}

// emitRuns is emitReusing's second pass over the runs of survivors of a
// read from page headers: runs are taken together, up to batchRows rows,
// each column decoding all of them (a seek and a take per run) on this
// goroutine or a helper (decodeColumns), into one batch of the survivors.
// Emitted run by run, through emitRanges, each run cost a batch of its
// own, decoded on one goroutine, and a one-pass read, decoding its
// columns at once on two cores, was as fast on bench/taxi q7 though it
// decodes every row.
func (lr *lateRead) emitRuns(ctx context.Context, gr *groupReader, sc *arrow.Schema, second *groupPlan, kept *filterKept, survivors rowRanges, batchRows int64, emit func(arrow.RecordBatch) error) error {
	for _, chunk := range chunkRuns(second.rows, batchRows) {
		if err := ctx.Err(); err != nil {
			return err
		}
		keep := intersect(chunk, survivors)
		if len(keep) == 0 {
			continue
		}
		n := chunk.rows()
		datas, err := gr.decodeColumns(sc, func(_ int, curs []*columnCursor) (arrow.ArrayData, error) {
			return takeRuns(curs[0], chunk, gr.mem)
		})
		if err != nil {
			return fmt.Errorf("%s: row group %d: %w", lr.f.name, second.g, err)
		}
		arrs := make([]arrow.Array, len(datas))
		for i, d := range datas {
			arrs[i] = array.MakeFromData(d)
			d.Release()
		}
		rec := array.NewRecordBatch(withColumnTypes(sc, arrs), arrs, n)
		releaseArrays(arrs)
		out, err := lr.withKeptRows(rec, kept, keep, positionsIn(chunk, keep))
		rec.Release()
		if err != nil {
			return fmt.Errorf("%s: row group %d: %w", lr.f.name, second.g, err)
		}
		if err := emit(out); err != nil {
			return err
		}
	}
	return nil
}

// chunkRuns cuts runs into lists of at most max rows in all (a run
// longer than that is cut too).
func chunkRuns(runs rowRanges, max int64) []rowRanges {
	var out []rowRanges
	cur, rows := rowRanges{}, int64(0)
	for _, r := range runs {
		for r.start < r.end {
			take := min(r.end-r.start, max-rows)
			cur = append(cur, rowRange{r.start, r.start + take})
			rows += take
			r.start += take
			if rows == max {
				out = append(out, cur)
				cur, rows = rowRanges{}, 0
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// takeRuns decodes the rows runs of c's column, one array.
func takeRuns(c *columnCursor, runs rowRanges, mem memory.Allocator) (arrow.ArrayData, error) {
	parts := make([]arrow.Array, 0, len(runs))
	defer func() { releaseArrays(parts) }()
	for _, r := range runs {
		if err := c.seek(r.start); err != nil {
			return nil, err
		}
		d, err := c.take(int(r.end-r.start), mem)
		if err != nil {
			return nil, err
		}
		parts = append(parts, array.MakeFromData(d))
		d.Release()
	}
	if len(parts) == 1 {
		d := parts[0].Data()
		d.Retain()
		return d, nil
	}
	a, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, fmt.Errorf("joining runs: %w", err)
	}
	defer a.Release()
	d := a.Data()
	d.Retain()
	return d, nil
}

// positionsIn maps rows of the group, all within runs, to their
// positions in runs' rows laid end to end.
func positionsIn(runs, rows rowRanges) rowRanges {
	out := rowRanges{}
	var base int64
	j := 0
	for _, r := range runs {
		for ; j < len(rows) && rows[j].start < r.end; j++ {
			out = out.add(base+rows[j].start-r.start, base+rows[j].end-r.start)
		}
		base += r.end - r.start
	}
	return out
}

// withKeptRows returns the output batch of the rows keep of the group:
// others' columns, which hold them at positions sel, with the filter
// columns from kept put in their output places.
func (lr *lateRead) withKeptRows(others arrow.RecordBatch, kept *filterKept, keep, sel rowRanges) (arrow.RecordBatch, error) {
	all := len(sel) == 1 && sel[0] == rowRange{0, others.NumRows()}
	arrs := make([]arrow.Array, 0, len(lr.impl.native))
	defer func() { releaseArrays(arrs) }()
	fi, oi := 0, 0
	for _, c := range lr.impl.native {
		if !lr.filterLeaf[c.leaf] {
			rows := sel
			switch {
			case all:
				rows = nil // all of them, as they are
			case rows == nil:
				rows = rowRanges{} // none
			}
			a, err := selectedRows(others.Column(oi), rows, lr.mem())
			if err != nil {
				return nil, err
			}
			oi++
			arrs = append(arrs, a)
			continue
		}
		a, err := kept.rowsOf(fi, keep, lr)
		if err != nil {
			return nil, err
		}
		arrs = append(arrs, a)
		fi++
	}
	out := array.NewRecordBatch(lr.p.Schema, arrs, keep.rows())
	return out, nil
}

// selectedRows returns a over the rows of sel (nil: all of them):
// a itself, retained, or its rows gathered. The caller releases it.
func selectedRows(a arrow.Array, sel rowRanges, mem memory.Allocator) (arrow.Array, error) {
	if sel == nil {
		a.Retain()
		return a, nil
	}
	return takeRows(a, sel, mem)
}

// pagesOutside counts the data pages of gr's columns that hold no row of
// rows: the pages a late read from page headers never decodes.
func pagesOutside(gr *groupReader, rows rowRanges) int64 {
	var n int64
	for _, c := range gr.cols {
		for _, p := range c.pages {
			if !rows.overlaps(p.first, p.first+int64(p.rows)) {
				n++
			}
		}
	}
	return n
}

// withFilterColumns returns the output batch for rows [start, ...) of
// the group, or with sel only those of its rows (positions from start;
// nil: all): others' columns, with the filter columns from kept put in
// their output places.
func (lr *lateRead) withFilterColumns(others arrow.RecordBatch, kept *filterKept, start int64, sel rowRanges) (arrow.RecordBatch, error) {
	n := others.NumRows()
	arrs := make([]arrow.Array, 0, len(lr.impl.native))
	defer func() { releaseArrays(arrs) }()
	fi, oi := 0, 0
	for _, c := range lr.impl.native {
		if !lr.filterLeaf[c.leaf] {
			a, err := selectedRows(others.Column(oi), sel, lr.mem())
			if err != nil {
				return nil, err
			}
			oi++
			arrs = append(arrs, a)
			continue
		}
		a, err := kept.column(fi, start, n, sel, lr)
		if err != nil {
			return nil, err
		}
		arrs = append(arrs, a)
		fi++
	}
	if sel != nil {
		n = sel.rows()
	}
	return array.NewRecordBatch(lr.p.Schema, arrs, n), nil
}

// selectRows returns the rows of rs among [start, start+n), as positions
// from start; all reports that they are every one of the n rows.
func selectRows(rs rowRanges, start, n int64) (sel rowRanges, all bool) {
	end := start + n
	i := sort.Search(len(rs), func(i int) bool { return rs[i].end > start })
	sel = rowRanges{}
	for ; i < len(rs) && rs[i].start < end; i++ {
		sel = sel.add(max(rs[i].start, start)-start, min(rs[i].end, end)-start)
	}
	return sel, len(sel) == 1 && sel[0] == rowRange{0, n}
}

// within returns the rows of sel among [from, to), as positions from
// from.
func within(sel rowRanges, from, to int64) rowRanges {
	out := rowRanges{}
	for _, r := range sel {
		out = out.add(max(r.start, from)-from, min(r.end, to)-from)
	}
	return out
}

// takeRows returns the rows sel (positions in a) of a, a new array: a
// copy run by run for the layouts the reader makes (fixed-width values,
// strings and binaries with 32-bit offsets, dictionaries of them, whose
// dictionary is kept), arrow's take kernel for the others (its set-up
// costs more than these copies on the small batches of a late read).
func takeRows(a arrow.Array, sel rowRanges, mem memory.Allocator) (arrow.Array, error) {
	if d, ok := takeData(a.Data(), sel, mem); ok {
		defer d.Release()
		return array.MakeFromData(d), nil
	}
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	for _, r := range sel {
		for i := r.start; i < r.end; i++ {
			ib.Append(int32(i))
		}
	}
	ix := ib.NewInt32Array()
	defer ix.Release()
	out, err := compute.TakeArray(compute.WithAllocator(context.Background(), mem), a, ix)
	if err != nil {
		return nil, fmt.Errorf("late materialization: taking survivors: %w", err)
	}
	return out, nil
}

// takeData is takeRows for the layouts it copies itself; ok is false for
// the others.
func takeData(d arrow.ArrayData, sel rowRanges, mem memory.Allocator) (_ arrow.ArrayData, ok bool) {
	n := int(sel.rows())
	off := int64(d.Offset())
	bufs := d.Buffers()
	var dict arrow.ArrayData
	dt := d.DataType()
	if dd, isDict := dt.(*arrow.DictionaryType); isDict {
		dict = d.Dictionary()
		dt = dd.IndexType
	}
	var valid *memory.Buffer
	nulls := 0
	if d.NullN() != 0 && len(bufs) > 0 && bufs[0] != nil { // a slice's count may be unknown (-1)
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		at := int64(0)
		src, dst := bufs[0].Bytes(), valid.Bytes()
		for _, r := range sel {
			if n := r.end - r.start; n >= 64 {
				bitutil.CopyBitmap(src, int(off+r.start), int(n), dst, int(at))
				at += n
				continue
			}
			// Short runs (scattered survivors) bit by bit: CopyBitmap
			// allocates a reader and a writer per call.
			for i := off + r.start; i < off+r.end; i++ {
				bitutil.SetBitTo(dst, int(at), bitutil.BitIsSet(src, int(i)))
				at++
			}
		}
		nulls = n - bitutil.CountSetBits(valid.Bytes(), 0, n)
	}
	var out []*memory.Buffer
	switch t := dt.(type) {
	case *arrow.StringType, *arrow.BinaryType:
		if len(bufs) != 3 || bufs[1] == nil {
			release(valid)
			return nil, false
		}
		offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())
		var src []byte
		if bufs[2] != nil {
			src = bufs[2].Bytes()
		}
		total := 0
		for _, r := range sel {
			total += int(offs[off+r.end] - offs[off+r.start])
		}
		offsets := memory.NewResizableBuffer(mem)
		offsets.Resize(4 * (n + 1))
		oo := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
		data := memory.NewResizableBuffer(mem)
		data.Resize(total)
		db := data.Bytes()
		pos, at := int32(0), 0
		oo[0] = 0
		for _, r := range sel {
			base := offs[off+r.start]
			for i := off + r.start; i < off+r.end; i++ {
				at++
				oo[at] = pos + offs[i+1] - base
			}
			pos += int32(copy(db[pos:], src[base:offs[off+r.end]]))
		}
		out = []*memory.Buffer{valid, offsets, data}
	case arrow.FixedWidthDataType:
		w := t.BitWidth() / 8
		if t.BitWidth()%8 != 0 || w == 0 || len(bufs) != 2 || bufs[1] == nil {
			release(valid)
			return nil, false
		}
		src := bufs[1].Bytes()
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(n * w)
		at := 0
		for _, r := range sel {
			at += copy(vals.Bytes()[at:], src[int(off+r.start)*w:int(off+r.end)*w])
		}
		out = []*memory.Buffer{valid, vals}
	default:
		release(valid)
		return nil, false
	}
	res := array.NewData(d.DataType(), n, out, nil, nulls, 0)
	release(out...)
	if dict != nil {
		res.SetDictionary(dict)
	}
	return res, true
}
