package admission

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func admitted(t *testing.T, a *Controller, n int64) *Grant {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tk, err := a.Admit(ctx, n)
	if err != nil {
		t.Fatalf("Admit(%d): %v", n, err)
	}
	return tk
}

// admitAsync starts an Admit and returns a channel that delivers its ticket.
func admitAsync(ctx context.Context, a *Controller, n int64) <-chan *Grant {
	ch := make(chan *Grant, 1)
	go func() {
		tk, err := a.Admit(ctx, n)
		if err != nil {
			close(ch)
			return
		}
		ch <- tk
	}()
	return ch
}

func waitWaiting(t *testing.T, a *Controller, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for a.Stats().Waiting != n {
		if time.Now().After(deadline) {
			t.Fatalf("waiting = %d, want %d", a.Stats().Waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAdmissionBoundsMemoryInArrivalOrder(t *testing.T) {
	a := plain(100, time.Hour)
	first := admitted(t, a, 60)
	ctx := context.Background()
	second := admitAsync(ctx, a, 60)
	waitWaiting(t, a, 1)
	// A small stream arriving later must not overtake the waiting one.
	third := admitAsync(ctx, a, 10)
	waitWaiting(t, a, 2)
	select {
	case <-second:
		t.Fatal("second admitted while the first holds 60 of 100")
	case <-third:
		t.Fatal("third overtook the second")
	case <-time.After(50 * time.Millisecond):
	}
	first.Close()
	first.Close() // idempotent
	tk2, tk3 := <-second, <-third
	if tk2 == nil || tk3 == nil {
		t.Fatal("waiters not admitted after the release")
	}
	st := a.Stats()
	if st.InUse != 70 || st.Streams != 2 || st.Peak > 100 || st.Overcommits != 0 {
		t.Fatalf("stats %+v, want 70 bytes in 2 streams, peak <= 100", st)
	}
	tk2.Close()
	tk3.Close()
	if st := a.Stats(); st.InUse != 0 || st.Streams != 0 {
		t.Fatalf("after releases: %+v", st)
	}
}

func TestAdmissionLargerThanCapacityRunsAlone(t *testing.T) {
	a := plain(100, time.Hour)
	small := admitted(t, a, 10)
	big := admitAsync(context.Background(), a, 1000)
	waitWaiting(t, a, 1)
	small.Close()
	tk := <-big
	if tk == nil {
		t.Fatal("a stream larger than the capacity was never admitted")
	}
	if st := a.Stats(); st.InUse != 100 {
		t.Fatalf("in use %d, want the capacity (the request is clamped)", st.InUse)
	}
	tk.Close()
}

func TestAdmissionCancelWhileWaiting(t *testing.T) {
	a := plain(100, time.Hour)
	holder := admitted(t, a, 100)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := a.Admit(ctx, 50)
		errc <- err
	}()
	waitWaiting(t, a, 1)
	// One behind the canceled waiter.
	behind := admitAsync(context.Background(), a, 10)
	waitWaiting(t, a, 2)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Admit after cancel: %v", err)
	}
	holder.Close()
	if tk := <-behind; tk == nil {
		t.Fatal("the waiter behind a canceled one was not admitted")
	} else {
		tk.Close()
	}
	if st := a.Stats(); st.InUse != 0 || st.Waiting != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A client that opens two streams and reads the second first: the second
// holds the memory, blocked in Send, while the first waits for it. The
// waiter must get in once every holder has been blocked for stuckAfter.
func TestAdmissionAdmitsOverLimitWhenEveryHolderIsBlocked(t *testing.T) {
	const stuck = 40 * time.Millisecond
	// No cut: the holder is the waiter's only way in, as for a client
	// reading its own streams in order.
	a := NewWithOptions(100, Options{StuckAfter: stuck, CutAfter: time.Hour, SmallShare: -1})
	holder := admitted(t, a, 100)
	waiter := admitAsync(context.Background(), a, 50)
	waitWaiting(t, a, 1)
	// While the holder works, the waiter waits however long it takes.
	select {
	case <-waiter:
		t.Fatal("admitted over the limit while the holder was working")
	case <-time.After(4 * stuck):
	}
	holder.Blocked(true)
	start := time.Now()
	tk := <-waiter
	if tk == nil {
		t.Fatal("not admitted")
	}
	if d := time.Since(start); d < stuck {
		t.Fatalf("admitted %v after the holder blocked, before stuckAfter %v", d, stuck)
	}
	st := a.Stats()
	if st.Overcommits != 1 || st.InUse != 150 {
		t.Fatalf("stats %+v, want 1 overcommit and 150 bytes", st)
	}
	holder.Close()
	tk.Close()
}

func TestAdmissionNilControllerAdmitsEverything(t *testing.T) {
	var c *Controller
	for range 10 {
		g := admitted(t, c, 1<<40)
		if err := g.Reserve(context.Background(), 1<<50); err != nil {
			t.Fatalf("nil grant Reserve: %v", err)
		}
		g.Release(1 << 50)
		g.Blocked(true)
		g.Close()
	}
	if st := c.Stats(); st != (Stats{}) {
		t.Fatalf("nil controller stats %+v", st)
	}
}

// Many streams at once, under -race: memory in use never exceeds the
// capacity and every stream gets through.
func TestAdmissionConcurrentStreams(t *testing.T) {
	a := plain(100, time.Hour)
	var inUse, peak atomic.Int64
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(10 + i%4*10)
			tk := admitted(t, a, n)
			v := inUse.Add(n)
			for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
			}
			time.Sleep(time.Millisecond)
			inUse.Add(-n)
			tk.Close()
		}()
	}
	wg.Wait()
	if peak.Load() > 100 || a.Stats().Peak > 100 {
		t.Fatalf("peak %d (admission says %d), capacity 100", peak.Load(), a.Stats().Peak)
	}
}

