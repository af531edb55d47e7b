package parquet

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/scand/scand/scanner"
)

// account charges one Read's declared allocations to its
// scanner.ReadOptions.Budget. A nil account, or one without a budget,
// charges nothing. Release may be called from any goroutine (arrays that
// point into a decompressed page are released by whoever holds the batch).
type account struct {
	ctx    context.Context
	budget scanner.Reserver
	held   atomic.Int64
}

func newAccount(ctx context.Context, budget scanner.Reserver) *account {
	return &account{ctx: ctx, budget: budget}
}

// reserve charges n bytes before they are allocated for what; the budget's
// error (over budget, cancelled) passes through, wrapped.
func (a *account) reserve(n int64, what string) error {
	if a == nil || a.budget == nil || n <= 0 {
		return nil
	}
	if err := a.budget.Reserve(a.ctx, n); err != nil {
		return fmt.Errorf("%s (%d bytes): %w", what, n, err)
	}
	a.held.Add(n)
	return nil
}

// release gives back n bytes of earlier reservations.
func (a *account) release(n int64) {
	if a == nil || a.budget == nil || n <= 0 {
		return
	}
	a.held.Add(-n)
	a.budget.Release(n)
}
