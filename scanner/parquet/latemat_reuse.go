package parquet

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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

// column returns column c of the kept batches over rows [r0, r0+n): a
// slice of one batch, or the slices of several concatenated (the second
// pass cuts its batches at its own columns' page bounds, so some span two
// kept batches; cutting them at the kept batches' bounds as well was
// tried and cost more in smaller batches than the copies). The caller
// releases it.
func (k *filterKept) column(c int, r0, n int64, lr *lateRead) (arrow.Array, error) {
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	r1 := r0 + n
	for _, b := range k.batches {
		b0, b1 := b.start, b.start+b.rec.NumRows()
		if b1 <= r0 || b0 >= r1 {
			continue
		}
		from, to := max(r0, b0)-b0, min(r1, b1)-b0
		// The filter's dictionaries (native_dict.go) are decoded here,
		// over the second pass's rows only: the batches of a read from
		// page headers are gathered, and must agree on their types.
		s := array.NewSlice(b.rec.Column(c), from, to)
		part, err := plainColumn(s, lr.filterSchema.Field(c).Type, lr.mem())
		s.Release()
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	if len(parts) == 1 {
		a := parts[0]
		parts = nil
		return a, nil
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
// columns taken from kept: it decodes only the other columns. It returns
// errNotNative, having emitted nothing, when their pages need pqarrow.
func (lr *lateRead) emitReusing(ctx context.Context, second *groupPlan, kept *filterKept, batchRows int64, acct *account, emit func(arrow.RecordBatch) error) error {
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
	pos := rowCursor{ranges: second.rows}
	return gr.emitRanges(ctx, sc, batchRows, second.rows, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		start := pos.at(0)
		pos.advance(int(rec.NumRows()))
		out, err := lr.withFilterColumns(rec, kept, start)
		if err != nil {
			return fmt.Errorf("%s: row group %d: %w", lr.f.name, second.g, err)
		}
		return emit(out)
	})
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
// the group: others' columns, with the filter columns from kept put in
// their output places.
func (lr *lateRead) withFilterColumns(others arrow.RecordBatch, kept *filterKept, start int64) (arrow.RecordBatch, error) {
	n := others.NumRows()
	arrs := make([]arrow.Array, 0, len(lr.impl.native))
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	fi, oi := 0, 0
	for _, c := range lr.impl.native {
		if !lr.filterLeaf[c.leaf] {
			a := others.Column(oi)
			a.Retain()
			arrs = append(arrs, a)
			oi++
			continue
		}
		a, err := kept.column(fi, start, n, lr)
		if err != nil {
			return nil, err
		}
		arrs = append(arrs, a)
		fi++
	}
	return array.NewRecordBatch(lr.p.Schema, arrs, n), nil
}