// plain is a controller without a small share, so that tables count in
// whole capacities.
func plain(capacity int64, stuckAfter time.Duration) *Controller {
	return NewWithOptions(capacity, Options{StuckAfter: stuckAfter, SmallShare: -1})
}

// TryAdmitFor grants only what AdmitFor would grant at once with nobody
// waiting, and otherwise changes nothing: it never queues, never
// overtakes a waiter (small ones included), never admits over the limit
// and never cuts a stalled holder.
func TestTryAdmitNeverWaitsNorOvertakes(t *testing.T) {
	stuck := 10 * time.Millisecond
	for _, tc := range []struct {
		name    string
		c       func() *Controller
		holders []int64 // admitted first, in order; blocked on their clients when blocked
		blocked bool
		waiter  int64 // > 0: one waits for this many bytes
		n       int64
		ok      bool
		inUse   int64 // after the try
		small   int64 // bytes in the small share after the try
	}{
		{name: "fits", c: func() *Controller { return plain(100, time.Hour) }, holders: []int64{60}, n: 40, ok: true, inUse: 100},
		{name: "does not fit", c: func() *Controller { return plain(100, time.Hour) }, holders: []int64{60}, n: 50, inUse: 60},
		{name: "fits but one waits", c: func() *Controller { return plain(100, time.Hour) }, holders: []int64{60}, waiter: 50, n: 10, inUse: 60},
		{name: "larger than the capacity, alone", c: func() *Controller { return plain(100, time.Hour) }, n: 1000, ok: true, inUse: 100},
		{name: "larger than the capacity, not alone", c: func() *Controller { return plain(100, time.Hour) }, holders: []int64{10}, n: 1000, inUse: 10},
		// AdmitFor would let every holder's being stuck admit over the
		// limit, and would cut the stalled one.
		{name: "every holder stuck", c: func() *Controller {
			return NewWithOptions(100, Options{StuckAfter: stuck, CutAfter: stuck, SmallShare: -1})
		}, holders: []int64{100}, blocked: true, n: 10, inUse: 100},
		// New(800): a small share of 100, small streams up to 25.
		{name: "small, in the small share", c: func() *Controller { return New(800, time.Hour) }, holders: []int64{700}, n: 25, ok: true, inUse: 725, small: 25},
		{name: "small, the small share full", c: func() *Controller { return New(800, time.Hour) }, holders: []int64{700, 25, 25, 25, 25}, n: 25, inUse: 800, small: 100},
		// AdmitFor lets a small stream past a large waiter; the try does not.
		{name: "small, a large one waits", c: func() *Controller { return New(800, time.Hour) }, holders: []int64{700}, waiter: 300, n: 25, inUse: 700},
		{name: "nil controller", c: func() *Controller { return nil }, n: 1 << 40, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c()
			var gs []*Grant
			defer func() {
				for _, g := range gs {
					g.Close()
				}
			}()
			for _, n := range tc.holders {
				g := admitted(t, c, n)
				g.Blocked(tc.blocked)
				gs = append(gs, g)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.waiter > 0 {
				admitAsync(ctx, c, tc.waiter)
				waitWaiting(t, c, 1)
			}
			if tc.blocked {
				time.Sleep(3 * stuck) // every holder is stuck and cuttable now
			}
			g, ok := c.TryAdmitFor(tc.n, Who{Identity: "try"})
			if ok != tc.ok || (g != nil) != (ok && c != nil) {
				t.Fatalf("TryAdmitFor(%d) = %v, %v; want ok %v", tc.n, g, ok, tc.ok)
			}
			st := c.Stats()
			if st.InUse != tc.inUse || st.Overcommits != 0 || st.Cuts != 0 {
				t.Fatalf("stats %+v, want %d bytes in use, no overcommit, no cut", st, tc.inUse)
			}
			if c != nil {
				c.mu.Lock()
				small := c.smallInUse
				c.mu.Unlock()
				if small != tc.small {
					t.Fatalf("%d bytes in the small share, want %d", small, tc.small)
				}
			}
			if tc.waiter > 0 && st.Waiting != 1 {
				t.Fatalf("the waiter left the queue: %+v", st)
			}
			g.Close()
			if want := tc.inUse; c != nil {
				if ok {
					want -= min(tc.n, c.capacity)
				}
				if st := c.Stats(); st.InUse != want {
					t.Fatalf("after Close: %+v, want %d bytes in use", st, want)
				}
			}
		})
	}
}
