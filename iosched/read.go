package iosched

import (
	"context"
	"errors"
	"time"
)

// budgetWait is how long a read waits for prefetch memory before reading
// its range directly instead.
const budgetWait = 100 * time.Millisecond

// readStep is what a read of planned bytes does next (readPlanned).
type readStep uint8

const (
	readLook     readStep = iota // look at the plan (again)
	readServed                   // the bytes were handed over
	readDirect                   // the plan does not hold them: read from storage
	readWait                     // wait for the fetch in progress
	readFetch                    // fetch the request now, its budget acquired
	readNoBudget                 // wait a little for budget
)

// readPlanned serves [off, off+n) from the planned request that holds it,
// waiting for a fetch in progress or fetching the request now. take gets
// the bytes, under f.mu, just before they count as consumed; the slice is
// valid only during take unless take lends it (planner.lend).
//
// ok is false with a nil error when the caller reads the range directly:
// no planned request holds it, its request was consumed already, it asks
// for gap bytes dropped after the fetch, or memory stayed short. err is
// the error of a failed fetch or of the file's context.
func (f *File) readPlanned(off, n int64, take func(p *pending, b []byte)) (ok bool, err error) {
	var p *pending
	var wait chan struct{}
	for step := readLook; ; {
		switch step {
		case readLook:
			step, p, wait = f.look(off, n, take)
		case readServed:
			return true, nil
		case readDirect:
			return false, nil
		case readWait:
			step, err = readLook, f.awaitFetch(p, wait)
		case readFetch:
			f.fill(p, true)
			step, err = readLook, f.takeFetchErr(p)
		case readNoBudget:
			step, err = f.awaitBudget(p)
		}
		if err != nil {
			return false, err
		}
	}
}

// look finds [off, off+n) in the plan and serves it when it is ready;
// otherwise it says what the read must do next, and for which request.
func (f *File) look(off, n int64, take func(p *pending, b []byte)) (readStep, *pending, chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, found := f.plan.lookup(off, n)
	switch found {
	case foundReady:
		b := segmentAt(p.segs, off, n)
		if b == nil {
			// lookup rules this out (foundGap); should the two ever
			// disagree, a direct read is still right.
			return readDirect, nil, nil
		}
		take(p, b)
		f.plan.handOver(p, off, n)
		f.freeLocked(f.plan.consume(p, n))
		f.readaheadLocked()
		return readServed, p, nil
	case foundFetching:
		return readWait, p, p.wait
	case foundIdle:
		if f.sched.budget.tryAcquire(p.req.Len) {
			f.startDemandLocked(p)
			return readFetch, p, nil
		}
		// Short of memory: give back this file's own readahead first, so
		// that a scan waiting for memory does not hold memory others wait
		// for.
		f.freeLocked(f.plan.shed(p))
		return readNoBudget, p, nil
	}
	return readDirect, nil, nil
}

// awaitFetch waits for the fetch of p that wait belongs to, and returns
// its error if it was a demand fetch that failed.
func (f *File) awaitFetch(p *pending, wait chan struct{}) error {
	select {
	case <-wait:
	case <-f.ctx.Done():
		return f.ctx.Err()
	}
	return f.takeFetchErr(p)
}

// takeFetchErr returns, once, the error of p's last demand fetch if it
// failed and p was not fetched again since.
func (f *File) takeFetchErr(p *pending) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.state != idle || p.err == nil {
		return nil
	}
	err := p.err
	p.err = nil
	return err
}

// awaitBudget waits a little for the memory to fetch p, then gives up on
// buffering: the caller reads just its own range straight from storage
// into its own buffer. Waiting without bound could deadlock, since every
// scan may hold partly read buffers while it waits for more; reading
// directly needs no budget and always progresses, at the cost of more,
// smaller requests while memory is short.
func (f *File) awaitBudget(p *pending) (readStep, error) {
	var err error
	if !f.sched.budget.tryAcquire(p.req.Len) {
		// Others hold the memory: say so at once, so that the server can
		// end streams that pin it while their clients read nothing, and
		// their bytes may come back within the wait.
		if short := f.sched.onShort.Load(); short != nil {
			(*short)(p.req.Len)
		}
		wctx, cancel := context.WithTimeout(f.ctx, budgetWait)
		err = f.sched.budget.acquire(wctx, p.req.Len)
		cancel()
	}
	switch {
	case errors.Is(err, ErrOverBudget), f.ctx.Err() != nil:
		if err == nil {
			// Acquired just as the scan was cancelled.
			f.sched.budget.release(p.req.Len)
			err = f.ctx.Err()
		}
		return readDirect, err
	case err != nil:
		return readDirect, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.state != idle {
		// Another read started it meanwhile.
		f.sched.budget.release(p.req.Len)
		return readLook, nil
	}
	f.startDemandLocked(p)
	return readFetch, nil
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
// return of a lent one frees it.
func (f *File) closePrefetch() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.freeLocked(f.plan.close())
}
