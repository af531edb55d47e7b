package iosched

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/scand/scand/storage"
)

// This file and read.go are File's side of planning: they run the planner
// (plan.go) under f.mu and do what its steps ask for: start fetches (here),
// wait for them and for memory (read.go), and free buffers. No function
// returns with f.mu held.

// Prefetch plans the given ranges, which a reader announces in the order it
// will read them, into coalesced requests, and starts reading the first ones
// ahead within the file's window and the scheduler's memory budget. Reads
// of these ranges are then served from memory. It implements
// scanner.Prefetcher. Ranges the tail read holds already (a small file
// read whole: Warm) are not planned again.
func (f *File) Prefetch(ranges []Range) { f.prefetch(ranges, false) }

// PrefetchSelective is Prefetch for the ranges of a selective plan (a few
// pages of each column chunk, kept by the page index or a limit): on a
// remote store they are merged across less of their gaps (holepolicy.go).
// It implements scanner.SelectivePrefetcher.
func (f *File) PrefetchSelective(ranges []Range) { f.prefetch(ranges, true) }

func (f *File) prefetch(ranges []Range, selective bool) {
	if ranges = f.untailed(ranges); len(ranges) == 0 {
		return
	}
	hole, reqs := f.coalesce(ranges, selective)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.plan.add(reqs, hole)
	f.readaheadLocked()
}

// Pause frees the file's readahead that nothing has read yet (fetched,
// unconsumed, not lent) and starts no more until Unpause. A reader whose
// consumer stopped taking its output calls it, so that it does not hold
// prefetch memory other scans wait for; what it dropped is fetched again,
// on demand or by readahead after Unpause, if the reader goes on. Fetches
// already running finish, and keep their bytes.
func (f *File) Pause() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.paused = true
	f.freeLocked(f.plan.shed(nil))
}

// Unpause lets readahead start again after Pause.
func (f *File) Unpause() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.paused {
		return
	}
	f.paused = false
	f.readaheadLocked()
}

// coalesce plans ranges into requests across the file's hole (pinned, or
// the hole policy's for its store and the plan: holepolicy.go) within
// MaxRequest, or, with NoCoalesce, into one request per range, as a
// reader without a scheduler reads them (hole -1).
func (f *File) coalesce(ranges []Range, selective bool) (hole int64, reqs []Request) {
	o := f.sched.opts
	if o.NoCoalesce {
		return -1, Coalesce(ranges, -1, 1)
	}
	hole = f.hole(selective)
	return hole, Coalesce(ranges, hole, o.MaxRequest)
}

// hole is the gap read through for a plan of this file: Options.Hole when
// pinned, else the hole policy's for the object's store.
func (f *File) hole(selective bool) int64 {
	if h := f.sched.opts.Hole; h > 0 {
		return h
	}
	return holePolicy{caps: f.obj.Capabilities(), learned: f.sched.model(f.info.Name).hole(),
		parallel: f.sched.opts.Concurrency, selective: selective}.hole()
}

// readaheadLocked starts the fetches the planner picks next, each in its
// own goroutine (counted in f.wg, so Close can wait for them). Callers
// hold f.mu.
func (f *File) readaheadLocked() {
	if f.closed || f.paused {
		return
	}
	lim := limits{window: f.sched.opts.Window, inflight: f.sched.opts.Concurrency}
	for _, p := range f.plan.readahead(lim, f.sched.budget.tryAcquire) {
		p.wait = make(chan struct{})
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.fill(p, false)
		}()
	}
}

// startDemandLocked marks p as fetched by the read that needs it, its
// budget already acquired. Callers hold f.mu.
func (f *File) startDemandLocked(p *pending) {
	f.plan.start(p, false)
	p.wait = make(chan struct{})
}

