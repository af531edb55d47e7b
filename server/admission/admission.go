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

// ErrCut reports a stream ended to free the memory it held while blocked
// on its client (Grant.Cut). The server maps it to RESOURCE_EXHAUSTED.
var ErrCut = errors.New("stream ended to free memory")

// DefaultStuckAfter is how long every admitted stream must have been
// blocked on its consumer before a waiter is admitted over the limit.
const DefaultStuckAfter = time.Second

// Options tune a Controller; zero values are the defaults.
type Options struct {
	// StuckAfter: when every holder has been blocked on its client this
	// long, the next waiter is admitted over the share (see Controller).
	// 0 = DefaultStuckAfter.
	StuckAfter time.Duration
	// CutAfter: a holder blocked on its client this long may be ended
	// when a waiter does not fit. 0 = StuckAfter: a client reading its
	// own streams in order is let in over the limit first (see
	// Controller), once.
	CutAfter time.Duration
	// SmallShare is the part of the capacity kept for small streams;
	// 0 = 1/8 of the capacity, negative = none.
	SmallShare int64
	// SmallStream: a stream asking for at most this many bytes is small;
	// 0 = a quarter of SmallShare.
	SmallStream int64
}

// Controller hands out the decode share of the server's memory. It is
// safe for concurrent use. policy.go states the rules it follows: a small
// share kept for small streams, waiters served in arrival order but
// within their owners' fair shares first, and streams stalled on their
// clients ended, largest first, when a waiter does not fit.
//
// Waiting for memory could deadlock with clients: one that opens several
// streams but reads them in order leaves the later ones blocked in Send,
// holding their grants, while the stream it reads waits for admission.
// Holders therefore say when they are blocked on their consumer
// (Grant.Blocked); when every holder has been so for StuckAfter, the next
// waiter is admitted over the limit and counted. That happens again only
// once no stream admitted that way is itself blocked: streams of clients
// that read nothing are ended (CutAfter) rather than piled over the
// share.
type Controller struct {
	capacity    int64
	small       int64 // the small share
	smallStream int64 // streams asking for at most this are small
	stuckAfter  time.Duration
	cutAfter    time.Duration

	mu         sync.Mutex
	inUse      int64 // all grants
	smallInUse int64 // grants admitted in the small share
	cutting    int64 // bytes of grants cut and not yet closed
	holders    map[*Grant]struct{}
	waiters    list.List // of *waiter, in arrival order

	peak        atomic.Int64
	waiting     atomic.Int64
	overcommits atomic.Int64
	cuts        atomic.Int64
}

// waiter is a new stream waiting for n bytes.
type waiter struct {
	n     int64
	g     *Grant        // the grant it gets, made when it arrives
	ready chan struct{} // closed once served
}

// New returns a controller of capacity bytes (> 0; a nil *Controller is
// the way to say "no admission control") with the default options but
// StuckAfter (<= 0: DefaultStuckAfter).
func New(capacity int64, stuckAfter time.Duration) *Controller {
	return NewWithOptions(capacity, Options{StuckAfter: stuckAfter})
}

// NewWithOptions returns a controller of capacity bytes tuned by o.
func NewWithOptions(capacity int64, o Options) *Controller {
	if capacity <= 0 {
		panic(fmt.Sprintf("admission: capacity %d; use a nil *Controller for no admission control", capacity))
	}
	if o.StuckAfter <= 0 {
		o.StuckAfter = DefaultStuckAfter
	}
	if o.CutAfter <= 0 {
		o.CutAfter = o.StuckAfter
	}
	switch {
	case o.SmallShare == 0:
		o.SmallShare = capacity / 8
	case o.SmallShare < 0:
		o.SmallShare = 0
	}
	o.SmallShare = min(o.SmallShare, capacity/2)
	if o.SmallStream <= 0 {
		o.SmallStream = o.SmallShare / 4
	}
	return &Controller{capacity: capacity, small: o.SmallShare, smallStream: min(o.SmallStream, o.SmallShare),
		stuckAfter: o.StuckAfter, cutAfter: o.CutAfter, holders: map[*Grant]struct{}{}}
}

// Stats are figures for monitoring.
type Stats struct {
	Capacity    int64 // bytes; 0 = no admission control
	SmallShare  int64 // of Capacity, kept for small streams
	InUse       int64 // bytes held by admitted streams
	Peak        int64
	Streams     int   // admitted streams
	Waiting     int64 // streams waiting for memory
	Overcommits int64 // admissions and growth past the share
	Cuts        int64 // streams ended because they held memory while blocked on their clients
}

// Stats returns the current figures; a nil controller's are zero.
func (c *Controller) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Capacity: c.capacity, SmallShare: c.small, InUse: c.inUse, Peak: c.peak.Load(), Streams: len(c.holders),
		Waiting: c.waiting.Load(), Overcommits: c.overcommits.Load(), Cuts: c.cuts.Load()}
}

// Admit is AdmitFor an anonymous owner.
func (c *Controller) Admit(ctx context.Context, n int64) (*Grant, error) {
	return c.AdmitFor(ctx, n, Who{})
}

