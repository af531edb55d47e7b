package planmem

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func reserveAsync(ctx context.Context, f *File, n int64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f.Reserve(ctx, n) }()
	return done
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestReserveWaitsAndKeeps(t *testing.T) {
	b := New(100, "--io-plan-memory")
	p, q := b.Begin(), b.Begin()
	f := p.File()
	if err := f.Reserve(context.Background(), 80); err != nil {
		t.Fatal(err)
	}
	g := q.File()
	done := reserveAsync(context.Background(), g, 50)
	select {
	case err := <-done:
		t.Fatalf("a reservation past the share did not wait: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	f.Keep(10) // 10 kept, 70 given back
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.Used != 60 || s.Peak != 80 {
		t.Errorf("stats %+v, want used 60, peak 80", s)
	}
	p.End()
	g.Keep(0)
	q.End()
	if s := b.Stats(); s.Used != 0 || s.Plans != 0 {
		t.Errorf("stats %+v after every plan ended, want nothing used", s)
	}
}

func TestReserveLargerThanShareFails(t *testing.T) {
	b := New(100, "--io-plan-memory")
	p := b.Begin()
	defer p.End()
	err := p.File().Reserve(context.Background(), 101)
	if !errors.Is(err, ErrOverBudget) || !strings.Contains(err.Error(), "--io-plan-memory") {
		t.Fatalf("err = %v, want ErrExceeded naming the flag", err)
	}
}

// Two plans whose kept state fills the share, each waiting for more:
// one fails rather than both waiting forever, and the other goes on.
func TestPlansThatAllWaitDoNotDeadlock(t *testing.T) {
	b := New(100, "--io-plan-memory")
	p, q := b.Begin(), b.Begin()
	fp, fq := p.File(), q.File()
	if err := fp.Reserve(context.Background(), 50); err != nil {
		t.Fatal(err)
	}
	if err := fq.Reserve(context.Background(), 40); err != nil {
		t.Fatal(err)
	}
	fp.Keep(50)
	fq.Keep(40)
	dp := reserveAsync(context.Background(), p.File(), 20)
	dq := reserveAsync(context.Background(), q.File(), 20)
	var failed, ok int
	for range 2 {
		var err error
		select {
		case err = <-dp:
			if err != nil {
				p.End()
			}
		case err = <-dq:
			if err != nil {
				q.End()
			}
		case <-time.After(5 * time.Second):
			t.Fatal("both plans still wait")
		}
		if err != nil {
			failed++
			if !errors.Is(err, ErrOverBudget) {
				t.Errorf("err = %v, want ErrExceeded", err)
			}
		} else {
			ok++
		}
	}
	if failed != 1 || ok != 1 {
		t.Errorf("%d failed and %d went on, want one each", failed, ok)
	}
	p.End()
	q.End()
	if s := b.Stats(); s.Used != 0 {
		t.Errorf("used %d after both ended", s.Used)
	}
}

func TestReserveCancelWhileWaiting(t *testing.T) {
	b := New(100, "--io-plan-memory")
	p, q := b.Begin(), b.Begin()
	defer p.End()
	defer q.End()
	if err := p.File().Reserve(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := reserveAsync(ctx, q.File(), 10)
	waitFor(t, "the waiter", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return q.waiting == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSkippableNeverWaits(t *testing.T) {
	b := New(100, "--io-plan-memory")
	p := b.Begin()
	r := p.Reserver()
	if err := r.Reserve(context.Background(), 60); err != nil {
		t.Fatal(err)
	}
	if err := r.Reserve(context.Background(), 60); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("err = %v, want ErrExceeded at once", err)
	}
	r.Release(60)
	p.End()
	if s := b.Stats(); s.Used != 0 {
		t.Errorf("used %d", s.Used)
	}
}

func TestNilBudgetChargesNothing(t *testing.T) {
	var b *Budget = New(0, "")
	p := b.Begin()
	f := p.File()
	if err := f.Reserve(context.Background(), 1<<40); err != nil {
		t.Fatal(err)
	}
	f.Keep(1 << 40)
	p.End()
	if p.Reserver() != nil {
		t.Error("a nil plan's Reserver is not nil")
	}
}

// What a plan prepaid covers what its files keep; the rest of a file's
// charge is given back.
func TestPrepayCoversKept(t *testing.T) {
	b := New(100, "--io-plan-memory")
	p := b.Begin()
	if err := p.Prepay(context.Background(), 30, "3 files"); err != nil {
		t.Fatal(err)
	}
	f := p.File()
	if err := f.Reserve(context.Background(), 50); err != nil {
		t.Fatal(err)
	}
	f.Keep(20) // within the prepaid 30
	if s := b.Stats(); s.Used != 30 {
		t.Errorf("used %d, want the 30 prepaid", s.Used)
	}
	g := p.File()
	if err := g.Reserve(context.Background(), 50); err != nil {
		t.Fatal(err)
	}
	g.Keep(20) // 10 prepaid left: 10 more kept
	if s := b.Stats(); s.Used != 40 {
		t.Errorf("used %d, want 40", s.Used)
	}
	if err := b.Begin().Prepay(context.Background(), 101, "too many files"); !errors.Is(err, ErrOverBudget) {
		t.Errorf("prepay past the share: %v", err)
	}
	p.End()
}

// When nothing progresses, a small plan beside large ones is not the one
// that fails, even when it is the youngest.
func TestSmallPlanOutlivesLargeOnes(t *testing.T) {
	b := New(160, "--io-plan-memory")
	big, small := b.Begin(), b.Begin()
	fb, fs := big.File(), small.File()
	if err := fb.Reserve(context.Background(), 140); err != nil {
		t.Fatal(err)
	}
	if err := fs.Reserve(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	fb.Keep(140)
	fs.Keep(5)
	ds := reserveAsync(context.Background(), small.File(), 20)
	waitFor(t, "the small plan to wait", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return small.waiting == 1 })
	db := reserveAsync(context.Background(), big.File(), 20)
	if err := <-db; !errors.Is(err, ErrOverBudget) {
		t.Fatalf("the large plan: err = %v, want ErrExceeded", err)
	}
	big.End()
	if err := <-ds; err != nil {
		t.Fatalf("the small plan: %v", err)
	}
	small.End()
}
