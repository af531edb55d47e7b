package orc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anchore/go-lzo"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// lzoEnd is LZO1X's end-of-stream instruction: an M4 of distance 16384.
var lzoEnd = []byte{0x11, 0x00, 0x00}

// lzoLiterals encodes n >= 4 literals at state 0 (the stream's start, or
// after a match that carried no literals): 0000LLLL copies 3+L; L = 0
// takes a length extension (each zero byte adds 255, then a last byte).
func lzoLiterals(lits []byte) []byte {
	n := len(lits)
	if n <= 18 {
		return append([]byte{byte(n - 3)}, lits...)
	}
	rest := n - 18
	out := []byte{0x00}
	for ; rest > 255; rest -= 255 {
		out = append(out, 0x00)
	}
	return append(append(out, byte(rest)), lits...)
}

// lzoBlock joins instructions and appends the end marker.
func lzoBlock(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return append(out, lzoEnd...)
}

// pattern returns n bytes without short repeats, so that a wrong match
// distance shows in the output.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// lzoCases are hand-made LZO1X blocks, one or more per instruction kind,
// with the bytes they decode to.
func lzoCases() []struct {
	name     string
	src, out []byte
} {
	abcde := []byte("abcde")
	long := pattern(2100)  // for M1's 3-byte copy at 2049..3072
	far := pattern(16400)  // for M4 within 16..32 KiB
	farH := pattern(40000) // for M4 with its H bit (32..48 KiB)
	return []struct {
		name     string
		src, out []byte
	}{
		{"first byte 22..255: literal run", lzoBlock([]byte{17 + 5}, abcde), abcde},
		{"first byte 18..21: 1-3 literals, then M1 2-byte copy within 1 KiB",
			// 0x13: 2 literals, state 2; 0000DDSS HHHHHHHH: distance (H<<2)+D+1 = 2.
			lzoBlock([]byte{0x13, 'a', 'b', 0x04, 0x00}), []byte("abab")},
		{"M1 2-byte copy carrying 3 literals",
			lzoBlock([]byte{0x13, 'a', 'b', 0x07, 0x00, 'x', 'y', 'z'}), []byte("ababxyz")},
		{"state 0: short literal run 0000LLLL", lzoBlock([]byte{0x01, 'w', 'x', 'y', 'z'}), []byte("wxyz")},
		{"state 0: literal run with a length extension", lzoBlock(lzoLiterals(pattern(600))), pattern(600)},
		{"M1 after 4+ literals: 3-byte copy at 2049..3072",
			// 0000DDSS HHHHHHHH: distance (H<<2)+D+2049 = 2049.
			lzoBlock(lzoLiterals(long), []byte{0x00, 0x00}), cat(long, long[51:54])},
		{"M2 01LDDDSS: 3-4 bytes within 2 KiB, then a trailing literal",
			// L=0: 3 bytes; D=4, H=0: distance 5; S=1.
			lzoBlock([]byte{17 + 5}, abcde, []byte{0x51, 0x00, 'z'}), []byte("abcdeabcz")},
		{"M2 1LLDDDSS: 5-8 bytes, overlapping its source",
			// LL=3: 8 bytes; D=1: distance 2.
			lzoBlock([]byte{0x13, 'a', 'b', 0xE4, 0x00}), []byte("ababababab")},
		{"M3 001LLLLL: within 16 KiB",
			// L=3: 5 bytes; LE16 DDDDDDDD DDDDDDSS, D=4: distance 5.
			lzoBlock([]byte{17 + 5}, abcde, []byte{0x23, 0x10, 0x00}), []byte("abcdeabcde")},
		{"M3 with a length extension and 2 trailing literals",
			// L=0, then 0x00 0x0A: 2+31+255+10 = 298 bytes at distance 1.
			lzoBlock([]byte{17 + 5}, abcde, []byte{0x20, 0x00, 0x0A, 0x02, 0x00, 'x', 'y'}),
			cat(abcde, bytes.Repeat([]byte("e"), 298), []byte("xy"))},
		{"M4 0001HLLL: 16..32 KiB away",
			// L=2: 4 bytes; H=0, D=1: distance 16384+1.
			lzoBlock(lzoLiterals(far), []byte{0x12, 0x04, 0x00}), cat(far, far[16400-16385:][:4])},
		{"M4 with its H bit: 32..48 KiB away, with a length extension",
			// L=0, 0x05: 2+7+5 = 14 bytes; H=1, D=3: distance 32768+3.
			lzoBlock(lzoLiterals(farH), []byte{0x18, 0x05, 0x0C, 0x00}), cat(farH, farH[40000-32771:][:14])},
	}
}

func TestLZODecode(t *testing.T) {
	for _, c := range lzoCases() {
		t.Run(c.name, func(t *testing.T) {
			got, err := decompressLZO(c.src, nil, 256<<10)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.out) {
				t.Fatalf("got %d bytes %q..., want %d bytes %q...", len(got), head(got), len(c.out), head(c.out))
			}
			// The exact size is enough room; one byte less is not.
			if got, err := decompressLZO(c.src, nil, len(c.out)); err != nil || !bytes.Equal(got, c.out) {
				t.Errorf("with limit %d: %v", len(c.out), err)
			}
			if _, err := decompressLZO(c.src, nil, len(c.out)-1); err == nil {
				t.Errorf("with limit %d: no error", len(c.out)-1)
			}
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 16)] }

