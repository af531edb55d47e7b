package deletes

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Apply drops from rec the rows whose file positions rows holds: rec's
// row i is the file's row firstRow + i. It returns rec itself, retained,
// when no row of it is deleted, and a new batch otherwise; the caller
// releases both. The new batch's buffers are allocated from mem: each
// column's kept runs copied (runs.go), or filtered by compute for the
// layouts runs.go does not copy.
func Apply(ctx context.Context, rec arrow.RecordBatch, firstRow int64, rows *Rows, mem memory.Allocator) (arrow.RecordBatch, error) {
	return ApplySpans(ctx, rec, []Span{{FirstRow: firstRow, Rows: rec.NumRows()}}, rows, mem)
}

// Span is a piece of a batch: Rows consecutive rows of it, the first of
// them the file's row FirstRow.
type Span struct{ FirstRow, Rows int64 }

// ApplySpans is Apply for a batch made of spans of the file, in order:
// a batch that runs from one row group into the next one read when the
// read skips the groups between them. The spans' rows add up to rec's.
func ApplySpans(ctx context.Context, rec arrow.RecordBatch, spans []Span, rows *Rows, mem memory.Allocator) (arrow.RecordBatch, error) {
	p, err := Select(rec, spans, rows)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Kept == rec.NumRows():
		rec.Retain()
		return rec, nil
	case p.Kept == 0:
		return rec.NewSlice(0, 0), nil
	}
	return Take(ctx, []Part{p}, mem)
}

// A Part is a batch and the rows of it that deletes keep.
type Part struct {
	Rec  arrow.RecordBatch
	Kept int64 // rows kept
	runs []run
}

// Select finds the rows of rec, a batch made of spans of the file, that
// rows does not delete. The part refers to rec, which stays the caller's.
func Select(rec arrow.RecordBatch, spans []Span, rows *Rows) (Part, error) {
	n := rec.NumRows()
	var total int64
	for _, s := range spans {
		if s.FirstRow < 0 || s.Rows < 0 {
			return Part{}, fmt.Errorf("apply deletes: a span of %d rows from row %d", s.Rows, s.FirstRow)
		}
		total += s.Rows
	}
	if total != n {
		return Part{}, fmt.Errorf("apply deletes: spans of %d rows for a batch of %d", total, n)
	}
	runs, kept := keptRuns(rows, spans)
	return Part{Rec: rec, Kept: kept, runs: runs}, nil
}

// Take copies the kept rows of parts, batches of one schema, in order,
// into one new batch allocated from mem, which the caller releases: each
// column's kept runs copied (runs.go), or, for the layouts runs.go does
// not copy, filtered by compute part by part and concatenated (which
// fails for dictionaries that do not unify: the caller then takes the
// parts one at a time).
func Take(ctx context.Context, parts []Part, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("apply deletes: no batch to take rows of")
	}
	sc := parts[0].Rec.Schema()
	var kept int64
	for _, p := range parts {
		kept += p.Kept
	}
	cols := make([]arrow.Array, sc.NumFields())
	defer func() { releaseArrays(cols) }()
	ps := make([]piece, 0, len(parts))
	for i := range cols {
		ps = ps[:0]
		for _, p := range parts {
			if len(p.runs) > 0 {
				ps = append(ps, piece{p.Rec.Column(i).Data(), p.runs})
			}
		}
		if len(ps) == 0 { // nothing kept
			cols[i] = array.MakeArrayOfNull(mem, sc.Field(i).Type, 0)
			continue
		}
		if d, ok := takePieces(ps, kept, mem); ok {
			cols[i] = array.MakeFromData(d)
			d.Release()
			continue
		}
		c, err := filterParts(ctx, parts, i, mem)
		if err != nil {
			return nil, fmt.Errorf("apply deletes: column %s: %w", sc.Field(i).Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(sc, cols, kept), nil
}

// filterParts is column i of the parts' kept rows, filtered by compute.
func filterParts(ctx context.Context, parts []Part, i int, mem memory.Allocator) (arrow.Array, error) {
	pieces := make([]arrow.Array, 0, len(parts))
	defer func() { releaseArrays(pieces) }()
	for _, p := range parts {
		mask := runsMask(p.runs, p.Rec.NumRows(), mem)
		out, err := compute.FilterArray(exec.WithAllocator(ctx, mem), p.Rec.Column(i), mask, *compute.DefaultFilterOptions())
		mask.Release()
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, out)
	}
	if len(pieces) == 1 {
		pieces[0].Retain()
		return pieces[0], nil
	}
	return array.Concatenate(pieces, mem)
}

func releaseArrays(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// runsMask is the filter that keeps the rows of runs, of n rows.
func runsMask(runs []run, n int64, mem memory.Allocator) arrow.Array {
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.Reserve(int(n))
	at := int64(0)
	for _, r := range runs {
		for ; at < r.start; at++ {
			b.UnsafeAppend(false)
		}
		for ; at < r.end; at++ {
			b.UnsafeAppend(true)
		}
	}
	for ; at < n; at++ {
		b.UnsafeAppend(false)
	}
	return b.NewBooleanArray()
}

// deletedIn lists the positions rows holds in [first, first+n), as
// offsets from first, ascending.
func deletedIn(rows *Rows, first, n int64) []int64 {
	if rows == nil || rows.Bitmap == nil || n == 0 || rows.Bitmap.IsEmpty() {
		return nil
	}
	end := uint64(first + n)
	if rows.Bitmap.Minimum() >= end || rows.Bitmap.Maximum() < uint64(first) {
		return nil
	}
	var out []int64
	it := rows.Bitmap.Iterator()
	it.AdvanceIfNeeded(uint64(first))
	for it.HasNext() {
		v := it.PeekNext()
		if v >= end {
			break
		}
		out = append(out, int64(v)-first)
		it.Next()
	}
	return out
}
