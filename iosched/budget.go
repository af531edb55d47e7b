package iosched

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// ErrOverBudget reports a single read larger than the whole memory budget:
// waiting would never help. The server answers ResourceExhausted.
var ErrOverBudget = errors.New("read larger than the IO memory budget")

// budget bounds the bytes of fetched-but-unconsumed buffers across all
// scans of a scheduler. Readers wait for budget (backpressure) instead of
// allocating past it.
type budget struct {
	total int64
	sem   *semaphore.Weighted
	inUse atomic.Int64
	peak  atomic.Int64
}

func newBudget(total int64) *budget {
	return &budget{total: total, sem: semaphore.NewWeighted(total)}
}

func (b *budget) note(n int64) {
	v := b.inUse.Add(n)
	for {
		p := b.peak.Load()
		if v <= p || b.peak.CompareAndSwap(p, v) {
			return
		}
	}
}

// acquire waits until n bytes are free.
func (b *budget) acquire(ctx context.Context, n int64) error {
	if n > b.total {
		return fmt.Errorf("%w: %d bytes needed at once, budget is %d (raise --io-memory or lower --io-max-request)", ErrOverBudget, n, b.total)
	}
	if err := b.sem.Acquire(ctx, n); err != nil {
		return err
	}
	b.note(n)
	return nil
}

// tryAcquire takes n bytes only if they are free now; readahead uses it so
// that speculation never waits, and never holds memory others wait for.
func (b *budget) tryAcquire(n int64) bool {
	if n > b.total || !b.sem.TryAcquire(n) {
		return false
	}
	b.note(n)
	return true
}

func (b *budget) release(n int64) {
	if n <= 0 {
		return
	}
	b.inUse.Add(-n)
	b.sem.Release(n)
}
