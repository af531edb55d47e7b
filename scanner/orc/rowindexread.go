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
//   - Some can: the stripe is decoded up to the end of the last kept
//     stride, and only the rows of kept strides are returned, sliced
//     exactly at stride boundaries. The reader does not seek inside the
//     streams to the first kept stride (the row index positions are not
//     used yet), so this saves the filter's work, the rows sent and the
//     decoding after the last kept stride, not the fetch.
//   - Every stride can, or there is no usable row index
//     (rowIndexStride 0, streams missing or malformed): the stripe is read
//     as without a filter.

// rowRange is rows [start, end) of a stripe.
type rowRange struct{ start, end int64 }

// selectStrides returns the rows of stripe g the row index keeps for
// pred: all (nil, false), none (nil, true) or some.
func (f *File) selectStrides(ctx context.Context, g int, pred *filter.Predicate) (keep []rowRange, none bool, err error) {
	if pred == nil || f.ft.rowIndexStride == 0 {
		return nil, false, nil
	}
	ix, err := f.readStripeIndex(ctx, g, f.columnIDs(pred.Columns()), true)
	if err != nil || ix == nil {
		return nil, false, err
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
		return nil, true, nil
	case len(keep) == 1 && keep[0] == rowRange{0, ix.rows}:
		return nil, false, nil
	}
	return keep, false, nil
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
