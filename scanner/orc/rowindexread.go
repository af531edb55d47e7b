package orc

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/scand/scand/scanner/filter"
)

// Stride selection at read time, as ORC's SargApplier: with a filter and
// a row index, each stride's statistics and bloom filters (of the filter's
// columns only) decide whether it can hold a matching row.
//
//   - No stride can: the stripe's data is neither fetched nor decoded.
//   - Some can: when every projected column can seek (seek.go), only
//     the kept strides' byte ranges are fetched, and each run of kept
//     strides is decoded from its row index positions. Otherwise the
//     stripe is fetched whole, decoded up to the end of the last kept
//     stride, and only the rows of kept strides are returned, sliced
//     exactly at stride boundaries.
//   - Every stride can, or there is no usable row index
//     (rowIndexStride 0, streams missing or malformed): the stripe is read
//     as without a filter.

// rowRange is rows [start, end) of a stripe.
type rowRange struct{ start, end int64 }

// selectStrides returns the rows of stripe g the row index keeps for
// pred: all (nil, false), none (nil, true) or some. The index streams of
// the columns seek (the projection's, for seek.go's positions) are read
// with the filter's, in one announced batch; ix is what was read.
func (f *File) selectStrides(ctx context.Context, g int, pred *filter.Predicate, seek []int) (keep []rowRange, none bool, ix *stripeIndex, err error) {
	if pred == nil || f.ft.rowIndexStride == 0 {
		return nil, false, nil, nil
	}
	ix, err = f.readStripeIndex(ctx, g, append(f.columnIDs(pred.Columns()), seek...), true)
	if err != nil || ix == nil {
		return nil, false, nil, err
	}
	useBloom := f.bloomUsable()
	for s := range ix.strides {
		var src filter.StatsSource = ix.strideSource(s)
		if !useBloom {
			src = src.(strideStats).groupStats
		}
		if !pred.MayMatch(src) {
			continue
		}
		start := int64(s) * ix.stride
		end := start + ix.strideRows(s)
		if n := len(keep); n > 0 && keep[n-1].end == start {
			keep[n-1].end = end
			continue
		}
		keep = append(keep, rowRange{start, end})
	}
	switch {
	case len(keep) == 0:
		return nil, true, ix, nil
	case len(keep) == 1 && keep[0] == rowRange{0, ix.rows}:
		return nil, false, ix, nil
	}
	return keep, false, ix, nil
}

// emitKept emits the rows of rec, which holds stripe rows [at, at+n),
// that lie in keep (nil: all). It releases rec.
func emitKept(rec arrow.RecordBatch, at int64, keep []rowRange, emit func(arrow.RecordBatch) error) error {
	if keep == nil {
		return emit(rec)
	}
	defer rec.Release()
	end := at + rec.NumRows()
	for _, r := range keep {
		lo, hi := max(r.start, at), min(r.end, end)
		if lo >= hi {
			continue
		}
		if err := emit(rec.NewSlice(lo-at, hi-at)); err != nil {
			return err
		}
	}
	return nil
}
