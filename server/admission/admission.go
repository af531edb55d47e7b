package admission

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrOverBudget reports a reservation larger than the whole decode share:
// no amount of waiting makes it fit. The server maps it to
// RESOURCE_EXHAUSTED.
var ErrOverBudget = errors.New("larger than the decode memory share")

// DefaultStuckAfter is how long every admitted stream must have been
// blocked on its consumer before a waiter is admitted over the limit.
const DefaultStuckAfter = time.Second

// Controller hands out the decode share of the server's memory, first
// come, first served. It is safe for concurrent use.
//
// Waiting for memory could deadlock with clients: one that opens several
// streams but reads them in order leaves the later ones blocked in Send,
// holding their grants, while the stream it reads waits for admission.
// Holders therefore say when they are blocked on their consumer
// (Grant.Blocked); when every holder has been so for stuckAfter, the first
// waiter is admitted over the limit and counted. Memory then exceeds the
// share by that stream for as long as clients leave their streams unread,
// which is the price of never hanging a well-behaved client that reads in
// order. A grant waiting in Reserve counts as blocked too: two streams
// each waiting to grow would otherwise wait for each other forever.
type Controller struct {
	capacity   int64
	stuckAfter time.Duration

	mu      sync.Mutex
	inUse   int64
	holders map[*Grant]struct{}
	waiters list.List // of *waiter: growing grants first, then new streams in arrival order

	peak        atomic.Int64
	waiting     atomic.Int64
	overcommits atomic.Int64
}

// waiter is a stream waiting for n bytes: a new stream (grow nil) or an
// admitted one growing its grant.
type waiter struct {
	n     int64
	grow  *Grant
	ready chan struct{} // closed when served by a release
	g     *Grant        // the grant served, set before ready is closed
}

// New returns a controller of capacity bytes (> 0; a nil *Controller is
// the way to say "no admission control"). stuckAfter <= 0 means
// DefaultStuckAfter.
func New(capacity int64, stuckAfter time.Duration) *Controller {
	if capacity <= 0 {
		panic(fmt.Sprintf("admission: capacity %d; use a nil *Controller for no admission control", capacity))
	}
	if stuckAfter <= 0 {
		stuckAfter = DefaultStuckAfter
	}
	return &Controller{capacity: capacity, stuckAfter: stuckAfter, holders: map[*Grant]struct{}{}}
}

// Stats are figures for monitoring.
type Stats struct {
	Capacity    int64 // bytes; 0 = no admission control
	InUse       int64 // bytes held by admitted streams
	Peak        int64
	Streams     int   // admitted streams
	Waiting     int64 // streams waiting for memory (to start, or to grow)
	Overcommits int64 // waiters served over the limit because every holder was blocked
}

// Stats returns the current figures; a nil controller's are zero.
func (c *Controller) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Capacity: c.capacity, InUse: c.inUse, Peak: c.peak.Load(), Streams: len(c.holders),
		Waiting: c.waiting.Load(), Overcommits: c.overcommits.Load()}
}

