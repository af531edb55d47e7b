package iosched

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// The planner is the state machine of one file's planned requests, kept
// apart from the locks, goroutines and IO of File so that it can be driven
// step by step in tests (plan_test.go; compare pebble's readaheadState).
// It never blocks, never reads storage and never takes a lock: File calls
// it under its mutex, passes the memory budget in as a function, and does
// what a step returns (start these fetches, give back that much budget,
// recycle those buffers).
//
// A planned request moves idle -> fetching -> ready -> done. A fetch that
// fails, or a ready request dropped to free memory, goes back to idle, so
// a later read fetches it on demand and reports any real error itself. A
// done request whose bytes are still lent (Borrow) keeps its budget (and
// File its buffer) until the last borrow is returned.
type reqState uint8

const (
	idle reqState = iota
	fetching
	ready
	done
)

func (s reqState) String() string {
	switch s {
	case idle:
		return "idle"
	case fetching:
		return "fetching"
	case ready:
		return "ready"
	case done:
		return "done"
	}
	return fmt.Sprintf("reqState(%d)", s)
}

// pending is one planned request: the planner's state of it, and the
// fetched bytes File keeps for it.
type pending struct {
	req         Request
	state       reqState
	charged     int64 // budget held for it
	consumed    int64 // needed bytes handed to the decoder
	lent        int   // borrows not yet returned
	readahead   bool  // its fetch in progress is readahead (counts in inflight)
	gapsDropped bool  // only its needed ranges were kept (Options.Tolerance)
	// The bytes of its fetched buffer handed to the decoder, and how many
	// of them lie in its needed ranges (accounting.go).
	used       coverage
	usedNeeded int64

	// Owned by File, under its mutex; the planner never touches them.
	segs []segment     // fetched bytes, cut from buf
	buf  []byte        // from getBuf
	wait chan struct{} // closed when the fetch in progress ends
	err  error         // of the last failed demand fetch, for its waiters
}

func (p *pending) covers(off, n int64) bool {
	return off >= p.req.Off && off+n <= p.req.end()
}

// limits bound a file's readahead.
type limits struct {
	window   int64 // prefetched, unconsumed bytes (Options.Window)
	inflight int   // readahead fetches at once (Options.Concurrency)
}

// planner holds a file's planned requests, by offset, and what they hold.
// The zero value is an empty plan.
type planner struct {
	pend     []*pending
	ahead    int64 // charged bytes of requests not done: fetched or being fetched, not consumed
	inflight int   // readahead fetches running
	hole     int64 // the hole the last plan was made with (Stats.Hole)
	planned  int64 // needed bytes planned (Stats.BytesPlanned)
	wasted   int64 // gap bytes fetched
	// The sorting of fetched bytes (accounting.go): bytes of planned
	// fetches that landed, those handed to the decoder (gapUsed of them
	// gap bytes, which then are not wasted), and those of requests that
	// left the ready state, or of failed fetches, never handed over.
	fetchedBytes, used, gapUsed, unused int64
}

// freed is what a step gives back: bytes of budget, and the requests whose
// buffers may be recycled (nothing holds a slice of them any more).
type freed struct {
	budget int64
	bufs   []*pending
}

func (fr *freed) add(o freed) {
	fr.budget += o.budget
	fr.bufs = append(fr.bufs, o.bufs...)
}

// add plans reqs, made with hole. Requests inside one already planned (a
// reader announcing a split twice) are not planned again.
func (pl *planner) add(reqs []Request, hole int64) {
	pl.hole = hole
	for _, r := range reqs {
		if pl.find(r.Off, r.Len) >= 0 {
			continue
		}
		pl.pend = append(pl.pend, &pending{req: r})
		pl.planned += r.Needed
	}
	slices.SortStableFunc(pl.pend, func(a, b *pending) int { return cmp.Compare(a.req.Off, b.req.Off) })
}

// find returns the index of the request that covers [off, off+n), or -1.
func (pl *planner) find(off, n int64) int {
	i := pl.search(off)
	if i < len(pl.pend) && pl.pend[i].covers(off, n) {
		return i
	}
	return -1
}

