package parquet

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// spreadNaive is spreadFixed a row at a time, forwards, into a new
// buffer: the reference.
func spreadNaive(out []byte, w int, valid []byte, off, nv int) []byte {
	k := len(out) / w
	res := make([]byte, len(out))
	v := 0
	for i := range k {
		if bitutil.BitIsSet(valid, off+i) {
			copy(res[i*w:(i+1)*w], out[v*w:(v+1)*w])
			v++
		}
	}
	if v != nv {
		panic(fmt.Sprintf("%d values, want %d", v, nv))
	}
	return res
}

// checkSpread runs spreadFixed on k rows of width w whose validity is
// valid from bit off, and compares it with spreadNaive.
func checkSpread(t *testing.T, w int, valid []byte, off, k int, seed uint64) {
	t.Helper()
	nv := bitutil.CountSetBits(valid, off, k)
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]byte, k*w)
	for i := range out[:nv*w] {
		out[i] = byte(r.Uint32()) | 1 // no zero bytes: a value lost to a zeroed slot shows
	}
	for i := range out[nv*w:] {
		out[nv*w+i] = 0xEE // stale bytes the nulls' slots must not keep
	}
	want := spreadNaive(out, w, valid, off, nv)
	spreadFixed(out, w, valid, off, nv)
	if !bytes.Equal(out, want) {
		t.Fatalf("w=%d off=%d k=%d nv=%d:\n got %x\nwant %x", w, off, k, nv, out, want)
	}
}

// TestSpreadFixed: the values of every width land in their rows and the
// nulls' slots are zero, for patterns of nulls at the ends, in runs,
// alternating, random, none and all, at any bit offset.
func TestSpreadFixed(t *testing.T) {
	patterns := map[string]func(i int) bool{
		"none":        func(int) bool { return true },
		"all":         func(int) bool { return false },
		"first":       func(i int) bool { return i != 0 },
		"last":        func(i int) bool { return i != 36 },
		"alternating": func(i int) bool { return i%2 == 0 },
		"runs":        func(i int) bool { return i/5%2 == 1 },
		"leading":     func(i int) bool { return i >= 20 },
		"trailing":    func(i int) bool { return i < 20 },
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 4 {
		bits := make([]bool, 64)
		for j := range bits {
			bits[j] = r.IntN(10) > i*3
		}
		patterns[fmt.Sprintf("random%d", i)] = func(j int) bool { return bits[j] }
	}
	for name, valid := range patterns {
		for _, w := range []int{1, 2, 3, 4, 8, 12, 16} {
			for _, off := range []int{0, 1, 7, 8, 13} {
				for _, k := range []int{0, 1, 7, 8, 9, 37} {
					bm := make([]byte, 16)
					for i := range k {
						bitutil.SetBitTo(bm, off+i, valid(i))
					}
					t.Run(fmt.Sprintf("%s/w%d/off%d/k%d", name, w, off, k), func(t *testing.T) {
						checkSpread(t, w, bm, off, k, uint64(w*1000+k))
					})
				}
			}
		}
	}
}

// FuzzSpreadFixed: any validity bits, offset, count and width give what
// the row-at-a-time reference gives.
func FuzzSpreadFixed(f *testing.F) {
	f.Add([]byte{0xff, 0x00, 0xa5}, uint8(0), uint8(20), uint8(1))
	f.Add([]byte{0x0f, 0xf0, 0x3c, 0x81}, uint8(3), uint8(29), uint8(2))
	f.Add([]byte{0x01, 0x80}, uint8(1), uint8(15), uint8(8))
	f.Add([]byte{0x00, 0x00}, uint8(0), uint8(16), uint8(16))
	f.Fuzz(func(t *testing.T, valid []byte, off, k, w uint8) {
		width := []int{1, 2, 3, 4, 8, 12, 16}[int(w)%7]
		o, n := int(off)%8, int(k)
		if o+n > 8*len(valid) {
			o, n = 0, 8*len(valid)
		}
		checkSpread(t, width, valid, o, n, uint64(w))
	})
}

// BenchmarkSpreadFixed: 4,096 rows with a tenth of them null.
func BenchmarkSpreadFixed(b *testing.B) {
	const k = 4096
	valid := make([]byte, k/8)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range k {
		bitutil.SetBitTo(valid, i, r.IntN(10) != 0)
	}
	nv := bitutil.CountSetBits(valid, 0, k)
	for _, w := range []int{1, 2, 4, 8, 16} {
		b.Run(fmt.Sprintf("w%d", w), func(b *testing.B) {
			out := make([]byte, k*w)
			b.SetBytes(int64(k * w))
			for b.Loop() {
				spreadFixed(out, w, valid, 0, nv)
			}
		})
	}
}