// fill fetches p and records the outcome: on success p is ready and the
// readahead goes on; on failure p's budget is given back and p is idle
// again, and a demand fetch's error is left in p.err for the reads
// waiting for it.
func (f *File) fill(p *pending, demand bool) {
	res := f.fetchRequest(p.req)
	if res.err == nil {
		// A file rewritten in place between two fills would mix versions:
		// check the object once per fill (one fstat for local files).
		if res.err = f.obj.Recheck(f.ctx); res.err != nil {
			f.setErr(res.err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer close(p.wait)
	if res.err != nil || f.closed {
		// res.buf is left to the garbage collector, not pooled: see
		// fetchRequest. What arrived of it was fetched for nothing.
		f.plan.lost(res.got)
		f.freeLocked(f.plan.failed(p))
		if demand {
			p.err = res.err
			if p.err == nil {
				p.err = context.Canceled
			}
		}
		return
	}
	p.buf, p.segs = res.buf, res.segs
	f.sched.budget.release(f.plan.fetched(p, res.gapsDropped))
	f.readaheadLocked()
}

// freeLocked gives back what a planner step freed: budget, and buffers to
// the pool. Callers hold f.mu.
func (f *File) freeLocked(fr freed) {
	f.sched.budget.release(fr.budget)
	for _, p := range fr.bufs {
		putBuf(p.buf)
		p.buf, p.segs = nil, nil
	}
}

// segment is fetched bytes standing for the file range [off, off+len(data)).
type segment struct {
	off  int64
	data []byte
}

// fetchResult is what fetching one planned request gave: the buffer, the
// segments cut from it, and whether only the needed ranges were kept.
type fetchResult struct {
	buf         []byte
	segs        []segment
	gapsDropped bool
	err         error
	// got is the bytes that arrived: all of the request's on success,
	// those of the parts that succeeded on failure.
	got int64
}

// fetchRequest reads req from storage, in parallel parts when it is large.
// When its gaps exceed the tolerance only the needed ranges are kept:
// dropped while reading where the object can (fetchSpans), else copied out
// right after the fetch so that the memory of the gaps goes back at once.
//
// On failure the buffer is left to the garbage collector, not pooled:
// failures are rare, and a store that went on writing into a buffer after
// failing (against storage.Object's contract, say a body still draining
// after a cancel) can then not corrupt a later fetch.
func (f *File) fetchRequest(req Request) fetchResult {
	o := f.sched.opts
	dropGaps := dropsGaps(req, o.Tolerance)
	if dropGaps && req.Len <= o.MaxRequest {
		if buf, segs, err := f.fetchSpans(req); !errors.Is(err, errors.ErrUnsupported) {
			res := fetchResult{buf: buf, segs: segs, gapsDropped: true, err: err}
			if err == nil {
				res.got = req.Len
			}
			return res
		}
	}
	// The parts cover the whole buffer, so a fetch that succeeds leaves
	// none of a pooled buffer's old bytes.
	buf := getBuf(req.Len)
	g, gctx := errgroup.WithContext(f.ctx)
	var got atomic.Int64
	for _, part := range parts(req, o.MaxRequest) {
		g.Go(func() error {
			err := f.fetchCtx(gctx, buf[part.Off-req.Off:part.End()-req.Off], part.Off)
			if err == nil {
				got.Add(part.Len)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fetchResult{err: err, got: got.Load()}
	}
	if !dropGaps {
		return fetchResult{buf: buf, segs: []segment{{off: req.Off, data: buf}}, got: req.Len}
	}
	kept := getBuf(req.Needed)
	segs := neededSegments(req, kept)
	for _, seg := range segs {
		copy(seg.data, buf[seg.off-req.Off:])
	}
	putBuf(buf) // its needed bytes were copied out
	return fetchResult{buf: kept, segs: segs, gapsDropped: true, got: req.Len}
}

// fetchSpans reads a request whose gaps exceed the tolerance in one
// storage request that keeps only the needed ranges (an object that
// declares storage.Capabilities.SpanReads), so the gaps are dropped as they
// arrive instead of after the fetch. It returns errors.ErrUnsupported,
// without a request, when the object cannot.
// The segments are cut from buf, which the caller owns.
func (f *File) fetchSpans(req Request) (buf []byte, segs []segment, err error) {
	if !f.obj.Capabilities().SpanReads && !f.cachesPages() {
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
	if f.cachesPages() && f.inObject(req.Off, req.Len) {
		return buf, segs, f.readCached(f.ctx, spans)
	}
	err = f.request(f.ctx, req.Off, req.Len, func(ctx context.Context) error { return f.obj.ReadSpans(ctx, spans) })
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

// fetchCtx reads p at off from storage (see request).
func (f *File) fetchCtx(ctx context.Context, p []byte, off int64) error {
	if f.cachesPages() && f.inObject(off, int64(len(p))) {
		return f.readCached(ctx, []storage.Span{{Off: off, Buf: p}})
	}
	return f.request(ctx, off, int64(len(p)), func(ctx context.Context) error { return f.obj.ReadAt(ctx, p, off) })
}

// request runs one storage request of n bytes at off under the
// scheduler's limit on requests in flight, in a fetch span, counts it, and
// teaches the store's latency model.
func (f *File) request(ctx context.Context, off, n int64, read func(context.Context) error) error {
	if err := f.sched.gets.Acquire(ctx, 1); err != nil {
		return err
	}
	defer f.sched.gets.Release(1)
	ctx, span := f.startFetch(ctx, off, n)
	start := time.Now()
	err := read(ctx)
	d := time.Since(start)
	endFetch(span, err)
	f.io.ioNanos.Add(int64(d))
	f.io.reads.Add(1)
	if err == nil {
		f.sched.model(f.info.Name).observe(n, d)
		return nil
	}
	if !errors.Is(err, context.Canceled) || f.ctx.Err() != nil {
		f.noteErr(err)
	}
	return err
}
