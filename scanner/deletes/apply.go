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
	n := rec.NumRows()
	var total int64
	for _, s := range spans {
		if s.FirstRow < 0 || s.Rows < 0 {
			return nil, fmt.Errorf("apply deletes: a span of %d rows from row %d", s.Rows, s.FirstRow)
		}
		total += s.Rows
	}
	if total != n {
		return nil, fmt.Errorf("apply deletes: spans of %d rows for a batch of %d", total, n)
	}
	runs, kept := keptRuns(rows, spans)
	switch {
	case kept == n:
		rec.Retain()
		return rec, nil
	case kept == 0:
		return rec.NewSlice(0, 0), nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var mask arrow.Array // for the columns takeRuns does not copy
	defer func() {
		if mask != nil {
			mask.Release()
		}
	}()
	for i, c := range rec.Columns() {
		if d, ok := takeRuns(c.Data(), runs, kept, mem); ok {
			cols[i] = array.MakeFromData(d)
			d.Release()
			continue
		}
		if mask == nil {
			mask = runsMask(runs, n, mem)
		}
		out, err := compute.FilterArray(exec.WithAllocator(ctx, mem), c, mask, *compute.DefaultFilterOptions())
		if err != nil {
			return nil, fmt.Errorf("apply deletes: column %s: %w", rec.ColumnName(i), err)
		}
		cols[i] = out
	}
	return array.NewRecordBatch(rec.Schema(), cols, kept), nil
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
