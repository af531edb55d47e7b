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
// releases both. The mask it builds is allocated from mem.
func Apply(ctx context.Context, rec arrow.RecordBatch, firstRow int64, rows *Rows, mem memory.Allocator) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	if firstRow < 0 {
		return nil, fmt.Errorf("apply deletes: negative first row %d", firstRow)
	}
	deleted := deletedIn(rows, firstRow, n)
	switch {
	case len(deleted) == 0:
		rec.Retain()
		return rec, nil
	case int64(len(deleted)) == n:
		return rec.NewSlice(0, 0), nil
	}
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.Reserve(int(n))
	next := 0
	for i := int64(0); i < n; i++ {
		del := next < len(deleted) && deleted[next] == i
		if del {
			next++
		}
		b.UnsafeAppend(!del)
	}
	mask := b.NewBooleanArray()
	defer mask.Release()
	out, err := compute.FilterRecordBatch(exec.WithAllocator(ctx, mem), rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("apply deletes: %w", err)
	}
	return out, nil
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