// search returns the index of the first request that ends after off.
func (pl *planner) search(off int64) int {
	return sort.Search(len(pl.pend), func(i int) bool { return pl.pend[i].req.end() > off })
}

// readahead starts fetches of idle requests, in file order, while the
// unconsumed prefetched bytes stay within lim.window, fewer than
// lim.inflight readahead fetches run, and tryBudget grants each request's
// length now. It returns the requests to fetch, marked fetching
// with their budget charged.
//
// Each readahead fetch that succeeds asks for the next (fetched): storage
// admits only so many requests anyway, and starting a fetch for every
// planned request at once (thousands, without coalescing) left the order
// in which they reached storage to the Go scheduler, so the first chunks
// the decoder needs could wait behind the rest of the file.
func (pl *planner) readahead(lim limits, tryBudget func(n int64) bool) []*pending {
	var start []*pending
	for _, p := range pl.pend {
		if pl.ahead >= lim.window || pl.inflight >= lim.inflight {
			break
		}
		if p.state != idle {
			continue
		}
		if !tryBudget(p.req.Len) {
			break
		}
		pl.start(p, true)
		start = append(start, p)
	}
	return start
}

// start marks the idle request p as fetching, its budget already granted;
// readahead counts it in inflight, a demand fetch (a read waiting for it)
// does not.
func (pl *planner) start(p *pending, readahead bool) {
	p.state = fetching
	p.charged = p.req.Len
	p.readahead = readahead
	pl.ahead += p.req.Len
	if readahead {
		pl.inflight++
	}
}

// finding is what a read finds in the plan.
type finding uint8

const (
	foundNone     finding = iota // no planned request holds the range: read it directly
	foundPartial                 // it overlaps a planned request but lies in none whole: read directly
	foundConsumed                // its request was consumed already: read directly
	foundGap                     // its request dropped the gap bytes it asks for: read directly
	foundIdle                    // planned, not fetched: fetch the request on demand
	foundFetching                // being fetched: wait for it
	foundReady                   // fetched: serve the read from it
)

func (f finding) String() string {
	return [...]string{"none", "partial", "consumed", "gap", "idle", "fetching", "ready"}[f]
}

// lookup returns the request that holds [off, off+n), and what the read
// finds there.
func (pl *planner) lookup(off, n int64) (*pending, finding) {
	i := pl.search(off)
	if i == len(pl.pend) {
		return nil, foundNone
	}
	p := pl.pend[i]
	switch {
	case !p.covers(off, n) && p.req.Off < off+n:
		return p, foundPartial
	case !p.covers(off, n):
		return nil, foundNone
	case p.state == done:
		return p, foundConsumed
	case p.state == idle:
		return p, foundIdle
	case p.state == fetching:
		return p, foundFetching
	case p.gapsDropped && !insideOne(p.req.Ranges, off, n):
		return p, foundGap
	}
	return p, foundReady
}

// insideOne reports whether [off, off+n) lies inside one of rs.
func insideOne(rs []Range, off, n int64) bool {
	for _, r := range rs {
		if off >= r.Off && off+n <= r.End() {
			return true
		}
	}
	return false
}

// dropsGaps reports whether a request's gap bytes exceed tolerance times
// its needed bytes, so that only the needed ranges are kept (ORC's
// tolerance): fewer round trips are not worth holding that much gap.
func dropsGaps(r Request, tolerance float64) bool {
	gap := r.Len - r.Needed
	return gap > 0 && float64(gap) > tolerance*float64(r.Needed)
}

// fetched records that p's fetch succeeded: p is ready. When only its
// needed ranges were kept (gapsDropped), the budget of the gaps is
// returned (the bytes to give back). File asks for readahead next.
func (pl *planner) fetched(p *pending, gapsDropped bool) (release int64) {
	pl.endFetch(p)
	p.state = ready
	pl.fetchedBytes += p.req.Len
	gap := p.req.Len - p.req.Needed
	pl.wasted += gap
	if !gapsDropped {
		return 0
	}
	p.gapsDropped = true
	p.charged -= gap
	pl.ahead -= gap
	return gap
}

// failed records that p's fetch failed, or ended after its file closed: p
// is idle again, and its memory free. A failed readahead does not ask for
// the next one: the read that needs p fetches it and reports the error.
func (pl *planner) failed(p *pending) freed {
	pl.endFetch(p)
	return pl.drop(p)
}

