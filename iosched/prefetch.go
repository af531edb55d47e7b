package iosched

import (
	"context"
	"errors"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/scand/scand/storage"
)

// budgetWait is how long a read waits for prefetch memory before reading
// its range directly instead.
const budgetWait = 100 * time.Millisecond

// A planned request moves idle -> fetching -> ready -> done. Readahead
// that fails or is dropped for budget goes back to idle, so a later read
// fetches it on demand and reports any real error itself. A done request
// whose bytes are still lent (Borrow) keeps its buffer and budget until
// the last borrow is released.
const (
	idle = iota
	fetching
	ready
	done
)

// segment is fetched bytes standing for the file range [off, off+len(data)).
type segment struct {
	off  int64
	data []byte
}

// pending is one planned request of a file.
type pending struct {
	req      Request
	state    int
	segs     []segment
	buf      []byte // what segs are cut from, from getBuf
	charged  int64  // budget held for segs
	consumed int64
	lent     int           // borrows of segs not yet released
	wait     chan struct{} // closed when a fetch in progress ends
	err      error         // of the last demand fetch
}

func (p *pending) covers(off, n int64) bool {
	return off >= p.req.Off && off+n <= p.req.end()
}

// Prefetch plans the given ranges, which a reader announces in the order it
// will read them, into coalesced requests, and starts reading the first ones
// ahead within the file's window and the scheduler's memory budget. Reads
// of these ranges are then served from memory. It implements
// scanner.Prefetcher.
func (f *File) Prefetch(ranges []Range) {
	if f.sched == nil {
		return
	}
	o := f.sched.opts
	hole, maxReq := o.Hole, o.MaxRequest
	if o.NoCoalesce {
		hole, maxReq = -1, 0
	} else if hole <= 0 {
		hole = f.sched.model(f.info.Name).hole()
	}
	reqs := Coalesce(ranges, hole, max(maxReq, 1))
	if o.NoCoalesce {
		// One request per range, as a reader without a scheduler does.
		reqs = Coalesce(ranges, -1, 1)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.hole = hole
	for _, r := range reqs {
		// Ranges already planned (a reader announcing a split twice) are
		// not fetched again.
		if i := f.find(r.Off, r.Len); i >= 0 {
			continue
		}
		f.pend = append(f.pend, &pending{req: r})
		f.planned.Add(r.Needed)
	}
	sort.Slice(f.pend, func(i, j int) bool { return f.pend[i].req.Off < f.pend[j].req.Off })
	f.readaheadLocked()
}

// find returns the index of the planned request that covers [off, off+n),
// or -1. Callers hold f.mu.
func (f *File) find(off, n int64) int {
	i := sort.Search(len(f.pend), func(i int) bool { return f.pend[i].req.end() > off })
	if i < len(f.pend) && f.pend[i].covers(off, n) {
		return i
	}
	return -1
}

// readaheadLocked starts fetches of idle requests, in file order, while
// the file's unconsumed prefetched bytes stay within the window and the
// scheduler's budget has room right now. Callers hold f.mu.
//
// At most Options.Concurrency readahead fetches of a file run at once, and
// each one that succeeds starts the next: storage admits only that many
// requests anyway, and starting a goroutine for every planned request at
// once (thousands, without coalescing) left the order in which they
// reached storage to the Go scheduler, so the first chunks the decoder
// needs could wait behind the rest of the file.
func (f *File) readaheadLocked() {
	window := f.sched.opts.Window
	for _, p := range f.pend {
		if f.ahead >= window || f.inflight >= f.sched.opts.Concurrency {
			return
		}
		if p.state != idle {
			continue
		}
		if !f.sched.budget.tryAcquire(p.req.Len) {
			return
		}
		f.startLocked(p)
		f.inflight++
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.fill(p, false)
		}()
	}
}

// startLocked marks p as fetching, with its budget already acquired.
func (f *File) startLocked(p *pending) {
	p.state = fetching
	p.charged = p.req.Len
	p.wait = make(chan struct{})
	f.ahead += p.req.Len
}

// fill fetches p's span, in parallel parts when it is large, and makes it
// ready; on failure it gives the budget back and returns p to idle
// (readahead) or records the error (demand).
func (f *File) fill(p *pending, demand bool) {
	gap := p.req.Len - p.req.Needed
	dropGaps := gap > 0 && float64(gap) > f.sched.opts.Tolerance*float64(p.req.Needed)
	if dropGaps && p.req.Len <= f.sched.opts.MaxRequest {
		if buf, segs, err := f.fetchSpans(p.req); !errors.Is(err, errors.ErrUnsupported) {
			f.filled(p, demand, err, func() {
				// The gaps never reached memory: give their budget back.
				p.buf, p.segs = buf, segs
				f.releaseGapsLocked(p)
			})
			return
		}
	}
	// The parts cover the whole buffer, so a fetch that succeeds leaves
	// none of a pooled buffer's old bytes.
	buf := getBuf(p.req.Len)
	g, gctx := errgroup.WithContext(f.ctx)
	for _, part := range parts(p.req, f.sched.opts.MaxRequest) {
		g.Go(func() error {
			return f.fetchCtx(gctx, buf[part.Off-p.req.Off:part.End()-p.req.Off], part.Off)
		})
	}
	err := g.Wait()
	f.filled(p, demand, err, func() {
		// ORC's tolerance: when most of what was read is gap, keep only
		// the needed ranges and give the rest of the memory back at once.
		if dropGaps {
			p.buf = getBuf(p.req.Needed)
			p.segs = neededSegments(p.req, p.buf)
			for _, seg := range p.segs {
				copy(seg.data, buf[seg.off-p.req.Off:])
			}
			putBuf(buf) // its needed bytes were copied out
			f.releaseGapsLocked(p)
			return
		}
		p.buf, p.segs = buf, []segment{{off: p.req.Off, data: buf}}
	})
	// On failure (or Close) buf is left to the garbage collector, not
	// pooled: failures are rare, and a store that went on writing into a
	// buffer after failing (against storage.Object's contract, say a body
	// still draining after a cancel) can then not corrupt a later fetch.
}

