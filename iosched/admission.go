package iosched

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Admission bounds the working memory of the streams that decode at once.
//
// The memory budget for fetched buffers is not enough to bound a server:
// a Parquet reader keeps, per projected column, a stream buffer, the
// compressed and decompressed page and the values of the batch it builds,
// so a 128-column stream holds tens of MiB whatever the IO scheduler does,
// and sixteen clients with two endpoints each held gigabytes. So every
// stream asks for an estimate of that memory before it opens its decoders,
// and waits, holding nothing, while the streams already admitted use the
// decode share. Waiters are served first come, first served.
//
// Waiting for memory could deadlock with clients: one that opens several
// streams but reads them in order leaves the later ones blocked in Send,
// holding their admission, while the stream it reads waits for admission.
// Holders therefore say when they are blocked on their consumer (Ticket.
// Blocked); when every holder has been so for StuckAfter, the first waiter
// is admitted over the limit and counted. Memory then exceeds the share by
// that stream for as long as clients leave their streams unread, which is
// the price of never hanging a well-behaved client that reads in order.
type Admission struct {
	capacity   int64
	stuckAfter time.Duration

	mu      sync.Mutex
	inUse   int64
	holders map[*Ticket]struct{}
	waiters list.List // of *admitWaiter, first come first served

	peak        atomic.Int64
	waiting     atomic.Int64
	overcommits atomic.Int64
}

// DefaultStuckAfter is how long every admitted stream must have been
// blocked on its consumer before a waiter is admitted over the limit.
const DefaultStuckAfter = time.Second

type admitWaiter struct {
	n     int64
	ready chan struct{} // closed when admitted by a release
	t     *Ticket       // set before ready is closed
}

// NewAdmission returns an admission of capacity bytes; capacity <= 0
// admits every stream at once (no limit).
func NewAdmission(capacity int64, stuckAfter time.Duration) *Admission {
	if stuckAfter <= 0 {
		stuckAfter = DefaultStuckAfter
	}
	return &Admission{capacity: capacity, stuckAfter: stuckAfter, holders: map[*Ticket]struct{}{}}
}

// Ticket is one admitted stream's hold on the decode memory.
type Ticket struct {
	a            *Admission
	n            int64
	blockedSince atomic.Int64 // unix nanoseconds; 0 while working
	released     atomic.Bool
}

// AdmissionStats are figures for monitoring.
type AdmissionStats struct {
	Capacity    int64 // bytes; 0 = unlimited
	InUse       int64 // bytes held by admitted streams
	Peak        int64
	Streams     int   // admitted streams
	Waiting     int64 // streams waiting for admission
	Overcommits int64 // streams admitted over the limit because every holder was blocked on its client
}

// Stats returns the current figures.
func (a *Admission) Stats() AdmissionStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return AdmissionStats{Capacity: max(a.capacity, 0), InUse: a.inUse, Peak: a.peak.Load(), Streams: len(a.holders),
		Waiting: a.waiting.Load(), Overcommits: a.overcommits.Load()}
}

// Admit waits until n bytes of decode memory are free, and returns the
// ticket to release when the stream's decoders are closed. A stream asking
// for more than the whole capacity is admitted alone.
func (a *Admission) Admit(ctx context.Context, n int64) (*Ticket, error) {
	if a.capacity > 0 {
		n = min(max(n, 0), a.capacity)
	}
	a.mu.Lock()
	if a.capacity <= 0 || (a.waiters.Len() == 0 && a.inUse+n <= a.capacity) {
		t := a.grantLocked(n)
		a.mu.Unlock()
		return t, nil
	}
	w := &admitWaiter{n: n, ready: make(chan struct{})}
	elem := a.waiters.PushBack(w)
	a.waiting.Add(1)
	a.mu.Unlock()
	defer a.waiting.Add(-1)

	check := time.NewTicker(a.stuckAfter / 4)
	defer check.Stop()
	for {
		select {
		case <-w.ready:
			return w.t, nil
		case <-ctx.Done():
			a.mu.Lock()
			select {
			case <-w.ready:
				// Admitted while giving up: hand the memory back.
				a.mu.Unlock()
				w.t.Release()
			default:
				a.waiters.Remove(elem)
				// Our leaving may let those behind us in.
				a.wakeLocked()
				a.mu.Unlock()
			}
			return nil, ctx.Err()
		case <-check.C:
			a.mu.Lock()
			select {
			case <-w.ready:
				a.mu.Unlock()
				return w.t, nil
			default:
			}
			if a.waiters.Front() == elem && a.allStuckLocked(time.Now()) {
				a.waiters.Remove(elem)
				a.overcommits.Add(1)
				t := a.grantLocked(n)
				a.mu.Unlock()
				return t, nil
			}
			a.mu.Unlock()
		}
	}
}

func (a *Admission) grantLocked(n int64) *Ticket {
	t := &Ticket{a: a, n: n}
	a.holders[t] = struct{}{}
	a.inUse += n
	if a.inUse > a.peak.Load() {
		a.peak.Store(a.inUse)
	}
	return t
}

// wakeLocked admits waiters from the front while they fit.
func (a *Admission) wakeLocked() {
	for e := a.waiters.Front(); e != nil; e = a.waiters.Front() {
		w := e.Value.(*admitWaiter)
		if len(a.holders) > 0 && a.inUse+w.n > a.capacity {
			return
		}
		a.waiters.Remove(e)
		w.t = a.grantLocked(w.n)
		close(w.ready)
	}
}

// allStuckLocked reports whether there are holders and every one has been
// blocked on its consumer for stuckAfter.
func (a *Admission) allStuckLocked(now time.Time) bool {
	if len(a.holders) == 0 {
		return false
	}
	for t := range a.holders {
		since := t.blockedSince.Load()
		if since == 0 || now.Sub(time.Unix(0, since)) < a.stuckAfter {
			return false
		}
	}
	return true
}

// Blocked marks the holder as waiting on its consumer (true) or working
// again (false). Servers call it around sends that block on flow control.
func (t *Ticket) Blocked(b bool) {
	if t == nil {
		return
	}
	if b {
		t.blockedSince.Store(time.Now().UnixNano())
	} else {
		t.blockedSince.Store(0)
	}
}

// Release gives the ticket's memory back. It is idempotent.
func (t *Ticket) Release() {
	if t == nil || !t.released.CompareAndSwap(false, true) {
		return
	}
	a := t.a
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.holders, t)
	a.inUse -= t.n
	a.wakeLocked()
}
