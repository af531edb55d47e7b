package admission

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// reserveAsync starts a Reserve and returns a channel that delivers its
// error.
func reserveAsync(ctx context.Context, g *Grant, n int64) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- g.Reserve(ctx, n) }()
	return ch
}

func TestReserveAndReleaseAccount(t *testing.T) {
	c := plain(100, time.Hour)
	other := admitted(t, c, 10)
	defer other.Close()
	g := admitted(t, c, 20)
	ctx := context.Background()
	for _, tc := range []struct {
		name         string
		reserve, rel int64
		want         int64 // grant bytes after
	}{
		{"grow", 30, 0, 50},
		{"grow to the share", 40, 0, 90},
		{"shrink", 0, 25, 65},
		{"zero and negative are no-ops", -5, -5, 65},
		{"release more than held stops at zero", 0, 1000, 0},
	} {
		if err := g.Reserve(ctx, tc.reserve); err != nil {
			t.Fatalf("%s: Reserve(%d): %v", tc.name, tc.reserve, err)
		}
		g.Release(tc.rel)
		if got := g.Bytes(); got != tc.want {
			t.Fatalf("%s: grant holds %d, want %d", tc.name, got, tc.want)
		}
		if st := c.Stats(); st.InUse != tc.want+10 || st.Streams != 2 {
			t.Fatalf("%s: stats %+v, want %d in use by 2 streams", tc.name, st, tc.want+10)
		}
	}
	g.Close()
	if err := g.Reserve(ctx, 1); err == nil {
		t.Fatal("Reserve after Close succeeded")
	}
	if st := c.Stats(); st.InUse != 10 || st.Streams != 1 || st.Peak != 100 {
		t.Fatalf("after Close: %+v", st)
	}
}

func TestReserveLargerThanShareFails(t *testing.T) {
	c := plain(100, time.Hour)
	g := admitted(t, c, 10)
	defer g.Close()
	err := g.Reserve(context.Background(), 101)
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("Reserve(101) of a 100-byte share: %v, want ErrOverBudget", err)
	}
	for _, want := range []string{"101 bytes", "holding 10", "share is 100 bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
	if g.Bytes() != 10 {
		t.Fatalf("a failed Reserve changed the grant to %d", g.Bytes())
	}
}

// A stream holding memory alone grows past the share: nobody would ever
// free memory for it.
func TestReserveAloneGrowsPastShare(t *testing.T) {
	c := plain(100, time.Hour)
	g := admitted(t, c, 1000) // clamped to 100
	defer g.Close()
	if err := g.Reserve(context.Background(), 60); err != nil {
		t.Fatal(err)
	}
	if g.Bytes() != 160 {
		t.Fatalf("grant %d, want 160", g.Bytes())
	}
}

// A stream blocked on its client gives its estimate back, so a new stream
// gets in at once; it takes the estimate back at once when its client
// reads again, even past the share (counted as an over-commit).
func TestParkLetsOthersIn(t *testing.T) {
	c := plain(100, time.Hour)
	ctx := context.Background()
	stalled, err := c.Admit(ctx, 80)
	if err != nil {
		t.Fatal(err)
	}
	if err := stalled.Reserve(ctx, 10); err != nil { // a real allocation stays charged
		t.Fatal(err)
	}
	stalled.Park()
	stalled.Park()
	if got := c.Stats().InUse; got != 10 {
		t.Fatalf("in use while parked = %d, want the 10 reserved", got)
	}
	next, err := c.Admit(ctx, 80)
	if err != nil {
		t.Fatal(err)
	}
	if err := stalled.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if got, st := stalled.Bytes(), c.Stats(); got != 90 || st.InUse != 170 || st.Overcommits != 1 {
		t.Errorf("after Resume: grant %d, stats %+v; want 90, 170 in use, 1 over-commit", got, st)
	}
	next.Close()
	stalled.Close()
	if got := c.Stats().InUse; got != 0 {
		t.Errorf("in use after Close = %d", got)
	}
}

// Growing never waits, even with the share full (a decoder mid-row-group
// holds buffers others may wait for): it over-commits, and says so.
func TestReserveNeverWaits(t *testing.T) {
	c := plain(100, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	a, _ := c.Admit(ctx, 60)
	b, _ := c.Admit(ctx, 40)
	if err := a.Reserve(ctx, 30); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.InUse != 130 || st.Overcommits != 1 {
		t.Errorf("stats %+v: want 130 in use, 1 over-commit", st)
	}
	if err := a.Reserve(ctx, 101); !errors.Is(err, ErrOverBudget) {
		t.Errorf("a claim larger than the share: %v, want ErrOverBudget", err)
	}
	a.Close()
	b.Close()
	if got := c.Stats().InUse; got != 0 {
		t.Errorf("in use = %d", got)
	}
}