// TestLZOErrors: damaged blocks fail, without panicking or writing past
// the limit.
func TestLZOErrors(t *testing.T) {
	abcde := []byte("abcde")
	for _, c := range []struct {
		name, says string
		src        []byte
		limit      int
	}{
		{"no end marker", "overrun", cat([]byte{17 + 5}, abcde), 64},
		{"bytes after the end marker", "not fully consumed", cat(lzoBlock([]byte{17 + 5}, abcde), []byte{0}), 64},
		{"literal run past the input", "overrun", []byte{17 + 9, 'a', 'b', 'c'}, 64},
		{"match before the output's start", "lookbehind", lzoBlock([]byte{0x13, 'a', 'b', 0x0C, 0x00}), 64},
		{"M3 distance before the start", "lookbehind", lzoBlock([]byte{17 + 5}, abcde, []byte{0x23, 0xFC, 0xFF}), 64},
		{"M4 right after a literal run", "lookbehind", lzoBlock([]byte{17 + 5}, abcde, []byte{0x12, 0x04, 0x00}), 64},
		{"length extension runs off the input", "overrun", []byte{0x00, 0x00, 0x00}, 64},
		{"match distance byte missing", "overrun", []byte{0x13, 'a', 'b', 0x51}, 64},
		{"literals past the limit", "past the block size", lzoBlock([]byte{17 + 5}, abcde), 4},
		{"match past the limit", "past the block size", lzoBlock([]byte{17 + 5}, abcde, []byte{0x20, 0x00, 0x0A, 0x00, 0x00}), 100},
		{"too short", "overrun", []byte{0x11, 0x00}, 64},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := decompressLZO(c.src, nil, c.limit)
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %d bytes, %v; want an error saying %q", len(out), err, c.says)
			}
		})
	}
	if out, err := decompressLZO(nil, nil, 64); err != nil || len(out) != 0 {
		t.Errorf("empty chunk: %d bytes, %v", len(out), err)
	}
}

// TestLZOBufferBound: a small chunk never gets a block-size buffer, and a
// reused buffer large enough is not replaced.
func TestLZOBufferBound(t *testing.T) {
	src := lzoBlock([]byte{17 + 5}, []byte("abcde"))
	out, err := decompressLZO(src, nil, 64<<20)
	if err != nil || string(out) != "abcde" {
		t.Fatalf("%q, %v", out, err)
	}
	if cap(out) > lzoMaxExpansion*len(src) {
		t.Errorf("buffer of %d bytes for a %d-byte chunk", cap(out), len(src))
	}
	dst := make([]byte, 4096)
	out, _ = decompressLZO(src, dst, 64<<20)
	if &out[0] != &dst[0] {
		t.Error("a buffer with room was not reused")
	}
}

// lzoExampleChunks returns the compressed chunks of the LZO example file,
// the fuzzer's seeds from a real writer. Its random columns do not
// compress (they are stored as original chunks): the compressed ones are
// in the stripes (one each) and the file's tail.
func lzoExampleChunks(tb testing.TB) [][]byte {
	dir := seedDir()
	if dir == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "TestVectorOrcFile.testLzo.orc"))
	if err != nil {
		return nil
	}
	f, err := Open(context.Background(), "lzo", &memSource{data: data}, memory.DefaultAllocator)
	if err != nil {
		tb.Fatal(err)
	}
	end := uint64(len(data) - 1 - int(data[len(data)-1]))
	regions := [][]byte{data[end-f.ps.footerLength-f.ps.metadataLength : end]}
	for _, st := range f.ft.stripes {
		regions = append(regions, data[st.offset:st.offset+st.indexLength+st.dataLength+st.footerLength])
	}
	var chunks [][]byte
	for _, raw := range regions {
		for len(raw) >= 3 {
			h := int(raw[0]) | int(raw[1])<<8 | int(raw[2])<<16
			n := min(h>>1, len(raw)-3)
			if h&1 == 0 {
				chunks = append(chunks, raw[3:3+n])
			}
			raw = raw[3+n:]
		}
	}
	return chunks
}

// FuzzLZO: decompressLZO never panics, never writes past its limit, and
// returns exactly what the decoder gives with a buffer of the whole limit
// (its smaller buffer for small chunks, lzoMaxExpansion, never truncates a
// valid block). No compressor is at hand, so no round trip.
//
//	go test ./scanner/orc/ -run '^$' -fuzz '^FuzzLZO$' -fuzztime 2m
func FuzzLZO(f *testing.F) {
	for _, c := range lzoCases() {
		if len(c.src) < 4096 {
			f.Add(c.src, uint32(len(c.out)))
		}
	}
	for _, c := range lzoExampleChunks(f) {
		f.Add(c, uint32(256<<10))
	}
	const guard = 64
	f.Fuzz(func(t *testing.T, src []byte, limit uint32) {
		// Limits up to 64 KiB (ORC's usual block size) keep each run
		// cheap enough for the fuzzer to minimize its finds.
		lim := int(limit % (1 << 16))
		dst := make([]byte, lim+guard)
		for i := lim; i < len(dst); i++ {
			dst[i] = 0xA5
		}
		out, err := decompressLZO(src, dst[:0], lim)
		for i := lim; i < len(dst); i++ {
			if dst[i] != 0xA5 {
				t.Fatalf("wrote past the limit %d", lim)
			}
		}
		full := make([]byte, lim)
		n, ferr := lzo.Decompress(src, full)
		if len(src) == 0 {
			n, ferr = 0, nil
		}
		switch {
		case (err == nil) != (ferr == nil):
			t.Fatalf("bounded buffer: %v; whole limit: %v", err, ferr)
		case err != nil:
		case len(out) > lim:
			t.Fatalf("%d bytes out, limit %d", len(out), lim)
		case !bytes.Equal(out, full[:n]):
			t.Fatalf("bounded buffer gives other bytes than the whole limit")
		}
	})
}
