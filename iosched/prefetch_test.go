package iosched

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

// countingBucket serves objects from memory and counts the reads that
// reach it.
func countingBucket(t *testing.T, objects map[string][]byte) (storage.Bucket, *atomic.Int64) {
	var reads atomic.Int64
	b := storagetest.WithReadHook(storagetest.NewMem(objects), func(ctx context.Context, name string, off int64, n int) error {
		reads.Add(1)
		return nil
	})
	return b, &reads
}

func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i * 7 % 251)
	}
	return p
}

func openFile(t *testing.T, s *Scheduler, b storage.Bucket, name string) *File {
	t.Helper()
	info, err := b.Stat(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Open(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Announced ranges come from few requests, reads are served from them, and
// the buffers are gone when the reads have consumed them.
func TestPrefetchServesAnnouncedReads(t *testing.T) {
	data := pattern(1 << 20)
	b, reads := countingBucket(t, map[string][]byte{"f": data})
	s := New(b, Options{Hole: 64 << 10, TailSize: 1})
	f := openFile(t, s, b, "f")
	defer f.Close()

	// Alternate 16 KiB ranges: gaps of 16 KiB, under the hole.
	var ranges []Range
	for off := int64(0); off < 512<<10; off += 32 << 10 {
		ranges = append(ranges, Range{Off: off, Len: 16 << 10})
	}
	f.Prefetch(ranges)
	for _, r := range ranges {
		// Read each range in pieces, as a buffered reader does.
		for off := r.Off; off < r.End(); off += 4 << 10 {
			buf := make([]byte, 4<<10)
			if _, err := f.ReadAt(buf, off); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, data[off:off+4<<10]) {
				t.Fatalf("wrong bytes at %d", off)
			}
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d storage reads for 16 announced ranges under the hole, want 1", n)
	}
	st := f.Stats()
	if st.BytesPlanned != 256<<10 || st.BytesWasted != 240<<10 {
		t.Errorf("planned %d, wasted %d", st.BytesPlanned, st.BytesWasted)
	}
	if used := s.budget.inUse.Load(); used != 0 {
		t.Errorf("%d bytes of budget still held after every range was consumed", used)
	}
	// A read outside the plan goes to storage directly.
	buf := make([]byte, 10)
	if _, err := f.ReadAt(buf, 600<<10); err != nil || !bytes.Equal(buf, data[600<<10:600<<10+10]) {
		t.Fatalf("unplanned read: %v", err)
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads after one unplanned read, want 2", n)
	}
}

// Many files read concurrently under a budget much smaller than their
// total: every read returns the right bytes, no scan deadlocks, and the
// budget is never exceeded.
func TestPrefetchUnderTightBudget(t *testing.T) {
	objects := map[string][]byte{}
	for i := 0; i < 8; i++ {
		objects[fmt.Sprintf("f%d", i)] = pattern(2<<20 + i)
	}
	b, _ := countingBucket(t, objects)
	const budgetBytes = 1 << 20
	s := New(b, Options{Hole: 1 << 10, MaxRequest: 256 << 10, Memory: budgetBytes, Window: 512 << 10, TailSize: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(objects))
	for name, data := range objects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, _ := b.Stat(ctx, name)
			f, err := s.Open(ctx, info)
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			var ranges []Range
			for off := int64(0); off+100<<10 <= int64(len(data)); off += 100 << 10 {
				ranges = append(ranges, Range{Off: off, Len: 90 << 10})
			}
			f.Prefetch(ranges)
			for _, r := range ranges {
				buf := make([]byte, r.Len)
				if _, err := f.ReadAt(buf, r.Off); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(buf, data[r.Off:r.End()]) {
					errs <- fmt.Errorf("%s: wrong bytes at %d", name, r.Off)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if peak := s.PeakMemory(); peak > budgetBytes {
		t.Errorf("peak prefetch memory %d over the budget %d", peak, budgetBytes)
	}
	if used := s.budget.inUse.Load(); used != 0 {
		t.Errorf("%d bytes of budget held after all files closed", used)
	}
}

// A single request larger than the whole budget fails at once instead of
// waiting forever.
func TestPrefetchOverBudget(t *testing.T) {
	data := pattern(1 << 20)
	b, _ := countingBucket(t, map[string][]byte{"f": data})
	s := New(b, Options{Memory: 64 << 10, TailSize: 1})
	f := openFile(t, s, b, "f")
	defer f.Close()
	f.Prefetch([]Range{{Off: 0, Len: 512 << 10}})
	_, err := f.ReadAt(make([]byte, 1024), 0)
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("got %v, want ErrOverBudget", err)
	}
}

// Closing a file with unread prefetched data gives its memory back.
func TestCloseFreesPrefetch(t *testing.T) {
	data := pattern(1 << 20)
	b, _ := countingBucket(t, map[string][]byte{"f": data})
	s := New(b, Options{TailSize: 1})
	f := openFile(t, s, b, "f")
	f.Prefetch([]Range{{Off: 0, Len: 256 << 10}, {Off: 512 << 10, Len: 256 << 10}})
	if _, err := f.ReadAt(make([]byte, 10), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if used := s.budget.inUse.Load(); used != 0 {
		t.Errorf("%d bytes held after Close", used)
	}
}

// A cancelled scan stops waiting for its reads at once.
func TestPrefetchCancel(t *testing.T) {
	data := pattern(1 << 20)
	release := make(chan struct{})
	mem := storagetest.NewMem(map[string][]byte{"f": data})
	b := storagetest.WithReadHook(mem, func(ctx context.Context, name string, off int64, n int) error {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	})
	defer close(release)
	s := New(b, Options{TailSize: 1})
	ctx, cancel := context.WithCancel(context.Background())
	info, _ := b.Stat(ctx, "f")
	f, err := s.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Prefetch([]Range{{Off: 0, Len: 256 << 10}})
	done := make(chan error, 1)
	go func() {
		_, err := f.ReadAt(make([]byte, 10), 0)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("read still waiting a second after cancel")
	}
}

// Readahead reaches storage in file order: with thousands of planned
// requests, the k-th read storage sees is never more than Concurrency
// ranges ahead of it, so the first ranges the decoder needs come first.
func TestReadaheadKeepsFileOrder(t *testing.T) {
	const n, concurrency = 2048, 8
	data := pattern(n * 100)
	var mu sync.Mutex
	var order []int64
	b := storagetest.WithReadHook(storagetest.NewMem(map[string][]byte{"f": data}), func(ctx context.Context, name string, off int64, _ int) error {
		mu.Lock()
		order = append(order, off/100)
		mu.Unlock()
		time.Sleep(100 * time.Microsecond)
		return nil
	})
	s := New(b, Options{NoCoalesce: true, Concurrency: concurrency, TailSize: 1})
	f := openFile(t, s, b, "f")
	defer f.Close()
	var ranges []Range
	for i := int64(0); i < n; i++ {
		ranges = append(ranges, Range{Off: i * 100, Len: 50})
	}
	f.Prefetch(ranges)
	buf := make([]byte, 50)
	for i := int64(0); i < n; i++ {
		if _, err := f.ReadAt(buf, i*100); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, data[i*100:i*100+50]) {
			t.Fatalf("wrong bytes at range %d", i)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != n {
		t.Fatalf("%d reads for %d ranges", len(order), n)
	}
	for k, idx := range order {
		if idx > int64(k+concurrency) {
			t.Fatalf("read %d of storage was range %d, more than %d ahead of file order (first reads: %v)", k, idx, concurrency, order[:min(len(order), 64)])
		}
	}
}

// Two scans that each hold a partly read buffer and need more memory than
// is left must not wait on each other forever: after a short wait they read
// directly. This deadlocked under 16 concurrent clients before.
func TestNoDeadlockWhenBudgetIsHeldByPartlyReadBuffers(t *testing.T) {
	objects := map[string][]byte{"a": pattern(2 << 20), "b": pattern(2 << 20)}
	b, _ := countingBucket(t, objects)
	s := New(b, Options{Hole: 1, Memory: 1 << 20, Window: 8 << 20, TailSize: 1})
	ranges := []Range{{Off: 0, Len: 512 << 10}, {Off: 1 << 20, Len: 512 << 10}}
	var half sync.WaitGroup
	half.Add(2)
	done := make(chan error, 2)
	for _, name := range []string{"a", "b"} {
		go func() {
			f := openFile(t, s, b, name)
			defer f.Close()
			f.Prefetch(ranges)
			buf := make([]byte, 256<<10)
			if _, err := f.ReadAt(buf, 0); err != nil { // half of the first range
				done <- err
				return
			}
			half.Done()
			half.Wait() // both now hold a partly read buffer
			buf = make([]byte, 512<<10)
			if _, err := f.ReadAt(buf, 1<<20); err != nil {
				done <- err
				return
			}
			if !bytes.Equal(buf, objects[name][1<<20:1<<20+512<<10]) {
				done <- fmt.Errorf("%s: wrong bytes", name)
				return
			}
			done <- nil
		}()
	}
	for i := 0; i < 2; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("scans still waiting for memory after 10 s: deadlock")
		}
	}
	if peak := s.PeakMemory(); peak > 1<<20 {
		t.Errorf("peak %d over the 1 MiB budget", peak)
	}
}

// Prefetch reads ahead before anything is read: the planned requests
// reach storage on their own, up to the window.
func TestPrefetchReadsAhead(t *testing.T) {
	data := pattern(1 << 20)
	b, reads := countingBucket(t, map[string][]byte{"f": data})
	s := New(b, Options{Hole: 1, Window: 300 << 10, TailSize: 1})
	f := openFile(t, s, b, "f")
	defer f.Close()
	var rs []Range
	for i := range int64(8) {
		rs = append(rs, Range{Off: i * 128 << 10, Len: 100 << 10})
	}
	f.Prefetch(rs)
	// The window (300 KiB) admits three requests of 100 KiB.
	deadline := time.Now().Add(5 * time.Second)
	for reads.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a fourth would be on its way by now
	if n := reads.Load(); n != 3 {
		t.Fatalf("%d requests read ahead with nothing read, want 3 (the window)", n)
	}
	if got := inUse(s); got != 300<<10 {
		t.Errorf("%d bytes of budget held by readahead, want %d", got, 300<<10)
	}
	// Reading the first request lets the next one start.
	if _, err := f.ReadAt(make([]byte, 100<<10), 0); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for reads.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := reads.Load(); n != 4 {
		t.Errorf("%d requests after the first was consumed, want 4", n)
	}
}

// Pause frees what was read ahead and not read, and starts nothing more
// until Unpause; reads still get their bytes meanwhile. A read that finds
// the budget held by others says so through OnShort.
func TestPauseFreesReadaheadUntilUnpause(t *testing.T) {
	data := pattern(1 << 20)
	b, reads := countingBucket(t, map[string][]byte{"f": data, "g": data})
	s := New(b, Options{Hole: 1, Window: 300 << 10, TailSize: 1, Memory: 400 << 10})
	var short atomic.Int64
	s.OnShort(func(n int64) { short.Add(n) })
	f := openFile(t, s, b, "f")
	defer f.Close()
	var rs []Range
	for i := range int64(8) {
		rs = append(rs, Range{Off: i * 128 << 10, Len: 100 << 10})
	}
	f.Prefetch(rs)
	deadline := time.Now().Add(5 * time.Second)
	for (reads.Load() < 3 || f.HeldBytes() < 300<<10) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := f.HeldBytes(); got != 300<<10 {
		t.Fatalf("file holds %d bytes read ahead, want the window", got)
	}
	// Another file short of memory says so.
	g := openFile(t, s, b, "g")
	defer g.Close()
	g.Prefetch([]Range{{Off: 0, Len: 200 << 10}})
	if _, err := g.ReadAt(make([]byte, 10), 0); err != nil {
		t.Fatal(err)
	}
	if short.Load() == 0 {
		t.Error("a read short of prefetch memory did not call OnShort")
	}
	f.Pause()
	if got := f.HeldBytes(); got != 0 {
		t.Errorf("paused file holds %d bytes", got)
	}
	n := reads.Load()
	buf := make([]byte, 100<<10)
	if _, err := f.ReadAt(buf, 128<<10); err != nil || !bytes.Equal(buf, data[128<<10:228<<10]) {
		t.Fatalf("read while paused: %v", err)
	}
	time.Sleep(20 * time.Millisecond) // readahead would be on its way by now
	if got := reads.Load() - n; got != 1 {
		t.Errorf("%d requests for one read while paused, want 1 (no readahead)", got)
	}
	f.Unpause()
	deadline = time.Now().Add(5 * time.Second)
	for reads.Load() < n+2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if reads.Load() < n+2 {
		t.Error("no readahead after Unpause")
	}
}
