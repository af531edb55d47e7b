package orc

import (
	"bytes"
	stdflate "compress/flate"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/flate"
)

// refInflate is the reference: the standard library's compress/flate,
// reading at most limit+1 bytes. (Not klauspost/compress/flate, the ZLIB
// decoder scand used before inflate.go: it takes some truncated streams,
// cut inside a distance's extra bits, for complete ones.)
func refInflate(src []byte, limit int) ([]byte, error) {
	r := stdflate.NewReader(bytes.NewReader(src))
	return io.ReadAll(io.LimitReader(r, int64(limit)+1))
}

// checkInflate decodes src with the inflater and the reference and fails
// when they disagree: same bytes when either succeeds within limit, and
// errInflateFull exactly when the reference inflates past limit.
func checkInflate(t testing.TB, z *inflater, src []byte, limit int) {
	t.Helper()
	want, werr := refInflate(src, limit)
	out := make([]byte, limit+decompressSlack)
	for i := range out {
		out[i] = 0xa5 // stale bytes must not leak into the output
	}
	n, err := z.inflate(src, out, limit)
	switch {
	case werr == nil && len(want) > limit:
		if !errors.Is(err, errInflateFull) {
			t.Fatalf("reference inflates past %d bytes; inflater: n=%d err=%v", limit, n, err)
		}
	case werr == nil:
		if err != nil {
			t.Fatalf("reference decodes %d bytes; inflater: %v (limit %d, src %x)", len(want), err, limit, src)
		}
		if !bytes.Equal(out[:n], want) {
			t.Fatalf("inflater decodes %d bytes, reference %d; they differ", n, len(want))
		}
	default:
		if err == nil {
			t.Fatalf("reference fails (%v); inflater decodes %d bytes", werr, n)
		}
	}
}

func deflateWith(t testing.TB, data []byte, level int, std bool) []byte {
	var b bytes.Buffer
	if std {
		w, err := stdflate.NewWriter(&b, level)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
	} else {
		w, err := flate.NewWriter(&b, level)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
	}
	return b.Bytes()
}

// inflateSamples are data shapes ORC writers compress: runs, small
// integers, text, random bytes, doubles' mixed bytes.
func inflateSamples() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 70000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	small := make([]byte, 70000)
	for i := range small {
		small[i] = byte(r.IntN(16))
	}
	var text bytes.Buffer
	words := []string{"alpha", "bravo", "charlie", "delta", "echo ", "-", "\n"}
	for text.Len() < 100000 {
		text.WriteString(words[r.IntN(len(words))])
	}
	doubles := make([]byte, 0, 80000)
	for len(doubles) < 80000 {
		v := uint64(r.IntN(1<<20)) << 40
		for j := 0; j < 8; j++ {
			doubles = append(doubles, byte(v>>(8*j)))
		}
	}
	return map[string][]byte{
		"empty":   nil,
		"one":     {42},
		"zeros":   make([]byte, 100000),
		"period3": bytes.Repeat([]byte{1, 2, 3}, 30000),
		"small":   small,
		"text":    text.Bytes(),
		"random":  random,
		"doubles": doubles,
	}
}

func TestInflateMatchesReference(t *testing.T) {
	z := new(inflater)
	for name, data := range inflateSamples() {
		for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, flate.BestSpeed, 2, 5, flate.DefaultCompression, flate.BestCompression} {
			for _, std := range []bool{false, true} {
				src := deflateWith(t, data, level, std)
				t.Run(name, func(t *testing.T) {
					n, err := z.inflate(src, make([]byte, len(data)+decompressSlack), len(data))
					if err != nil || n != len(data) {
						t.Fatalf("level %d std %v: n=%d err=%v", level, std, n, err)
					}
					checkInflate(t, z, src, len(data))
					if len(data) > 0 {
						// One byte short of the output: full, not corrupt.
						checkInflate(t, z, src, len(data)-1)
						// Truncated input.
						checkInflate(t, z, src[:len(src)/2], len(data))
						checkInflate(t, z, src[:len(src)-1], len(data))
					}
				})
			}
		}
	}
}

func TestInflateCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"empty input", nil},
		{"reserved block type", []byte{0x07}},
		{"stored length mismatch", []byte{0x01, 0x05, 0x00, 0x00, 0x00}},
		{"stored truncated", []byte{0x01, 0x05, 0x00, 0xfa, 0xff, 'a'}},
		// Fixed block: a match of distance 1 with no output before it.
		{"distance before start", []byte{0x03, 0x02, 0x00}},
		{"no final block", deflateWith(t, []byte("abc"), 6, false)[:2]},
		{"garbage", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := new(inflater)
			if _, err := z.inflate(tc.src, make([]byte, 64+decompressSlack), 64); err == nil {
				t.Fatal("no error")
			}
			checkInflate(t, z, tc.src, 64)
		})
	}
}

// FuzzInflate checks the inflater against compress/flate on any
// bytes and output limit.
// Run: go test ./scanner/orc -run '^$' -fuzz FuzzInflate -fuzztime 30s -fuzzminimizetime 0
// (minimizing an input of a large limit stalls the workers for a minute).
func FuzzInflate(f *testing.F) {
	for _, data := range inflateSamples() {
		if len(data) > 3000 {
			data = data[:3000]
		}
		for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, flate.BestSpeed, flate.DefaultCompression} {
			f.Add(deflateWith(f, data, level, false), uint16(len(data)))
		}
	}
	f.Add([]byte{0x03, 0x02, 0x00}, uint16(10))
	z := new(inflater)
	f.Fuzz(func(t *testing.T, src []byte, limit uint16) {
		checkInflate(t, z, src, int(limit))
	})
}
