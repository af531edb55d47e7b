package orc

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkSpread compares spread and spreadInts on a batch of int16
// with 10 % randomly placed nulls.
func BenchmarkSpread(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	valid := make([]bool, 65536)
	k := 0
	for i := range valid {
		valid[i] = r.IntN(10) != 0
		if valid[i] {
			k++
		}
	}
	vals := make([]int16, len(valid))
	b.Run("branchy", func(b *testing.B) {
		for b.Loop() {
			spread(vals, valid, k)
		}
	})
	b.Run("masked", func(b *testing.B) {
		for b.Loop() {
			spreadInts(vals, valid, k)
		}
	})
}

// TestSpreadInts checks the branch-free spread against spread on random
// validity of every density, including all-null and all-valid tails.
func TestSpreadInts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, rate := range []float64{0, 0.1, 0.5, 0.9, 1} {
		for _, n := range []int{0, 1, 7, 100, 1000} {
			valid := make([]bool, n)
			k := 0
			for i := range valid {
				valid[i] = r.Float64() >= rate
				if valid[i] {
					k++
				}
			}
			want := make([]int16, n)
			for i := range want[:k] {
				want[i] = int16(r.Uint32()) | 1
			}
			got := append([]int16(nil), want...)
			for i := k; i < n; i++ { // stale values past k must be zeroed
				want[i], got[i] = -7, -7
			}
			spread(want, valid, k)
			spreadInts(got, valid, k)
			if !slices.Equal(got, want) {
				t.Fatalf("nulls %.1f, %d rows: spreadInts %v, spread %v", rate, n, got, want)
			}
		}
	}
}