// fetchSpans reads a request whose gaps exceed the tolerance in one
// storage request that keeps only the needed ranges (an object that
// declares storage.Capabilities.SpanReads), so the gaps are dropped as they
// arrive instead of after the fetch. It returns errors.ErrUnsupported,
// without a request, when the object cannot.
// The segments are cut from buf, which the caller owns.
func (f *File) fetchSpans(req Request) (buf []byte, segs []segment, err error) {
	if !f.obj.Capabilities().SpanReads {
		return nil, nil, errors.ErrUnsupported
	}
	// ReadSpans fills every span or fails, and the spans cover buf (see
	// neededSegments), so a pooled buffer keeps none of its old bytes.
	buf = getBuf(req.Needed)
	segs = neededSegments(req, buf)
	spans := make([]storage.Span, len(segs))
	for i, seg := range segs {
		spans[i] = storage.Span{Off: seg.off, Buf: seg.data}
	}
	err = f.request(f.ctx, req.Len, func(ctx context.Context) error { return f.obj.ReadSpans(ctx, spans) })
	return buf, segs, err
}

// neededSegments cuts buf, of req.Needed bytes, into a segment per needed
// range of req, back to back: together they cover all of buf.
func neededSegments(req Request, buf []byte) []segment {
	segs := make([]segment, 0, len(req.Ranges))
	pos := int64(0)
	for _, r := range req.Ranges {
		segs = append(segs, segment{off: r.Off, data: buf[pos : pos+r.Len : pos+r.Len]})
		pos += r.Len
	}
	return segs
}

// releaseGapsLocked gives back the budget p holds for its gap bytes, once
// they are dropped. Callers hold f.mu.
func (f *File) releaseGapsLocked(p *pending) {
	gap := p.req.Len - p.req.Needed
	f.sched.budget.release(gap)
	p.charged -= gap
	f.ahead -= gap
}

// filled records the end of p's fetch: on success keep runs (it sets
// p.segs) and p becomes ready; on failure p's memory is freed.
func (f *File) filled(p *pending, demand bool, err error, keep func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer close(p.wait)
	if !demand {
		f.inflight--
	}
	if err != nil || f.closed {
		f.dropLocked(p)
		if demand {
			p.err = err
			if err == nil {
				p.err = context.Canceled
			}
		}
		// A failed readahead does not start the next one: the request is
		// idle again, and the read that needs it fetches it and reports
		// the error.
		return
	}
	// Keep the pipeline full, in file order. (Close sets closed under
	// f.mu before waiting for fetches, and this fetch still counts in
	// f.wg, so starting another here is safe.)
	defer f.readaheadLocked()
	p.state = ready
	f.wasted.Add(p.req.Len - p.req.Needed)
	keep()
}

// dropLocked frees p's memory and returns it to idle; p must not be lent.
// Callers hold f.mu.
func (f *File) dropLocked(p *pending) {
	f.ahead -= p.charged
	f.freeLocked(p)
	p.state = idle
}

// retireLocked marks p done (consumed, or its file closed): its bytes no
// longer count as read ahead, and its memory is freed now, or by the last
// release of its borrows. Callers hold f.mu.
func (f *File) retireLocked(p *pending) {
	p.state = done
	f.ahead -= p.charged
	if p.lent == 0 {
		f.freeLocked(p)
	}
}

// freeLocked gives p's budget back and its buffer to the pool. Nothing may
// hold a slice of p.segs any more. Callers hold f.mu.
func (f *File) freeLocked(p *pending) {
	f.sched.budget.release(p.charged)
	p.charged = 0
	p.segs = nil
	putBuf(p.buf)
	p.buf = nil
}

// consumeLocked counts n bytes of p as handed to the decoder, retires p
// once all its needed bytes were, and keeps the readahead going. Callers
// hold f.mu.
func (f *File) consumeLocked(p *pending, n int64) {
	p.consumed += n
	if p.consumed >= p.req.Needed {
		f.retireLocked(p)
	}
	f.readaheadLocked()
}

