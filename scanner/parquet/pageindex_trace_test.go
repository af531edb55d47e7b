package parquet

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage/storagetest"
)

var updateTrace = flag.Bool("update-trace", false, "rewrite testdata/pageindex_gets.golden")

// TestPageIndexGETs records the storage requests of three reads of one
// file through the IO scheduler: a selective filter without the page
// index (row-group pruning only), the same filter with it, and a limit
// with it. The golden file is the trace docs/io-scheduler.md shows as a
// diff; a change to how index and data ranges are planned shows up here.
func TestPageIndexGETs(t *testing.T) {
	data := traceFile(t)
	var out strings.Builder
	fmt.Fprintf(&out, "# file: %d bytes, 2 row groups of 100000 rows, columns id (sorted), v, k: int64, uncompressed, 64 KiB pages\n", len(data))
	const sel = "id >= 150000 AND id < 150020"
	for _, run := range []struct {
		name   string
		filter string
		tail   int64
		opts   scanner.ReadOptions
	}{
		{sel + ", without the page index", sel, 64 << 10, scanner.ReadOptions{MaxIndexBytes: -1, Groups: []int{1}}},
		{sel + ", with the page index (in the 64 KiB tail)", sel, 64 << 10, scanner.ReadOptions{Groups: []int{1}}},
		{sel + ", with the page index, a 1 KiB tail", sel, 1 << 10, scanner.ReadOptions{Groups: []int{1}}},
		{"limit 10, with the page index", "", 64 << 10, scanner.ReadOptions{Limit: 10, Groups: []int{0, 1}}},
	} {
		fmt.Fprintf(&out, "\n## %s\n", run.name)
		for _, g := range traceRead(t, data, run.filter, run.tail, run.opts) {
			fmt.Fprintln(&out, g)
		}
	}
	golden := filepath.Join("testdata", "pageindex_gets.golden")
	if *updateTrace {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-trace to create it)", err)
	}
	if string(want) != out.String() {
		t.Errorf("GETs differ from %s (-update-trace rewrites it after review):\n%s", golden, out.String())
	}
}

// traceFile writes the traced file: the page index before the footer, as
// pyarrow and arrow-go write it.
func traceFile(t *testing.T) []byte {
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}, {Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range 200000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i) * 3)
		b.Field(2).(*array.Int64Builder).Append(int64(i % 1000))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithPageIndexEnabled(true), parquet.WithDataPageSize(64<<10),
		parquet.WithMaxRowGroupLength(100000), parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Uncompressed))
	return writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties())
}

// traceRead reads data through a scheduler (hole pinned at 256 KiB, tail
// as given) and returns the requests that reached storage, with what they
// were for.
func traceRead(t *testing.T, data []byte, filterText string, tail int64, opts scanner.ReadOptions) []string {
	ctx := context.Background()
	var mu sync.Mutex
	type get struct{ off, n int64 }
	var gets []get
	hook := func(_ context.Context, _ string, off int64, n int) error {
		mu.Lock()
		defer mu.Unlock()
		gets = append(gets, get{off, int64(n)})
		return nil
	}
	b := storagetest.WithReadHook(storagetest.NewMem(map[string][]byte{"t.parquet": data}), hook)
	info, err := b.Stat(ctx, "t.parquet")
	if err != nil {
		t.Fatal(err)
	}
	src, err := iosched.New(b, iosched.Options{Hole: 256 << 10, TailSize: tail}).Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	f, err := Open(ctx, "t.parquet", src, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project(nil)
	if err != nil {
		t.Fatal(err)
	}
	if filterText != "" {
		if opts.Filter, err = bindText(filterText, f); err != nil {
			t.Fatal(err)
		}
	}
	counts := &scanner.ReadCounts{}
	opts.Counts = counts
	var rows int64
	err = f.Read(ctx, p, opts, func(r arrow.RecordBatch) error {
		rows += r.NumRows()
		r.Release()
		if opts.Limit > 0 && rows >= opts.Limit {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		t.Fatal(err)
	}
	st := src.Stats()
	mu.Lock()
	defer mu.Unlock()
	// Readahead fetches run in parallel: their order is not the plan's.
	slices.SortFunc(gets, func(a, b get) int { return cmp.Compare(a.off, b.off) })
	var lines []string
	for _, g := range gets {
		lines = append(lines, fmt.Sprintf("GET [%d, %d) %d bytes", g.off, g.off+g.n, g.n))
	}
	return append(lines, fmt.Sprintf("# %d GETs, %d bytes; index: %d GETs, %d bytes; %d pages skipped; %d rows decoded",
		st.Reads, st.BytesFetched, st.IndexReads, st.IndexBytesFetched, counts.PagesSkipped, rows))
}
