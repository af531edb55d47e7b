package admission

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

var (
	alice = Who{Identity: "alice", Peer: "10.0.0.1"}
	bob   = Who{Identity: "bob", Peer: "10.0.0.2"}
	anon1 = Who{Peer: "10.0.0.1"}
	anon2 = Who{Peer: "10.0.0.2"}
)

func TestNextServesOwnersWithinTheirFairShareFirst(t *testing.T) {
	for _, tc := range []struct {
		name    string
		holders []holding
		waiters []claim
		want    int
	}{
		{"none waits", nil, nil, -1},
		{"arrival order when all are within their share", nil,
			[]claim{{n: 10, who: alice}, {n: 10, who: bob}}, 0},
		{"one owner alone: its share is everything",
			[]holding{{n: 90, who: alice}}, []claim{{n: 50, who: alice}}, 0},
		{"one owner: arrival order, even when the first does not fit",
			[]holding{{n: 60, who: alice}}, []claim{{n: 60, who: alice}, {n: 10, who: alice}}, 0},
		{"an owner over its share waits behind one within",
			[]holding{{n: 60, who: alice}}, []claim{{n: 20, who: alice}, {n: 20, who: bob}}, 1},
		{"by address too, whatever the identity",
			[]holding{{n: 60, who: anon1}}, []claim{{n: 20, who: anon1}, {n: 20, who: anon2}}, 1},
		{"all over: the least over first",
			[]holding{{n: 60, who: alice}, {n: 45, who: bob}}, []claim{{n: 20, who: alice}, {n: 20, who: bob}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := next(tc.waiters, usageOf(tc.holders, tc.waiters), 100); got != tc.want {
				t.Fatalf("next = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestVictimsEndStalledHoldersLargestFirst(t *testing.T) {
	const cutAfter = time.Second
	for _, tc := range []struct {
		name    string
		holders []holding
		need    int64
		want    []int
	}{
		{"nothing needed", []holding{{n: 10, blocked: time.Hour}}, 0, nil},
		{"working streams are never cut", []holding{{n: 50}, {n: 50, blocked: cutAfter / 2}}, 10, nil},
		{"the largest stalled one first",
			[]holding{{n: 10, blocked: time.Hour}, {n: 30, blocked: 2 * time.Second}, {n: 20, blocked: time.Hour}}, 25, []int{1}},
		{"as many as it takes",
			[]holding{{n: 10, blocked: time.Hour}, {n: 30, blocked: 2 * time.Second}, {n: 20, blocked: time.Hour}}, 45, []int{1, 2}},
		{"all of them when they are not enough",
			[]holding{{n: 10, blocked: time.Hour}, {n: 30, blocked: 2 * time.Second}}, 100, []int{1, 0}},
		{"ties: the longest blocked first",
			[]holding{{n: 20, blocked: 2 * time.Second}, {n: 20, blocked: time.Hour}}, 5, []int{1}},
		{"streams already being cut are not counted again",
			[]holding{{n: 30, blocked: time.Hour, cut: true}, {n: 20, blocked: time.Hour}}, 5, []int{1}},
		{"an owner over its fair share goes first, even holding less",
			[]holding{{n: 40, who: alice, blocked: time.Hour}, {n: 30, who: alice, blocked: time.Hour}, {n: 50, who: bob, blocked: time.Hour}}, 5, []int{0}},
		{"memory held outside the share counts in the order",
			[]holding{{n: 10, blocked: time.Hour}, {n: 5, other: 40, blocked: time.Hour}}, 6, []int{1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := victims(tc.holders, tc.need, cutAfter, usageOf(tc.holders, nil), 100, decodeBytes)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("victims = %v, want %v", got, tc.want)
			}
		})
	}
}

// A small stream never queues behind large ones: the small share is
// kept for it, whatever the rest holds and whoever waits.
func TestSmallStreamsDoNotQueueBehindLargeOnes(t *testing.T) {
	c := New(800, time.Hour) // small share 100, small streams up to 25
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	big := admitted(t, c, 700)
	defer big.Close()
	waiting := admitAsync(ctx, c, 300)
	waitWaiting(t, c, 1)
	var small []*Grant
	for range 4 {
		small = append(small, admitted(t, c, 25))
	}
	// The share for small streams is full now: the next small one waits
	// too, and gets in as soon as one of them ends.
	fifth := admitAsync(ctx, c, 25)
	waitWaiting(t, c, 2)
	small[0].Close()
	if g := <-fifth; g == nil {
		t.Fatal("small stream not admitted after another ended")
	} else {
		g.Close()
	}
	for _, g := range small[1:] {
		g.Close()
	}
	big.Close()
	if g := <-waiting; g == nil {
		t.Fatal("large stream not admitted")
	} else {
		g.Close()
	}
	if st := c.Stats(); st.InUse != 0 || st.Waiting != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A waiter that does not fit gets a stalled holder cut: the stalled
// stream learns it through Cut and CutErr, and its memory comes back
// when it closes.
func TestStalledHolderIsCutForAWaiter(t *testing.T) {
	c := NewWithOptions(100, Options{StuckAfter: 20 * time.Millisecond, CutAfter: 40 * time.Millisecond, SmallShare: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	working := admitted(t, c, 30)
	defer working.Close()
	stalled := admitted(t, c, 60)
	stalled.Blocked(true)
	waiter := admitAsync(ctx, c, 50)
	select {
	case <-stalled.Cut():
	case <-ctx.Done():
		t.Fatal("the stalled holder was never cut")
	}
	if err := stalled.CutErr(); !errors.Is(err, ErrCut) {
		t.Fatalf("CutErr = %v", err)
	}
	if working.CutErr() != nil {
		t.Fatal("a working stream was cut")
	}
	stalled.Close()
	g := <-waiter
	if g == nil {
		t.Fatal("waiter not admitted after the cut")
	}
	g.Close()
	if st := c.Stats(); st.Cuts != 1 || st.InUse != 30 {
		t.Fatalf("stats %+v, want 1 cut and the working stream's 30 bytes", st)
	}
}

// Relieve cuts stalled holders by the memory they hold outside the share.
func TestRelieveCutsByMemoryHeldOutside(t *testing.T) {
	c := NewWithOptions(100, Options{StuckAfter: 300 * time.Millisecond})
	a, b := admitted(t, c, 10), admitted(t, c, 10)
	defer a.Close()
	defer b.Close()
	a.HoldsAlso(func() int64 { return 1000 })
	b.HoldsAlso(func() int64 { return 10 })
	a.Blocked(true)
	b.Blocked(true)
	c.Relieve(500) // too early: not blocked for StuckAfter yet
	if a.CutErr() != nil || b.CutErr() != nil {
		t.Fatal("cut before StuckAfter")
	}
	time.Sleep(350 * time.Millisecond)
	c.Relieve(500)
	if a.CutErr() == nil || b.CutErr() != nil {
		t.Fatalf("want only the larger holder cut: %v, %v", a.CutErr(), b.CutErr())
	}
}
