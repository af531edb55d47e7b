package limits

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestConcurrencyCapAndRelease(t *testing.T) {
	c := NewConcurrency("concurrent streams", 2)
	r1, err := c.Acquire("alice")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := c.Acquire("alice")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Acquire("alice")
	var ex *ExceededError
	if !errors.Is(err, ErrExceeded) || !errors.As(err, &ex) {
		t.Fatalf("third acquire: got %v, want ErrExceeded", err)
	}
	for _, want := range []string{`"alice"`, "2 concurrent streams"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not name %s", err, want)
		}
	}
	if _, err := c.Acquire("bob"); err != nil {
		t.Fatalf("another key is limited separately: %v", err)
	}
	r1()
	r1() // idempotent: must not free r2's unit too
	if got := c.InUse("alice"); got != 1 {
		t.Fatalf("after a double release InUse = %d, want 1", got)
	}
	r3, err := c.Acquire("alice")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	r2()
	r3()
	if c.InUse("alice") != 0 || c.Keys() != 1 { // bob still holds one
		t.Fatalf("InUse=%d Keys=%d", c.InUse("alice"), c.Keys())
	}
}

func TestConcurrencyUnlimited(t *testing.T) {
	c := NewConcurrency("streams", 0)
	for range 100 {
		if _, err := c.Acquire("k"); err != nil {
			t.Fatal(err)
		}
	}
	if c.Keys() != 0 {
		t.Fatalf("unlimited cap keeps state for %d keys", c.Keys())
	}
}

func TestConcurrencyRace(t *testing.T) {
	const limit, workers = 3, 16
	c := NewConcurrency("streams", limit)
	var mu sync.Mutex
	held, peak := 0, 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range 200 {
				release, err := c.Acquire("k")
				if err != nil {
					continue
				}
				mu.Lock()
				held++
				peak = max(peak, held)
				mu.Unlock()
				mu.Lock()
				held--
				mu.Unlock()
				release()
			}
		})
	}
	wg.Wait()
	if peak > limit {
		t.Fatalf("peak %d units held, cap %d", peak, limit)
	}
	if c.Keys() != 0 {
		t.Fatalf("%d keys left after every release", c.Keys())
	}
}

type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time          { return f.t }
func (f *fakeClock) advance(d time.Duration) { f.t = f.t.Add(d) }

func TestRate(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	r := NewRate("GetFlightInfo calls", 2, 3) // 2/s, burst 3: refills in 1.5 s
	r.now = clock.now
	for i := range 3 {
		if err := r.Allow("alice"); err != nil {
			t.Fatalf("burst call %d: %v", i, err)
		}
	}
	err := r.Allow("alice")
	if !errors.Is(err, ErrExceeded) {
		t.Fatalf("fourth call: got %v, want ErrExceeded", err)
	}
	for _, want := range []string{`"alice"`, "2 per second", "GetFlightInfo calls"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not name %s", err, want)
		}
	}
	if err := r.Allow("bob"); err != nil {
		t.Fatalf("another key is limited separately: %v", err)
	}
	clock.advance(500 * time.Millisecond) // one token back
	if err := r.Allow("alice"); err != nil {
		t.Fatalf("after 0.5 s: %v", err)
	}
	if err := r.Allow("alice"); !errors.Is(err, ErrExceeded) {
		t.Fatalf("second call after 0.5 s: got %v, want ErrExceeded", err)
	}
}

func TestRateEvictsIdleKeysWithoutLoosening(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	r := NewRate("calls", 1, 2) // refills in 2 s
	r.now = clock.now
	for i := range 1000 {
		_ = r.Allow(fmt.Sprintf("idle-%d", i))
	}
	_ = r.Allow("busy")
	_ = r.Allow("busy") // bucket empty
	if r.Keys() != 1001 {
		t.Fatalf("Keys = %d, want 1001", r.Keys())
	}
	clock.advance(time.Second) // one token back
	if err := r.Allow("busy"); err != nil {
		t.Fatalf("after 1 s: %v", err)
	}
	clock.advance(time.Second) // idle keys refilled: swept; busy was used 1 s ago: kept
	if err := r.Allow("busy"); err != nil {
		t.Fatalf("after 2 s: %v", err)
	}
	if err := r.Allow("busy"); !errors.Is(err, ErrExceeded) {
		t.Fatalf("a key in use must keep its state across sweeps: got %v, want ErrExceeded", err)
	}
	if got := r.Keys(); got != 1 {
		t.Fatalf("Keys = %d after the sweep, want 1 (busy)", got)
	}
}

func TestRateUnlimited(t *testing.T) {
	r := NewRate("calls", 0, 0)
	for range 100 {
		if err := r.Allow("k"); err != nil {
			t.Fatal(err)
		}
	}
	if r.Keys() != 0 {
		t.Fatalf("unlimited rate keeps state for %d keys", r.Keys())
	}
}

func TestRateRace(t *testing.T) {
	r := NewRate("calls", 1000, 10)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 500 {
				_ = r.Allow(string(rune('a' + (w+i)%5)))
			}
		})
	}
	wg.Wait()
}