func (pl *planner) endFetch(p *pending) {
	if p.readahead {
		pl.inflight--
		p.readahead = false
	}
}

// drop frees p's memory and returns it to idle; p must not be lent. The
// needed bytes of a fetched p that no read took are unused; a later read
// fetches p again.
func (pl *planner) drop(p *pending) freed {
	if p.state == ready {
		pl.settle(p)
	}
	p.used, p.usedNeeded = coverage{}, 0
	pl.ahead -= p.charged
	fr := pl.free(p)
	p.state = idle
	p.gapsDropped = false
	return fr
}

// free gives back p's budget and buffer.
func (pl *planner) free(p *pending) freed {
	fr := freed{budget: p.charged, bufs: []*pending{p}}
	p.charged = 0
	return fr
}

// lend counts a borrow of p's bytes; returned gives it back.
func (pl *planner) lend(p *pending) { p.lent++ }

// returned records the end of a borrow of p. The last one of a done
// request frees its memory.
func (pl *planner) returned(p *pending) freed {
	p.lent--
	if p.lent > 0 || p.state != done {
		return freed{}
	}
	return pl.free(p)
}

// consume counts n bytes of the ready request p as handed to the decoder;
// once all its needed bytes were, p is done: its bytes no longer count as
// read ahead, and its memory is free now, or when its last borrow is
// returned. File asks for readahead next.
func (pl *planner) consume(p *pending, n int64) freed {
	p.consumed += n
	if p.consumed < p.req.Needed {
		return freed{}
	}
	return pl.retire(p)
}

func (pl *planner) retire(p *pending) freed {
	pl.settle(p)
	p.state = done
	pl.ahead -= p.charged
	if p.lent > 0 {
		return freed{}
	}
	return pl.free(p)
}

// handOver counts [off, off+n) of the ready request p as handed to the
// decoder, each byte once however often it is read.
func (pl *planner) handOver(p *pending, off, n int64) {
	fresh := p.used.add(off, n)
	var all int64
	for _, r := range fresh {
		all += r.Len
	}
	needed := within(fresh, p.req.Ranges)
	p.usedNeeded += needed
	pl.used += all
	pl.gapUsed += all - needed
}

// settle counts the needed bytes of p, which leaves the ready state, that
// no read took as unused.
func (pl *planner) settle(p *pending) {
	pl.unused += p.req.Needed - p.usedNeeded
}

// lost counts n bytes fetched for a request that did not become ready (a
// fetch that failed part way, or ended after its file closed): fetched,
// and never used.
func (pl *planner) lost(n int64) {
	pl.fetchedBytes += n
	pl.unused += n
}

// addStats adds the planned fetches' figures to st; the needed bytes of
// ready requests not read yet count as unused, as they would if the file
// were closed now.
func (pl *planner) addStats(st *Stats) {
	unused := pl.unused
	for _, p := range pl.pend {
		if p.state == ready {
			unused += p.req.Needed - p.usedNeeded
		}
	}
	st.BytesPlanned += pl.planned
	st.BytesFetched += pl.fetchedBytes
	st.BytesUsed += pl.used
	st.BytesWasted += pl.wasted - pl.gapUsed
	st.BytesUnused += unused
	st.Hole = pl.hole
}

// shed drops the file's readahead that nothing has read yet, except keep:
// a read about to wait for memory must not hold memory others wait for.
func (pl *planner) shed(keep *pending) freed {
	var fr freed
	for _, q := range pl.pend {
		if q != keep && q.state == ready && q.consumed == 0 && q.lent == 0 {
			fr.add(pl.drop(q))
		}
	}
	return fr
}

// close forgets the plan once the file's readahead has ended: it frees
// every request's memory but that of lent ones, which their last borrow
// frees (they are done from now on).
func (pl *planner) close() freed {
	var fr freed
	for _, p := range pl.pend {
		switch {
		case p.lent > 0:
			if p.state != done {
				fr.add(pl.retire(p))
			}
		case p.charged > 0:
			fr.add(pl.drop(p))
		}
	}
	pl.pend = nil
	return fr
}
