package iosched

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/scand/scand/storage/storagetest"
)

// TestCoverageAgainstBitmap: coverage.add returns exactly the bytes not
// marked before, and keeps its ranges sorted, disjoint and apart, as a
// bitmap of the same marks says.
func TestCoverageAgainstBitmap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 500 {
		const size = 200
		var c coverage
		seen := make([]bool, size)
		for range 1 + rng.IntN(20) {
			off, n := rng.Int64N(size), rng.Int64N(30)
			n = min(n, size-off)
			var want int64
			for i := off; i < off+n; i++ {
				if !seen[i] {
					want++
					seen[i] = true
				}
			}
			var got int64
			for _, r := range c.add(off, n) {
				for i := r.Off; i < r.End(); i++ {
					if !seen[i] {
						t.Fatalf("round %d: add(%d, %d) returned %d, which is not in the range", round, off, n, i)
					}
				}
				got += r.Len
			}
			if got != want {
				t.Fatalf("round %d: add(%d, %d) returned %d fresh bytes, want %d", round, off, n, got, want)
			}
		}
		var marked int64
		for _, s := range seen {
			if s {
				marked++
			}
		}
		if c.size() != marked {
			t.Fatalf("round %d: size %d, want %d (%v)", round, c.size(), marked, c.rs)
		}
		for i := 1; i < len(c.rs); i++ {
			if c.rs[i].Off <= c.rs[i-1].End() {
				t.Fatalf("round %d: ranges %v not sorted and apart", round, c.rs)
			}
		}
	}
}

// checkAddsUp fails unless every fetched byte is used, wasted or unused.
func checkAddsUp(t *testing.T, what string, st Stats) {
	t.Helper()
	if st.BytesFetched != st.BytesUsed+st.BytesWasted+st.BytesUnused || st.BytesUsed < 0 || st.BytesWasted < 0 || st.BytesUnused < 0 {
		t.Fatalf("%s: fetched %d != used %d + wasted %d + unused %d", what, st.BytesFetched, st.BytesUsed, st.BytesWasted, st.BytesUnused)
	}
}

// TestAccountingAddsUp drives files through random mixes of what readers
// do (announce ranges, read them or others, borrow, read indexes, warm,
// stop early) under random settings (tail size, hole, window, a budget
// too small to prefetch everything, failing reads), and checks after every
// step, and after Close, that fetched = used + wasted + unused. Rounds:
// SCAND_ACCOUNTING_ROUNDS (default 200).
func TestAccountingAddsUp(t *testing.T) {
	rounds := 200
	if v, err := strconv.Atoi(os.Getenv("SCAND_ACCOUNTING_ROUNDS")); err == nil {
		rounds = v
	}
	for round := range rounds {
		t.Run(fmt.Sprint(round), func(t *testing.T) { accountingRound(t, uint64(round)) })
	}
}

var errInjected = errors.New("injected read failure")

func accountingRound(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	size := 1 + rng.IntN(40_000)
	const name = "f.parquet"
	data := storagetest.Content(name, size)
	var failEvery atomic.Int64 // 0: never
	if rng.IntN(4) == 0 {
		failEvery.Store(int64(2 + rng.IntN(6)))
	}
	var count atomic.Int64
	b := storagetest.WithReadHook(storagetest.NewMem(map[string][]byte{name: data}), func(context.Context, string, int64, int) error {
		if n := failEvery.Load(); n > 0 && count.Add(1)%n == 0 {
			return errInjected
		}
		return nil
	})
	opts := Options{
		TailSize:   int64(1 + rng.IntN(8_000)),
		Hole:       int64(1 + rng.IntN(2_000)),
		MaxRequest: int64(1_000 + rng.IntN(20_000)),
		Window:     int64(1_000 + rng.IntN(30_000)),
		Memory:     1 << 20,
		Tolerance:  []float64{0.1, 0.5, 10}[rng.IntN(3)],
		NoCoalesce: rng.IntN(8) == 0,
	}
	if rng.IntN(4) == 0 {
		// Too little to prefetch everything: readahead is shed and reads
		// go direct (each wait for memory costs budgetWait, so not always).
		opts.Memory = int64(2_000 + rng.IntN(40_000))
	}
	s := New(b, opts)
	f := openFile(t, s, b, name)
	randRange := func() Range {
		off := rng.Int64N(int64(size))
		return Range{Off: off, Len: 1 + rng.Int64N(min(int64(size)-off, 3_000))}
	}
	var planned []Range
	var releases []func()
	for step := range 40 {
		switch k := rng.IntN(10); {
		case k == 0:
			_ = f.Warm()
		case k <= 2:
			var rs []Range
			for range 1 + rng.IntN(8) {
				rs = append(rs, randRange())
			}
			planned = append(planned, rs...)
			f.Prefetch(rs)
		case k <= 5 && len(planned) > 0:
			// A piece of an announced range, as decoders read pages.
			r := planned[rng.IntN(len(planned))]
			off := r.Off + rng.Int64N(r.Len)
			n := 1 + rng.Int64N(r.End()-off)
			if rng.IntN(2) == 0 {
				if _, release, ok, _ := f.Borrow(off, n); ok {
					releases = append(releases, release)
					break
				}
			}
			_, _ = f.ReadAt(make([]byte, n), off)
		case k <= 7:
			r := randRange()
			_, _ = f.ReadAt(make([]byte, r.Len), r.Off)
		case k == 8:
			var rs []Range
			for range 1 + rng.IntN(4) {
				rs = append(rs, randRange())
			}
			_, _ = f.ReadIndex(rs)
		default:
			// The footer, as a reader opens the file.
			n := min(int64(size), 8)
			_, _ = f.ReadAt(make([]byte, n), int64(size)-n)
		}
		checkAddsUp(t, fmt.Sprintf("step %d", step), f.Stats())
	}
	if rng.IntN(2) == 0 {
		for _, release := range releases {
			release()
		}
		releases = nil
	}
	f.Close()
	st := f.Stats()
	checkAddsUp(t, "after Close", st)
	for _, release := range releases {
		release()
	}
	checkAddsUp(t, "after the last release", f.Stats())
	if f.Stats() != st {
		t.Fatalf("figures changed after Close: %+v, then %+v", st, f.Stats())
	}
}