// Admit waits until n bytes of decode memory are free, and returns the
// grant to Close when the stream's decoders are closed. A stream asking
// for more than the whole capacity is admitted alone. A nil controller
// admits at once with a nil grant.
func (c *Controller) Admit(ctx context.Context, n int64) (*Grant, error) {
	if c == nil {
		return nil, nil
	}
	n = min(max(n, 0), c.capacity)
	c.mu.Lock()
	if c.waiters.Len() == 0 && c.inUse+n <= c.capacity {
		g := &Grant{c: c, base: n}
		c.serveLocked(g, n)
		c.mu.Unlock()
		return g, nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	elem := c.waiters.PushBack(w)
	c.mu.Unlock()
	g, err := c.wait(ctx, w, elem)
	if g != nil {
		c.mu.Lock()
		g.base = n
		c.mu.Unlock()
	}
	return g, err
}

// wait blocks until w is served, ctx ends, or every holder is stuck and w
// is first in line. c.mu must not be held.
func (c *Controller) wait(ctx context.Context, w *waiter, elem *list.Element) (*Grant, error) {
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	check := time.NewTicker(c.stuckAfter / 4)
	defer check.Stop()
	for {
		select {
		case <-w.ready:
			return w.g, nil
		case <-ctx.Done():
			return nil, c.giveUp(w, elem, ctx.Err())
		case <-check.C:
			if g, ok := c.overcommit(w, elem); ok {
				return g, nil
			}
		}
	}
}

// giveUp takes w out of line after its context ended; memory it was served
// meanwhile goes back.
func (c *Controller) giveUp(w *waiter, elem *list.Element, err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-w.ready:
		if w.grow == nil {
			c.closeLocked(w.g)
		} else {
			c.shrinkLocked(w.g, w.n)
		}
	default:
		c.waiters.Remove(elem)
		c.wakeLocked() // our leaving may let those behind us in
	}
	return err
}

// overcommit serves w over the limit when it is first in line and every
// holder has been blocked for stuckAfter.
func (c *Controller) overcommit(w *waiter, elem *list.Element) (*Grant, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-w.ready:
		return w.g, true
	default:
	}
	if c.waiters.Front() != elem || !c.allStuckLocked(time.Now()) {
		return nil, false
	}
	c.waiters.Remove(elem)
	c.overcommits.Add(1)
	c.serveLocked(w.target(c), w.n)
	return w.g, true
}

// target is the grant a waiter's bytes go to, made for a new stream.
func (w *waiter) target(c *Controller) *Grant {
	if w.g == nil {
		w.g = w.grow
		if w.g == nil {
			w.g = &Grant{c: c}
		}
	}
	return w.g
}

// serveLocked adds n bytes to g, making it a holder.
func (c *Controller) serveLocked(g *Grant, n int64) {
	if g.closed.Load() {
		return // its memory went back at Close; it holds nothing more
	}
	c.holders[g] = struct{}{}
	g.n += n
	c.inUse += n
	if c.inUse > c.peak.Load() {
		c.peak.Store(c.inUse)
	}
}

// shrinkLocked takes up to n bytes back from g and lets waiters in.
func (c *Controller) shrinkLocked(g *Grant, n int64) {
	n = min(n, g.n)
	g.n -= n
	c.inUse -= n
	c.wakeLocked()
}

// wakeLocked serves waiters from the front while they fit. A waiter fits
// when its bytes fit, or when nobody else holds memory (a stream larger
// than the share runs alone rather than never).
func (c *Controller) wakeLocked() {
	for e := c.waiters.Front(); e != nil; e = c.waiters.Front() {
		w := e.Value.(*waiter)
		others := len(c.holders)
		if _, ok := c.holders[w.grow]; ok {
			others--
		}
		if others > 0 && c.inUse+w.n > c.capacity {
			return
		}
		c.waiters.Remove(e)
		c.serveLocked(w.target(c), w.n)
		close(w.ready)
	}
}

// allStuckLocked reports whether there are holders and every one has been
// blocked on its consumer (or waiting to grow) for stuckAfter.
func (c *Controller) allStuckLocked(now time.Time) bool {
	if len(c.holders) == 0 {
		return false
	}
	for g := range c.holders {
		since := g.blockedSince.Load()
		if since == 0 || now.Sub(time.Unix(0, since)) < c.stuckAfter {
			return false
		}
	}
	return true
}

// pushGrowerLocked queues a growing grant behind the other growing ones
// and ahead of new streams: it holds memory already, and finishing it is
// what frees memory for the rest.
func (c *Controller) pushGrowerLocked(w *waiter) *list.Element {
	for e := c.waiters.Front(); e != nil; e = e.Next() {
		if e.Value.(*waiter).grow == nil {
			return c.waiters.InsertBefore(w, e)
		}
	}
	return c.waiters.PushBack(w)
}
