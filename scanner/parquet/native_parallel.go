package parquet

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/scand/scand/scanner"
)

// Decoding the columns of a batch at once.
//
// The native reader decodes a batch column after column on the stream's
// goroutine, so one stream uses one core while a client reading endpoints
// in order leaves the others idle. A batch whose columns are all native
// is instead decoded by the stream's goroutine and by helpers, each
// taking the next column not yet taken. Columns are independent: each
// cursor owns its pages, and what they share (the account, the chunk
// references, the pooled allocators and codecs) is safe for concurrent
// use.
//
// Helpers come from one process-wide pool of parallelism-1 slots, taken
// without waiting (TryAcquire): the stream's own goroutine always works,
// and a helper runs only when a core is free of other streams' helpers.
// So one stream uses up to parallelism cores, and sixteen streams decode
// as sixteen goroutines plus at most parallelism-1 helpers, not sixteen
// times the columns: they do not oversubscribe the cores more than
// sequential decoding did.
//
// Memory: helpers decode the same batch the stream would have decoded
// alone, into the same buffers, charged to the same account; running the
// columns at once holds no more than running them in turn, except the
// pages of several columns may be decompressed at the same moment rather
// than one after the other, which the account charges as usual.

// parallelMinValues is the smallest batch (rows × columns) worth handing
// to helpers: starting a goroutine costs about a microsecond, decoding
// 64 Ki values tens of them. A variable so that tests can send every
// batch through the helpers.
var parallelMinValues int64 = 64 << 10

// decodeHelpers holds the process-wide helper slots; nil means no
// helpers (parallelism 1).
var decodeHelpers atomic.Pointer[semaphore.Weighted]

// helpersRun counts the helpers started, for tests (and, later, a metric).
var helpersRun atomic.Int64

func init() { SetDecodeParallelism(0) }

// SetDecodeParallelism sets how many goroutines may decode the columns of
// one batch: 0 means GOMAXPROCS, 1 turns concurrent decoding off. It
// bounds the whole process: the helpers beyond each stream's own
// goroutine number at most n-1, shared by every stream. Call it at
// startup (cmd/scand's --decode-parallelism); streams that already took
// helpers give them back to the pool they came from. 0 reads GOMAXPROCS
// once, at the call: a later change of GOMAXPROCS (the runtime follows a
// container's CPU limit) does not resize the pool.
func SetDecodeParallelism(n int) {
	if n <= 0 {
		n = defaultParallelism()
	}
	if n <= 1 {
		decodeHelpers.Store(nil)
		return
	}
	decodeHelpers.Store(semaphore.NewWeighted(int64(n - 1)))
}

func defaultParallelism() int { return runtime.GOMAXPROCS(0) }

// DecodeParallelism reports the setting in force: the goroutines one
// batch may use.
func DecodeParallelism() int {
	return 1 + int(helperSlots(decodeHelpers.Load()))
}

// helperSlots counts a pool's slots by taking them all, which only a
// caller that knows no decode runs (tests, startup logs) should rely on.
func helperSlots(sem *semaphore.Weighted) int64 {
	if sem == nil {
		return 0
	}
	var n int64
	for sem.TryAcquire(1) {
		n++
	}
	sem.Release(n)
	return n
}

// worthParallel reports whether a batch of n rows of cols native output
// columns, of leaves leaves in all, pays for helpers.
func worthParallel(cols, leaves, n int) bool {
	return cols >= 2 && int64(leaves)*int64(n) >= parallelMinValues && decodeHelpers.Load() != nil
}

// batchParallel is batch for a group whose columns are all native, with
// the columns decoded by the stream's goroutine and as many helpers as
// the pool spares. The record is byte for byte the one batch builds.
func (gr *groupReader) batchParallel(sc *arrow.Schema, n int) (arrow.RecordBatch, error) {
	datas, err := gr.takeColumns(sc, n)
	if err != nil {
		return nil, err
	}
	arrs := make([]arrow.Array, len(datas))
	for i, d := range datas {
		arrs[i] = array.MakeFromData(d)
		d.Release()
	}
	gr.pqRow += int64(n)
	rec := array.NewRecordBatch(withColumnTypes(sc, arrs), arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec, nil
}

// takeColumns decodes the next n rows of every output column of sc, on
// this goroutine and on the helpers it can get. The unit of work is an
// output column: a flat one is its leaf's cursor, a nested one all of its
// leaves' cursors (gr.cols holds them in output order), which one
// goroutine decodes together, as batch does. On error it releases what
// it decoded.
func (gr *groupReader) takeColumns(sc *arrow.Schema, n int) ([]arrow.ArrayData, error) {
	return gr.decodeColumns(sc, func(i int, curs []*columnCursor) (arrow.ArrayData, error) {
		if nc := &gr.plan[i]; nc.nested != nil {
			return gr.takeNestedColumn(nc, curs, n)
		}
		return curs[0].take(n, gr.mem)
	})
}

// decodeColumns runs take on every output column of sc (its cursors:
// one for a flat column, its leaves' for a nested one), on this goroutine
// and on the helpers it can get (see takeColumns). On error it releases
// what it decoded.
func (gr *groupReader) decodeColumns(sc *arrow.Schema, take func(i int, curs []*columnCursor) (arrow.ArrayData, error)) ([]arrow.ArrayData, error) {
	out := make([]arrow.ArrayData, len(gr.plan))
	first := make([]int, len(gr.plan)) // each output column's first cursor
	for i, ci := 0, 0; i < len(gr.plan); i++ {
		first[i] = ci
		if nc := &gr.plan[i]; nc.nested != nil {
			ci += len(nc.leaves)
		} else {
			ci++
		}
	}
	var next atomic.Int64
	var failed atomic.Bool
	work := func() (err error) {
		// A helper's panic would end the process: contain it as the
		// reader contains the stream goroutine's (scanner.Recover).
		defer scanner.Recover(&err, gr.f.name)
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= len(gr.plan) {
				return nil
			}
			leaves := 1
			if nc := &gr.plan[i]; nc.nested != nil {
				leaves = len(nc.leaves)
			}
			d, err := take(i, gr.cols[first[i]:first[i]+leaves])
			if err != nil {
				failed.Store(true)
				return fmt.Errorf("column %s: %w", sc.Field(i).Name, err)
			}
			out[i] = d
		}
		return nil
	}
	// Not errgroup.WithContext: the work is bounded by the batch and
	// stops at the first failure (failed); cancellation is checked
	// between batches, as on the sequential path.
	var g errgroup.Group
	if sem := decodeHelpers.Load(); sem != nil {
		for range len(gr.plan) - 1 {
			if !sem.TryAcquire(1) {
				break
			}
			helpersRun.Add(1)
			g.Go(func() error {
				defer sem.Release(1)
				return work()
			})
		}
	}
	err := work()
	if gerr := g.Wait(); err == nil {
		err = gerr
	}
	if err != nil {
		for _, d := range out {
			if d != nil {
				d.Release()
			}
		}
		return nil, err
	}
	return out, nil
}