// AdmitFor waits until n bytes of decode memory are free for a stream run
// for who, and returns the grant to Close when the stream's decoders are
// closed. A stream asking for more than the capacity is admitted alone.
// A small stream (Options.SmallStream) does not wait behind larger ones.
// A nil controller admits at once with a nil grant.
func (c *Controller) AdmitFor(ctx context.Context, n int64, who Who) (*Grant, error) {
	if c == nil {
		return nil, nil
	}
	n = min(max(n, 0), c.capacity)
	w := &waiter{n: n, g: &Grant{c: c, base: n, who: who, cut: make(chan struct{})}, ready: make(chan struct{})}
	c.mu.Lock()
	if c.smallFitsLocked(n) || (c.waiters.Len() == 0 && c.fitsLocked(n)) {
		c.admitLocked(w)
		c.mu.Unlock()
		return w.g, nil
	}
	elem := c.waiters.PushBack(w)
	c.mu.Unlock()
	c.relieve(w, elem) // stalled holders may be cut at once
	return c.wait(ctx, w, elem)
}

// TryAdmitFor is AdmitFor that never waits: it grants n bytes for who
// only when they fit now and no stream waits (so it never overtakes a
// waiter, small ones included), and otherwise reports false and leaves
// everything as it was: it joins no queue, ends no stalled holder and
// never admits over the limit. A grant it makes is accounted as
// AdmitFor's (the small share for a small stream, the holders the policy
// weighs). It is for work that may be skipped, such as decoding a file
// ahead of a stream that already holds a grant: a holder that waited for
// a second grant could wait for one its peers, each holding their first,
// never give back. A nil controller admits at once with a nil grant.
func (c *Controller) TryAdmitFor(n int64, who Who) (*Grant, bool) {
	if c == nil {
		return nil, true
	}
	n = min(max(n, 0), c.capacity)
	w := &waiter{n: n, g: &Grant{c: c, base: n, who: who, cut: make(chan struct{})}, ready: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiters.Len() > 0 || !(c.smallFitsLocked(n) || c.fitsLocked(n)) {
		return nil, false
	}
	c.admitLocked(w)
	return w.g, true
}

// smallFitsLocked says a stream of n bytes is small and fits the small
// share.
func (c *Controller) smallFitsLocked(n int64) bool {
	return n <= c.smallStream && c.smallInUse+n <= c.small
}

// fitsLocked says a stream of n bytes fits the share of the other
// streams, or would run alone in it.
func (c *Controller) fitsLocked(n int64) bool {
	return c.inUse-c.smallInUse+n <= c.capacity-c.small || c.largeHoldersLocked() == 0
}

func (c *Controller) largeHoldersLocked() int {
	k := 0
	for g := range c.holders {
		if !g.small {
			k++
		}
	}
	return k
}

// admitLocked serves w in the lane it fits.
func (c *Controller) admitLocked(w *waiter) {
	w.g.small = c.smallFitsLocked(w.n)
	c.serveLocked(w.g, w.n)
	close(w.ready)
}

// wait blocks until w is served or ctx ends; meanwhile, when w is the
// next to serve, it ends stalled holders or admits over the limit as the
// policy says. c.mu must not be held.
func (c *Controller) wait(ctx context.Context, w *waiter, elem *list.Element) (*Grant, error) {
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	check := time.NewTicker(min(c.stuckAfter/4, 100*time.Millisecond))
	defer check.Stop()
	for {
		select {
		case <-w.ready:
			return w.g, nil
		case <-ctx.Done():
			return nil, c.giveUp(w, elem, ctx.Err())
		case <-check.C:
			c.relieve(w, elem)
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
		c.closeLocked(w.g)
	default:
		c.waiters.Remove(elem)
		c.wakeLocked() // our leaving may let those behind us in
	}
	return err
}

// relieve acts for w when it is the next to serve and does not fit: it
// ends the holders the policy picks, or, when none may be ended and every
// holder is stuck, admits w over the limit.
func (c *Controller) relieve(w *waiter, elem *list.Element) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-w.ready:
		return
	default:
	}
	if c.nextLocked() != elem {
		return
	}
	if c.fitsLocked(w.n) {
		c.wakeLocked()
		return
	}
	now := time.Now()
	hs, gs := c.holdingsLocked(now)
	u := usageOf(hs, c.claimsLocked())
	// What must come back beyond what the grants being ended will give.
	// A stream larger than the share fits only alone: then every stalled
	// holder may go.
	need := c.inUse - c.smallInUse + w.n - (c.capacity - c.small) - c.cutting
	// A client reading its own streams in order first: when every holder
	// is stuck and no stream admitted over the limit is, the waiter gets
	// in over it; otherwise stalled holders make room.
	if c.cutting == 0 && c.allStuckLocked(now) && !c.stalledOvercommitLocked() {
		c.waiters.Remove(elem)
		c.overcommits.Add(1)
		w.g.overcommitted = true
		c.serveLocked(w.g, w.n)
		close(w.ready)
		return
	}
	for _, i := range victims(hs, need, c.cutAfter, u, c.capacity-c.small, decodeBytes) {
		c.cutLocked(gs[i], hs[i].blocked, u)
	}
}

