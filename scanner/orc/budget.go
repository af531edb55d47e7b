package orc

import (
	"context"
	"fmt"

	"github.com/scand/scand/scanner"
)

// account charges one Read's buffers to scanner.ReadOptions.Budget before
// they are allocated: the stripe buffer the projected streams are read
// into (sized by the stripe footer's stream lengths), a decompression
// buffer of the block size per compressed stream, and dictionaries (their
// LENGTH streams' total). The buffers are reused from stripe to stripe, so
// the account charges their growth and gives everything back when the
// Read ends. A nil account, or one without a budget, charges nothing.
type account struct {
	ctx    context.Context
	budget scanner.Reserver
	held   int64
	// What the reused buffers are charged for so far.
	stripeData, decompression int64
}

// reserve charges n more bytes for what; the budget's error passes
// through, wrapped.
func (a *account) reserve(n int64, what string) error {
	if a == nil || a.budget == nil || n <= 0 {
		return nil
	}
	if err := a.budget.Reserve(a.ctx, n); err != nil {
		return &budgetError{fmt.Errorf("%s (%d bytes): %w", what, n, err)}
	}
	a.held += n
	return nil
}

// atLeast makes *charged at least n, reserving the difference.
func (a *account) atLeast(charged *int64, n int64, what string) error {
	if n <= *charged {
		return nil
	}
	if err := a.reserve(n-*charged, what); err != nil {
		return err
	}
	*charged = n
	return nil
}

// releaseAll gives back everything the Read reserved.
func (a *account) releaseAll() {
	if a == nil || a.budget == nil || a.held == 0 {
		return
	}
	a.budget.Release(a.held)
	a.held = 0
}

// budgetError marks the budget's refusal, which keeps its identity through
// classify (it says nothing about the file).
type budgetError struct{ err error }

func (e *budgetError) Error() string { return e.err.Error() }
func (e *budgetError) Unwrap() error { return e.err }