// readPlanned serves [off, off+len(buf)) from a planned request if one
// covers it, fetching that request now if needed. It reports false when no
// planned request covers the range, or the request was already consumed.
func (f *File) readPlanned(buf []byte, off int64) (bool, error) {
	n := int64(len(buf))
	p, err := f.readyLocked(off, n)
	if p == nil {
		return err != nil, err
	}
	defer f.mu.Unlock()
	b := segmentAt(p.segs, off, n)
	if b == nil {
		return false, nil // compacted away: the read asks for gap bytes
	}
	copy(buf, b)
	f.consumeLocked(p, n)
	return true, nil
}

// readyLocked returns the planned request that covers [off, off+n) once
// it is ready, waiting for a fetch in progress or fetching it now when it
// is idle, and returns with f.mu held. Otherwise it returns nil, without
// f.mu: with a nil error when no planned request covers the range, the
// request was already consumed, or memory is too short to fetch it (the
// caller reads the range directly); or with the error of the fetch, or of
// the file's context.
func (f *File) readyLocked(off, n int64) (*pending, error) {
	f.mu.Lock()
	i := f.find(off, n)
	if i < 0 {
		f.mu.Unlock()
		return nil, nil
	}
	p := f.pend[i]
	for {
		switch p.state {
		case done:
			f.mu.Unlock()
			return nil, nil
		case ready:
			return p, nil
		case fetching:
			wait := p.wait
			f.mu.Unlock()
			select {
			case <-wait:
			case <-f.ctx.Done():
				return nil, f.ctx.Err()
			}
			f.mu.Lock()
			if p.state == idle && p.err != nil {
				err := p.err
				p.err = nil
				f.mu.Unlock()
				return nil, err
			}
		case idle:
			// Demand fetch. If budget is short, give back this file's own
			// readahead first: a scan that waits for memory must not hold
			// memory others wait for.
			if !f.sched.budget.tryAcquire(p.req.Len) {
				for _, q := range f.pend {
					if q != p && q.state == ready && q.consumed == 0 && q.lent == 0 {
						f.dropLocked(q)
					}
				}
				f.mu.Unlock()
				// Wait a little for memory, then give up on buffering: the
				// caller reads just its own range straight from storage into
				// its own buffer. Waiting without bound could deadlock, since
				// every scan may hold partly read buffers while it waits for
				// more; reading directly needs no budget and always
				// progresses, at the cost of more, smaller requests while
				// memory is short.
				wctx, cancel := context.WithTimeout(f.ctx, budgetWait)
				err := f.sched.budget.acquire(wctx, p.req.Len)
				cancel()
				switch {
				case errors.Is(err, ErrOverBudget), f.ctx.Err() != nil:
					if err == nil {
						// Acquired just as the scan was cancelled.
						f.sched.budget.release(p.req.Len)
						err = f.ctx.Err()
					}
					return nil, err
				case err != nil:
					f.budgetMisses.Add(1)
					return nil, nil
				}
				f.mu.Lock()
				if p.state != idle {
					f.sched.budget.release(p.req.Len)
					continue
				}
			}
			f.startLocked(p)
			f.mu.Unlock()
			f.fill(p, true)
			f.mu.Lock()
			if p.state == idle && p.err != nil {
				err := p.err
				p.err = nil
				f.mu.Unlock()
				return nil, err
			}
		}
	}
}

// segmentAt returns [off, off+n) from the segment that holds it, capped so
// that appending to it cannot reach the bytes after it; nil when no
// segment holds all of it.
func segmentAt(segs []segment, off, n int64) []byte {
	for _, s := range segs {
		if off >= s.off && off+n <= s.off+int64(len(s.data)) {
			i := off - s.off
			return s.data[i : i+n : i+n]
		}
	}
	return nil
}

// closePrefetch stops readahead and frees every buffer not lent; the last
// release of a lent one frees it.
func (f *File) closePrefetch() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pend {
		switch {
		case p.lent > 0:
			if p.state != done {
				f.retireLocked(p)
			}
		case p.charged > 0:
			f.dropLocked(p)
		}
	}
	f.pend = nil
}

// fetchCtx reads from storage under the scheduler's limit on requests in
// flight, and teaches the store's latency model.
func (f *File) fetchCtx(ctx context.Context, p []byte, off int64) error {
	return f.request(ctx, int64(len(p)), func(ctx context.Context) error { return f.obj.ReadAt(ctx, p, off) })
}

// request runs one storage request of n bytes under the scheduler's limit
// on requests in flight, counts it, and teaches the store's latency model.
func (f *File) request(ctx context.Context, n int64, read func(context.Context) error) error {
	if f.sched != nil {
		if err := f.sched.gets.Acquire(ctx, 1); err != nil {
			return err
		}
		defer f.sched.gets.Release(1)
	}
	start := time.Now()
	err := read(ctx)
	d := time.Since(start)
	f.ioNanos.Add(int64(d))
	f.reads.Add(1)
	if err == nil {
		f.fetched.Add(n)
		if f.sched != nil {
			f.sched.model(f.info.Name).observe(n, d)
		}
		return nil
	}
	if !errors.Is(err, context.Canceled) || f.ctx.Err() != nil {
		f.noteErr(err)
	}
	return err
}
