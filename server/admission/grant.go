package admission

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Grant is one admitted stream's hold on the decode memory: what Admit
// granted, grown by Reserve and shrunk by Release. It is the stream's
// scanner.Reserver. A nil *Grant (from a nil Controller) charges nothing.
//
// Reserve and Release may be called from the stream's decoder while
// Blocked is called around its sends; Close ends the grant.
type Grant struct {
	c            *Controller
	who          Who
	n            int64        // guarded by c.mu
	base         int64        // what Admit granted, the estimate Park gives back; guarded by c.mu
	parked       int64        // given back by Park, taken again by Resume; guarded by c.mu
	blockedSince atomic.Int64 // unix nanoseconds; 0 while working
	closed       atomic.Bool

	// Set when admitted, then read only; guarded by c.mu until then.
	small         bool // admitted in the small share, whose bytes it counts in
	overcommitted bool // admitted over the limit

	// The cut: closed, with the reason and the bytes held then set first,
	// when the policy ends the stream (guarded by c.mu).
	cut       chan struct{}
	cutReason string
	cutBytes  int64

	other func() int64 // HoldsAlso; set before the grant is shared
}

// HoldsAlso tells the cut policy about memory the stream holds outside
// the decode share (its file's prefetch buffers), which ending it frees:
// f is called, under the controller's lock, whenever the policy weighs
// holders, and must not call the controller. Call it right after Admit,
// before the grant is shared with other goroutines.
func (g *Grant) HoldsAlso(f func() int64) {
	if g == nil {
		return
	}
	g.c.mu.Lock()
	defer g.c.mu.Unlock()
	g.other = f
}

var errClosed = errors.New("admission: grant used after Close")

// Bytes is the memory the grant holds now.
func (g *Grant) Bytes() int64 {
	if g == nil {
		return 0
	}
	g.c.mu.Lock()
	defer g.c.mu.Unlock()
	return g.n
}

// Reserve grows the grant by n bytes, at once: see below for why it never
// waits. n larger than the whole share can never fit: Reserve fails with
// an error wrapping ErrOverBudget that names the sizes.
func (g *Grant) Reserve(ctx context.Context, n int64) error {
	if g == nil || n <= 0 {
		return nil
	}
	if g.closed.Load() {
		return errClosed
	}
	c := g.c
	if n > c.capacity {
		return fmt.Errorf("%w: the stream needs %d bytes of decode memory at once (holding %d), the share is %d bytes (raise --io-memory or --io-decode-memory, or read fewer columns)",
			ErrOverBudget, n, g.Bytes(), c.capacity)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Growing never waits: a decoder asks for what a file declares in the
	// middle of a row group, holding buffers (lent prefetched bytes, pages)
	// that admitted streams may be waiting for, and waiting here stalled
	// 16 concurrent scans for good. The share is exceeded instead, counted
	// as an over-commit, by what admitted streams really allocate; a claim
	// larger than the whole share was refused above.
	if c.inUse+n > c.capacity {
		c.overcommits.Add(1)
	}
	c.serveLocked(g, n)
	return nil
}

// Release gives back n bytes of earlier reservations (never more than the
// grant holds).
func (g *Grant) Release(n int64) {
	if g == nil || n <= 0 {
		return
	}
	g.c.mu.Lock()
	defer g.c.mu.Unlock()
	g.c.shrinkLocked(g, n)
}

// Park gives the admission estimate back while the stream waits on its
// client. A stream blocked in Send decodes nothing, so the estimate of its
// decoders' working memory can serve streams that do; what the decoders
// really hold (Reserve'd for declared allocations) stays charged. Without
// this, a few clients that open streams and never read them hold the
// whole share and lock every other client out. Resume takes the estimate
// back before the stream decodes again.
func (g *Grant) Park() {
	if g == nil || g.closed.Load() {
		return
	}
	c := g.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(g.base, g.n)
	if n <= 0 {
		return
	}
	g.base -= n
	g.parked += n
	c.shrinkLocked(g, n)
}

// Resume takes back what Park gave, at once, even past the share: the
// stream holds buffers (lent prefetched bytes, reserved pages) that the
// streams admitted meanwhile may be waiting for, so making it wait for
// them could deadlock. Past the share it counts as an over-commit; it
// lasts until the stream ends or parks again. ctx is for symmetry with
// Reserve.
func (g *Grant) Resume(_ context.Context) error {
	if g == nil || g.closed.Load() {
		return nil
	}
	c := g.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := g.parked
	if n == 0 {
		return nil
	}
	g.parked = 0
	g.base += n
	if c.inUse+n > c.capacity {
		c.overcommits.Add(1)
	}
	c.serveLocked(g, n)
	return nil
}

// Blocked marks the holder as waiting on its consumer (true) or working
// again (false). The server calls it around sends that block on flow
// control.
func (g *Grant) Blocked(b bool) {
	if g == nil {
		return
	}
	if b {
		g.blockedSince.Store(time.Now().UnixNano())
	} else {
		g.blockedSince.Store(0)
	}
}

// Cut is closed when the controller ends the stream to free the memory
// it holds while blocked on its client (see Options.CutAfter): the stream
// must then fail with CutErr and Close the grant. A nil grant's is nil,
// which never fires.
func (g *Grant) Cut() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.cut
}

// CutErr is the error a cut stream fails with: it wraps ErrCut and says
// why. Nil while the stream is not cut.
func (g *Grant) CutErr() error {
	if g == nil || !isClosed(g.cut) {
		return nil
	}
	g.c.mu.Lock()
	defer g.c.mu.Unlock()
	return fmt.Errorf("%w: %s", ErrCut, g.cutReason)
}

// Close gives all of the grant's memory back. It is idempotent.
func (g *Grant) Close() {
	if g == nil || !g.closed.CompareAndSwap(false, true) {
		return
	}
	g.c.mu.Lock()
	defer g.c.mu.Unlock()
	g.c.closeLocked(g)
}

// closeLocked drops g from the holders and frees its memory.
func (c *Controller) closeLocked(g *Grant) {
	delete(c.holders, g)
	c.inUse -= g.n
	if g.small {
		c.smallInUse -= g.n
	}
	c.cutting -= g.cutBytes
	g.n, g.base, g.parked, g.cutBytes = 0, 0, 0, 0
	c.wakeLocked()
}