// Relieve ends streams blocked on their clients for CutAfter, by the
// policy's order, until about need bytes of the memory they hold outside
// the share (Grant.HoldsAlso) come back. The server calls it when a scan
// finds the prefetch memory it needs held by others: the streams of
// clients that read nothing pin prefetched buffers their unsent messages
// point into, and a scan short of them reads slowly. It never waits.
func (c *Controller) Relieve(need int64) {
	if c == nil || need <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	hs, gs := c.holdingsLocked(time.Now())
	u := usageOf(hs, c.claimsLocked())
	for _, i := range victims(hs, need, c.cutAfter, u, c.capacity-c.small, otherBytes) {
		if hs[i].other > 0 {
			c.cutLocked(gs[i], hs[i].blocked, u)
		}
	}
}

// cutLocked marks g to be ended by its stream, saying why.
func (c *Controller) cutLocked(g *Grant, blocked time.Duration, u usage) {
	g.cutBytes = g.n
	c.cutting += g.n
	c.cuts.Add(1)
	why := "the most of the streams blocked on their clients"
	if u.excess(g.who, 0, c.capacity-c.small) > 0 {
		why = "more than its client's fair share"
	}
	held := g.n
	if g.other != nil {
		held += g.other()
	}
	g.cutReason = fmt.Sprintf("the client read nothing for %v while other scans waited for memory, so the server ended this stream, which held %d bytes, %s; read streams as their data arrives, or open fewer at once",
		blocked.Round(100*time.Millisecond), held, why)
	close(g.cut)
}

// holdingsLocked lists the holders for the policy, in a fixed order.
func (c *Controller) holdingsLocked(now time.Time) ([]holding, []*Grant) {
	hs := make([]holding, 0, len(c.holders))
	gs := make([]*Grant, 0, len(c.holders))
	for g := range c.holders {
		var blocked time.Duration
		if since := g.blockedSince.Load(); since != 0 {
			blocked = max(now.Sub(time.Unix(0, since)), time.Nanosecond)
		}
		var other int64
		if g.other != nil {
			other = g.other()
		}
		hs = append(hs, holding{n: g.n, other: other, who: g.who, blocked: blocked, cut: g.cutBytes > 0 || isClosed(g.cut)})
		gs = append(gs, g)
	}
	return hs, gs
}

// claimsLocked lists the waiters for the policy, in arrival order.
func (c *Controller) claimsLocked() []claim {
	ws := make([]claim, 0, c.waiters.Len())
	for e := c.waiters.Front(); e != nil; e = e.Next() {
		w := e.Value.(*waiter)
		ws = append(ws, claim{n: w.n, who: w.g.who})
	}
	return ws
}

// nextLocked is the waiter the policy serves next; nil when none waits.
func (c *Controller) nextLocked() *list.Element {
	if c.waiters.Len() == 0 {
		return nil
	}
	hs, _ := c.holdingsLocked(time.Now())
	ws := c.claimsLocked()
	i := next(ws, usageOf(hs, ws), c.capacity-c.small)
	e := c.waiters.Front()
	for ; i > 0; i-- {
		e = e.Next()
	}
	return e
}

// serveLocked adds n bytes to g, making it a holder.
func (c *Controller) serveLocked(g *Grant, n int64) {
	if g.closed.Load() {
		return // its memory went back at Close; it holds nothing more
	}
	c.holders[g] = struct{}{}
	g.n += n
	c.inUse += n
	if g.small {
		c.smallInUse += n
	}
	if c.inUse > c.peak.Load() {
		c.peak.Store(c.inUse)
	}
}

// shrinkLocked takes up to n bytes back from g and lets waiters in.
func (c *Controller) shrinkLocked(g *Grant, n int64) {
	n = min(n, g.n)
	g.n -= n
	c.inUse -= n
	if g.small {
		c.smallInUse -= n
	}
	c.wakeLocked()
}

// wakeLocked serves waiters while they fit: small ones in the small
// share in arrival order, then the next by the policy, as long as it
// fits.
func (c *Controller) wakeLocked() {
	for {
		var e *list.Element
		for s := c.waiters.Front(); s != nil; s = s.Next() {
			if c.smallFitsLocked(s.Value.(*waiter).n) {
				e = s
				break
			}
		}
		if e == nil {
			if e = c.nextLocked(); e == nil || !c.fitsLocked(e.Value.(*waiter).n) {
				return
			}
		}
		c.waiters.Remove(e)
		c.admitLocked(e.Value.(*waiter))
	}
}

// allStuckLocked reports whether there are holders and every one has been
// blocked on its consumer for stuckAfter.
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

// stalledOvercommitLocked says a stream admitted over the limit is itself
// blocked on its client: admitting more over the limit would pile up the
// streams of clients that read nothing.
func (c *Controller) stalledOvercommitLocked() bool {
	for g := range c.holders {
		if g.overcommitted && g.blockedSince.Load() != 0 {
			return true
		}
	}
	return false
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
