package parquet

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// rowStartsNaive is rowStarts one level at a time: the reference.
func rowStartsNaive(reps []int16, k int) (int, int) {
	starts := 0
	for i, r := range reps {
		if r == 0 {
			starts++
			if starts == k {
				return i, k
			}
		}
	}
	return len(reps), starts
}

// rowStarts agrees with the one-level-at-a-time loop for every k, on
// levels with rows of every length around the 8-level blocks.
func TestRowStartsMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, rowLen := range []int{1, 2, 7, 8, 9, 30} {
		for _, n := range []int{0, 1, 7, 8, 9, 17, 64, 1000} {
			reps := make([]int16, n)
			for i := range reps {
				if r.IntN(rowLen) != 0 {
					reps[i] = int16(1 + r.IntN(2))
				}
			}
			for k := 1; k <= n+2; k++ {
				gi, gs := rowStarts(reps, k)
				wi, ws := rowStartsNaive(reps, k)
				if gi != wi || gs != ws {
					t.Fatalf("row length %d, %d levels, k=%d: (%d, %d), want (%d, %d)", rowLen, n, k, gi, gs, wi, ws)
				}
			}
		}
	}
}

// FuzzRowStarts: rowStarts equals the reference on any levels.
func FuzzRowStarts(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}, uint16(3))
	f.Fuzz(func(t *testing.T, b []byte, k uint16) {
		reps := make([]int16, len(b))
		for i, v := range b {
			reps[i] = int16(v % 3)
		}
		kk := int(k)%(len(reps)+2) + 1
		gi, gs := rowStarts(reps, kk)
		wi, ws := rowStartsNaive(reps, kk)
		if gi != wi || gs != ws {
			t.Fatalf("k=%d: (%d, %d), want (%d, %d)", kk, gi, gs, wi, ws)
		}
	})
}

// BenchmarkRowStarts finds the row starts of a 64 Ki-level page of lists
// of mean length rowLen, a batch of rows at a time, as gatherLevels does.
//
//	go test ./scanner/parquet -run XXX -bench RowStarts -count 6
func BenchmarkRowStarts(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, rowLen := range []int{2, 5, 30} {
		reps := make([]int16, 64<<10)
		for i := range reps {
			if r.IntN(rowLen) != 0 {
				reps[i] = 1
			}
		}
		for _, impl := range []struct {
			name string
			fn   func([]int16, int) (int, int)
		}{{"single-pass", rowStarts}, {"per-level", rowStartsNaive}} {
			b.Run(fmt.Sprintf("rowLen=%d/%s", rowLen, impl.name), func(b *testing.B) {
				b.SetBytes(int64(2 * len(reps)))
				for b.Loop() {
					for at := 0; at < len(reps); {
						i, _ := impl.fn(reps[at:], 1025)
						at += i + 1
					}
				}
			})
		}
	}
}
