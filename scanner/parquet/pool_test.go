package parquet

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

func aligned(b []byte) bool {
	return len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%poolAlign == 0
}

func TestPoolAllocator(t *testing.T) {
	for _, tc := range []struct {
		size   int
		pooled bool // capacity rounded to a power of two and reused
	}{
		{0, false},
		{1, false},
		{poolMinBytes - 1, false},
		{poolMinBytes, true},
		{poolMinBytes + 1, true},
		{1 << 20, true},
		{1<<20 + 100, true},
		{poolMaxBytes, true},
		{poolMaxBytes + 1, false},
	} {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			a := newPoolAllocator(true)
			b := a.Allocate(tc.size)
			if len(b) != tc.size || !aligned(b) {
				t.Fatalf("Allocate(%d): len %d, aligned %v", tc.size, len(b), aligned(b))
			}
			if size, _, ok := poolClasses.Class(tc.size); (ok && cap(b) == size) != tc.pooled {
				t.Fatalf("Allocate(%d): cap %d, want pooled = %v", tc.size, cap(b), tc.pooled)
			}
			if !bytes.Equal(b, make([]byte, tc.size)) {
				t.Fatal("new buffer is not zeroed")
			}
			// Dirty it, give it back, and take one of the same size again:
			// a reused buffer must come back zeroed.
			copy(b[:cap(b)], bytes.Repeat([]byte{0xAA}, cap(b)))
			a.Free(b)
			c := a.Allocate(tc.size)
			if !bytes.Equal(c, make([]byte, tc.size)) {
				t.Fatal("reused buffer is not zeroed")
			}
			// Growing keeps the contents and zeroes what is new, in place
			// (within the capacity) or not.
			copy(c, bytes.Repeat([]byte{0x5C}, len(c)))
			for _, grow := range []int{cap(c), 2*cap(c) + 1} {
				g := a.Reallocate(grow, c)
				if len(g) != grow || !aligned(g) {
					t.Fatalf("Reallocate(%d): len %d, aligned %v", grow, len(g), aligned(g))
				}
				if !bytes.Equal(g[:len(c)], bytes.Repeat([]byte{0x5C}, len(c))) || !bytes.Equal(g[len(c):], make([]byte, grow-len(c))) {
					t.Fatalf("Reallocate(%d) lost the contents or did not zero the rest", grow)
				}
				a.Free(g)
			}
		})
	}
}

// Buffers the pool did not hand out (other capacities, misaligned
// starts) are left alone by Free.
func TestPoolAllocatorIgnoresForeignBuffers(t *testing.T) {
	a := newPoolAllocator(true)
	own := a.Allocate(8 << 10)
	for _, b := range [][]byte{nil, make([]byte, 5000), own[1:], own[: 0 : 4096+1]} {
		a.Free(b)
	}
	for range 4 {
		b := a.Allocate(8 << 10)
		if cap(b) != 8<<10 || !aligned(b) {
			t.Fatalf("got cap %d, aligned %v after freeing foreign buffers", cap(b), aligned(b))
		}
	}
}

// Many goroutines allocate, fill with their own pattern, check it and
// free: a buffer handed to two users at once shows as a wrong byte (and,
// under -race, as a race).
func TestPoolAllocatorConcurrent(t *testing.T) {
	a := newPoolAllocator(true)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				n := poolMinBytes << (i % 6)
				b := a.Allocate(n + i)
				pat := byte(g*31 + i)
				for j := range b {
					b[j] = pat
				}
				for j := range b {
					if b[j] != pat {
						t.Errorf("goroutine %d: byte %d changed under us", g, j)
						return
					}
				}
				a.Free(b)
			}
		})
	}
	wg.Wait()
}

// Scans that share the pools concurrently return the same rows as a scan
// through a checked allocator, which also shows that nothing of the
// caller's allocator is left outstanding.
func TestPooledScansMatchChecked(t *testing.T) {
	const rows = 12_000
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	for r := range rows {
		if r%7 == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(r))
		}
		if r%5 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d %s", r, bytes.Repeat([]byte("x"), r%50)))
		}
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		for k := range r % 4 {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(r + k))
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rows/4), parquet.WithDataPageSize(16<<10))
	data := writeParquetBytes(t, rec, props, pqarrow.DefaultWriterProps())

	scan := func(mem memory.Allocator) string {
		src := memSource{bytes.NewReader(data)}
		f, err := Open(context.Background(), "pool.parquet", src, mem)
		if err != nil {
			t.Error(err)
			return ""
		}
		defer f.Close()
		p, err := f.Project(nil)
		if err != nil {
			t.Error(err)
			return ""
		}
		var out bytes.Buffer
		err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, BatchRows: 1000}, func(rec arrow.RecordBatch) error {
			defer rec.Release()
			js, err := rec.MarshalJSON()
			out.Write(js)
			return err
		})
		if err != nil {
			t.Error(err)
		}
		return out.String()
	}
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	want := scan(checked)
	checked.AssertSize(t, 0)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 2 {
				if got := scan(memory.DefaultAllocator); got != want {
					t.Error("a pooled scan returned different rows")
					return
				}
			}
		})
	}
	wg.Wait()
}

// poisonAllocator hands out buffers full of garbage, as a reused
// pageBuffers buffer may be.
type poisonAllocator struct{}

func (poisonAllocator) Allocate(n int) []byte {
	b := goAlloc(n)
	for i := range b {
		b[i] = 0xA5 ^ byte(i)
	}
	return b
}

func (p poisonAllocator) Reallocate(n int, b []byte) []byte {
	nb := p.Allocate(n)
	copy(nb, b)
	return nb
}

func (poisonAllocator) Free([]byte) {}

// pageBuffers does not clear reused buffers, on the grounds that arrow-go
// writes everything it allocates through ReaderProperties' allocator
// before reading it (see poolAllocator). Decoding every Parquet file of
// the test corpora with garbage-filled page buffers must then give the
// same rows, or the same error, as with zeroed ones.
func TestPageBuffersNeedNoZeroing(t *testing.T) {
	dir := os.Getenv("SCAND_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skipf("no Parquet files under %s (set SCAND_TESTDATA)", dir)
	}
	decode := func(path string, pages memory.Allocator) string {
		old := pageAllocator
		pageAllocator = pages
		defer func() { pageAllocator = old }()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 64<<20 {
			return "skipped"
		}
		var out strings.Builder
		f, err := Open(context.Background(), path, memSource{bytes.NewReader(data)}, memory.NewGoAllocator())
		if err != nil {
			return "open: " + err.Error()
		}
		defer f.Close()
		p, err := f.Project(nil)
		if err != nil {
			return "project: " + err.Error()
		}
		err = f.Read(context.Background(), p, scanner.ReadOptions{BatchRows: 1000}, func(rec arrow.RecordBatch) error {
			defer rec.Release()
			js, err := rec.MarshalJSON()
			out.Write(js)
			return err
		})
		if err != nil {
			out.WriteString("read: " + err.Error())
		}
		return out.String()
	}
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			if got, want := decode(path, poisonAllocator{}), decode(path, memory.NewGoAllocator()); got != want {
				t.Errorf("garbage page buffers changed the result:\n got %.300s\nwant %.300s", got, want)
			}
		})
	}
}
