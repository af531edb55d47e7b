package orc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/flate"

	"github.com/scand/scand/scanner"
)

// capReserver is a test budget of cap bytes that fails a reservation that
// does not fit.
type capReserver struct {
	mu              sync.Mutex
	cap, held, peak int64
}

var errTestBudget = errors.New("test budget exceeded")

func (r *capReserver) Reserve(ctx context.Context, n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held+n > r.cap {
		return fmt.Errorf("%d bytes more than the %d held of %d: %w", n, r.held, r.cap, errTestBudget)
	}
	r.held += n
	r.peak = max(r.peak, r.held)
	return ctx.Err()
}

func (r *capReserver) Release(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held -= n
	if r.held < 0 {
		panic("released more than reserved")
	}
}

// TestBudgetChargedAndGivenBack reads example files (zlib, snappy, zstd,
// dictionaries) with a budget: something is charged, all of it is given
// back, and a budget too small for the first stripe fails with its error.
func TestBudgetChargedAndGivenBack(t *testing.T) {
	for _, name := range []string{"TestOrcFile.test1.orc", "TestOrcFile.testSnappy.orc", "TestVectorOrcFile.testZstd.0.12.orc",
		"TestOrcFile.testStringAndBinaryStatistics.orc", "demo-11-zlib.orc"} {
		t.Run(name, func(t *testing.T) {
			data := readExample(t, name)
			read := func(budget scanner.Reserver) error {
				f, err := openBytes(t, name, data)
				if err != nil {
					t.Fatal(err)
				}
				p, err := f.Project(nil)
				if err != nil {
					t.Fatal(err)
				}
				return f.Read(context.Background(), p, scanner.ReadOptions{Mem: memory.DefaultAllocator, Budget: budget, Groups: []int{0}},
					func(rec arrow.RecordBatch) error { rec.Release(); return nil })
			}
			r := &capReserver{cap: 1 << 30}
			if err := read(r); err != nil {
				t.Fatal(err)
			}
			if r.peak == 0 || r.held != 0 {
				t.Errorf("peak %d, %d still held", r.peak, r.held)
			}
			small := &capReserver{cap: 100}
			if err := read(small); !errors.Is(err, errTestBudget) {
				t.Errorf("with a 100-byte budget: %v, want the budget's error", err)
			}
			if small.held != 0 {
				t.Errorf("%d bytes still held after the failed read", small.held)
			}
		})
	}
}

// zstdZeros is a ZSTD frame of n zero bytes in RLE blocks (4 bytes per
// 128 KiB), declaring its content size fcs.
func zstdZeros(n, fcs int64) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0}
	b = binary.LittleEndian.AppendUint64(b, uint64(fcs))
	for left := n; left > 0; {
		k := min(left, 128<<10)
		h := uint32(k)<<3 | 1<<1
		if k == left {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
		left -= k
	}
	return b
}

// TestChunkBombs: compression chunks that expand far past the block size
// fail without allocating what they expand to.
func TestChunkBombs(t *testing.T) {
	const block = 256 << 10
	var deflated bytes.Buffer
	w, _ := flate.NewWriter(&deflated, flate.BestSpeed)
	_, _ = w.Write(make([]byte, 64<<20))
	_ = w.Close()
	for _, c := range []struct {
		name  string
		kind  compressionKind
		chunk []byte
	}{
		{"zstd 1 GiB declared", compZstd, zstdZeros(1<<30, 1<<30)},
		{"zstd 60 MiB declared", compZstd, zstdZeros(60<<20, 60<<20)}, // under WithDecoderMaxMemory
		{"zstd 1 GiB declared small", compZstd, zstdZeros(1<<30, block)},
		{"zlib 64 MiB", compZlib, deflated.Bytes()},
	} {
		t.Run(c.name, func(t *testing.T) {
			codec := newCodec(c.kind, block)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := codec.decompress(c.chunk, nil, block)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("decompressed")
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 4*block+1<<20 {
				t.Errorf("allocated %d KiB (%v)", n>>10, err)
			}
		})
	}
}

func TestCheckClaims(t *testing.T) {
	ok := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int8})}}, nil)
	bad := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.StructOf(arrow.Field{Name: "b\xff", Type: arrow.PrimitiveTypes.Int8})}}, nil)
	for _, c := range []struct {
		ft   *footer
		sc   *arrow.Schema
		says string
	}{
		{&footer{numberOfRows: 5, stripes: []stripeInfo{{numberOfRows: 5}}}, ok, ""},
		{&footer{numberOfRows: math.MaxInt64 + 1}, ok, "the footer claims"},
		{&footer{stripes: []stripeInfo{{numberOfRows: math.MaxUint64}}}, ok, "stripe 0 claims"},
		{&footer{}, bad, `field name "b\xff" is not valid UTF-8`},
	} {
		err := checkClaims(c.ft, c.sc)
		if (c.says == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.says)) {
			t.Errorf("%+v: %v, want %q", c.ft, err, c.says)
		}
	}
}
