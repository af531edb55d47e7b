package parquet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// withParallelDecode runs f with n decode goroutines and every batch
// worth handing to helpers, then restores the defaults.
func withParallelDecode(t testing.TB, n int, f func()) {
	t.Helper()
	old := parallelMinValues
	parallelMinValues = 1
	SetDecodeParallelism(n)
	defer func() {
		parallelMinValues = old
		SetDecodeParallelism(0)
	}()
	f()
}

// TestParallelDecodeMatchesPqarrow runs the native comparison tests with
// every batch decoded by helpers.
func TestParallelDecodeMatchesPqarrow(t *testing.T) {
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		// The widest comparison, minutes under the race detector: the
		// plain run makes it; the race run keeps the smaller ones, which
		// start helpers just the same.
		{"native", skippedUnderRace(TestNativeMatchesPqarrow)},
		{"types", TestNativeTypesMatchPqarrow},
		{"pyarrow-files", TestNativeMatchesPyarrowFiles},
		{"lineitem", TestLineitemNative},
		{"mixed", TestNativeMixedColumns},
		{"corrupt-page", TestNativeCorruptPageGivesLoansBack},
		{"structs", TestNativeStructsMatchPqarrow},
		{"lists", TestNativeListsMatchPqarrow},
		{"list-pages", TestNativeListPagesSpanRows},
		{"maps", TestNativeMapsMatchPqarrow},
		{"nested-mutations", TestNativeNestedMutations},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withParallelDecode(t, 4, func() { tc.test(t) })
		})
	}
}

// ipcBytes reads data natively and returns the batches as one IPC
// stream: what the server would send, byte for byte.
func ipcBytes(t *testing.T, data []byte, batchRows int64, mem memory.Allocator) []byte {
	t.Helper()
	f, err := Open(context.Background(), "test.parquet", newLendingSource(data), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := ipc.NewWriter(&out, ipc.WithSchema(p.Schema), ipc.WithAllocator(mem))
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, BatchRows: batchRows}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		return w.Write(rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if f.nativeGroups == 0 {
		t.Fatal("not read natively")
	}
	return out.Bytes()
}

// TestParallelDecodeIsByteIdentical: batches decoded with helpers are the
// sequential path's, byte for byte, on the generated files and pyarrow's,
// at every parallelism, with nothing left allocated.
func TestParallelDecodeIsByteIdentical(t *testing.T) {
	rec := nativeTestRecord(20_000)
	defer rec.Release()
	line := lineitemRecord(20_000)
	defer line.Release()
	files := map[string][]byte{
		"generated-zstd": writeParquetBytes(t, rec, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithDataPageSize(8<<10), parquet.WithMaxRowGroupLength(7000)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())),
		"lineitem-snappy": writeParquetBytes(t, line, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithMaxRowGroupLength(7000)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())),
	}
	// Nested columns beside an id: each output column is one unit of
	// work, its leaves decoded together.
	nested := []string{"structs", "lists", "maps"}
	for i, mk := range []func(testing.TB, int, uint64) arrow.RecordBatch{structRecord, listRecord, mapRecord} {
		r := mk(t, 5000, 1)
		files[nested[i]] = writeParquetBytes(t, r, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithDataPageSize(4<<10), parquet.WithMaxRowGroupLength(2000)), pqarrow.NewArrowWriterProperties())
		r.Release()
	}
	names, _ := filepath.Glob("testdata/native/*.parquet")
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(name)] = data
	}
	for name, data := range files {
		for _, batchRows := range []int64{300, 4096} {
			t.Run(fmt.Sprintf("%s/%d", name, batchRows), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				var want []byte
				withParallelDecode(t, 1, func() { want = ipcBytes(t, data, batchRows, mem) })
				for _, n := range []int{2, 4, 16} {
					var got []byte
					ran := helpersRun.Load()
					withParallelDecode(t, n, func() { got = ipcBytes(t, data, batchRows, mem) })
					// (generated-zstd has a column pqarrow reads, and
					// some of pyarrow's files one column: no helpers)
					if (name == "lineitem-snappy" || slices.Contains(nested, name)) && helpersRun.Load() == ran {
						t.Errorf("parallelism %d: no helper ran", n)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("parallelism %d: %d IPC bytes differ from the sequential %d", n, len(got), len(want))
					}
				}
			})
		}
	}
}

// TestParallelDecodeConcurrentStreams: many readers at once share the
// helper pool (run with -race); every one gets the sequential bytes and
// the pool ends with all its slots.
func TestParallelDecodeConcurrentStreams(t *testing.T) {
	line := lineitemRecord(30_000)
	defer line.Release()
	data := writeParquetBytes(t, line, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(10_000)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var want []byte
	withParallelDecode(t, 1, func() { want = ipcBytes(t, data, 2048, mem) })
	withParallelDecode(t, 3, func() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if got := ipcBytes(t, data, 2048, mem); !bytes.Equal(got, want) {
					t.Error("a concurrent stream's bytes differ from the sequential ones")
				}
			})
		}
		wg.Wait()
		if n := DecodeParallelism(); n != 3 {
			t.Errorf("after the streams the pool gives parallelism %d, want 3: helpers not given back", n)
		}
	})
}

func TestSetDecodeParallelism(t *testing.T) {
	defer SetDecodeParallelism(0)
	for _, tc := range []struct{ set, want int }{{1, 1}, {2, 2}, {7, 7}, {-1, defaultParallelism()}, {0, defaultParallelism()}} {
		SetDecodeParallelism(tc.set)
		if got := DecodeParallelism(); got != tc.want {
			t.Errorf("SetDecodeParallelism(%d): %d, want %d", tc.set, got, tc.want)
		}
		if worth := worthParallel(17, 17, 1<<20); worth != (tc.want > 1) {
			t.Errorf("parallelism %d: worthParallel %v", tc.want, worth)
		}
	}
	if worthParallel(1, 1, 1<<20) || worthParallel(17, 17, 100) {
		t.Error("one column, or a small batch, must decode on the stream's goroutine")
	}
}

// BenchmarkLineitemParallel reads BenchmarkLineitem's file natively with
// the columns of each batch decoded in turn (parallelism=1) and by
// helpers (2, 4). Bytes are the Arrow data produced. Run:
//
//	go test ./scanner/parquet -run XXX -bench LineitemParallel -benchmem -count 5
func BenchmarkLineitemParallel(b *testing.B) {
	rec := lineitemShape(200_000, false)
	arrowBytes := int64(0)
	for _, c := range rec.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				arrowBytes += int64(buf.Len())
			}
		}
	}
	data := writeParquetBytes(b, rec, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	rec.Release()
	defer SetDecodeParallelism(0)
	for _, par := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("parallelism=%d", par), func(b *testing.B) {
			SetDecodeParallelism(par)
			b.SetBytes(arrowBytes)
			b.ReportAllocs()
			for b.Loop() {
				benchRead(b, data, true)
			}
		})
	}
}

// skippedUnderRace is test, skipped when the race detector is on.
func skippedUnderRace(test func(*testing.T)) func(*testing.T) {
	return func(t *testing.T) {
		if raceEnabled {
			t.Skip("runs in the plain test run; too slow under the race detector")
		}
		test(t)
	}
}
