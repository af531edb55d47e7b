package parquet

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/scanner/filter/sql"
)

// countingSource is a lendingSource that counts the data bytes it hands
// out (lent or read) and the index bytes read through ReadIndex.
type countingSource struct {
	*lendingSource
	data, index atomic.Int64
}

func (s *countingSource) ReadAt(p []byte, off int64) (int, error) {
	s.data.Add(int64(len(p)))
	return s.lendingSource.ReadAt(p, off)
}

func (s *countingSource) Borrow(off, n int64) ([]byte, func(), bool, error) {
	s.data.Add(n)
	return s.lendingSource.Borrow(off, n)
}

func (s *countingSource) ReadIndex(ranges []scanner.Range) ([][]byte, error) {
	out := make([][]byte, len(ranges))
	for i, r := range ranges {
		s.index.Add(r.Len)
		out[i] = make([]byte, r.Len)
		if _, err := s.lendingSource.ReadAt(out[i], r.Off); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var _ indexReader = (*countingSource)(nil)

// pageIndexFile writes rows of nativeTestRecord with the page index, small
// pages and several row groups.
func pageIndexFile(t testing.TB, rows int, dict bool) []byte {
	t.Helper()
	rec := nativeTestRecord(rows)
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithPageIndexEnabled(true), parquet.WithDataPageSize(2<<10),
		parquet.WithBatchSize(256), parquet.WithMaxRowGroupLength(8000), parquet.WithDictionaryDefault(dict))
	return writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
}

// readFiltered reads columns of data with opts (Filter bound from
// filterText, when set) and applies the filter to the rows read; it
// returns the result and the source's byte counts.
func readFiltered(t *testing.T, data []byte, columns []string, filterText string, opts scanner.ReadOptions, mem memory.Allocator) (rec arrow.RecordBatch, src *countingSource) {
	t.Helper()
	src = &countingSource{lendingSource: newLendingSource(data)}
	f, err := Open(context.Background(), "pi.parquet", src, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project(columns)
	if err != nil {
		t.Fatal(err)
	}
	var pred *filter.Predicate
	if filterText != "" {
		e, err := sql.Parse(filterText)
		if err != nil {
			t.Fatal(err)
		}
		if pred, err = filter.Bind(e, f.Schema()); err != nil {
			t.Fatal(err)
		}
		opts.Filter = pred
	}
	opts.Mem = mem
	var parts []arrow.RecordBatch
	defer func() {
		for _, r := range parts {
			r.Release()
		}
	}()
	err = f.Read(context.Background(), p, opts, func(r arrow.RecordBatch) error {
		if pred != nil {
			out, err := pred.Filter(context.Background(), r, mem)
			r.Release()
			if err != nil {
				return err
			}
			r = out
		}
		parts = append(parts, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(p.Schema, parts)
	defer tbl.Release()
	return concatTable(t, tbl, mem), src
}

// concatTable makes one batch of a table's rows.
func concatTable(t *testing.T, tbl arrow.Table, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		chunks := tbl.Column(i).Data().Chunks()
		if len(chunks) == 0 {
			cols[i] = array.MakeArrayOfNull(mem, tbl.Schema().Field(i).Type, 0)
			defer cols[i].Release()
			continue
		}
		a, err := array.Concatenate(chunks, mem)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = a
		defer a.Release()
	}
	return array.NewRecordBatch(tbl.Schema(), cols, tbl.NumRows())
}

// TestPagePruningMatchesFullRead: the rows a filtered read keeps are the
// rows of a full read that the filter keeps, with fewer bytes read for
// selective filters on sorted columns, and every buffer released.
func TestPagePruningMatchesFullRead(t *testing.T) {
	filters := []struct {
		text      string
		selective bool // on a sorted column: most pages skipped
	}{
		{"i64 >= 70000 AND i64 < 70700", true},
		{"req < -19800", true},
		{"i64 < 350 OR i64 > 139500", true},
		{"u32 = 36000", true},
		{"low = 3", false},
		{"i32n IS NULL", false},
		{"s >= 'w5'", false},
		{"f64n > 100 AND sn IS NOT NULL", false},
		{"i64 > 1000000", true},
	}
	columns := []string{"i64", "req", "i32n", "u32", "f64n", "d32", "s", "sn", "low"}
	for _, dict := range []bool{false, true} {
		data := pageIndexFile(t, 20000, dict)
		for _, tc := range filters {
			t.Run(tc.text, func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				counts := &scanner.ReadCounts{}
				got, pruned := readFiltered(t, data, columns, tc.text, scanner.ReadOptions{Counts: counts, BatchRows: 1000}, mem)
				defer got.Release()
				want, full := readFiltered(t, data, columns, tc.text, scanner.ReadOptions{MaxIndexBytes: -1, BatchRows: 1000}, mem)
				defer want.Release()
				if !array.RecordEqual(got, want) {
					t.Fatalf("dict=%v: page-pruned read differs: %d rows, want %d", dict, got.NumRows(), want.NumRows())
				}
				if pruned.open.Load() != 0 || full.open.Load() != 0 {
					t.Fatalf("loans not given back")
				}
				if tc.selective && (counts.PagesSkipped == 0 || pruned.data.Load() >= full.data.Load()/2) {
					t.Fatalf("dict=%v: selective filter read %d data bytes of %d, skipped %d pages", dict, pruned.data.Load(), full.data.Load(), counts.PagesSkipped)
				}
				if pruned.index.Load() == 0 {
					t.Fatalf("no page index read")
				}
			})
		}
	}
}

// TestLimitReadsFirstPages: an unfiltered read with a limit fetches the
// pages that hold the first rows only, and they are the file's first rows.
func TestLimitReadsFirstPages(t *testing.T) {
	data := pageIndexFile(t, 20000, false)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	columns := []string{"i64", "s", "sn"}
	got, src := readFiltered(t, data, columns, "", scanner.ReadOptions{Limit: 10}, mem)
	defer got.Release()
	all, full := readFiltered(t, data, columns, "", scanner.ReadOptions{}, mem)
	defer all.Release()
	if got.NumRows() < 10 || got.NumRows() >= 8000 {
		t.Fatalf("limit 10 read %d rows", got.NumRows())
	}
	head := all.NewSlice(0, got.NumRows())
	defer head.Release()
	if !array.RecordEqual(got, head) {
		t.Fatal("limited read differs from the file's first rows")
	}
	if src.data.Load()*20 > full.data.Load() {
		t.Fatalf("limit 10 read %d data bytes of %d", src.data.Load(), full.data.Load())
	}
}

func TestCheckPages(t *testing.T) {
	chunk := chunkSpan{off: 100, n: 1000}
	cases := []struct {
		name  string
		pages []pageLoc
		ok    bool
	}{
		{"good", []pageLoc{{100, 400, 0}, {500, 600, 10}}, true},
		{"none", nil, false},
		{"before the chunk", []pageLoc{{50, 400, 0}}, false},
		{"past the chunk", []pageLoc{{100, 400, 0}, {500, 601, 10}}, false},
		{"not from row 0", []pageLoc{{100, 400, 1}}, false},
		{"rows out of order", []pageLoc{{100, 400, 0}, {500, 100, 0}}, false},
		{"overlapping", []pageLoc{{100, 400, 0}, {499, 100, 10}}, false},
		{"past the group's rows", []pageLoc{{100, 400, 0}, {500, 100, 20}}, false},
		{"empty page", []pageLoc{{100, 0, 0}}, false},
	}
	for _, tc := range cases {
		if err := checkPages(tc.pages, chunk, 20); (err == nil) != tc.ok {
			t.Errorf("%s: checkPages = %v", tc.name, err)
		}
	}
}

// lyingCache is a source whose metadata cache holds an offset index that
// passes checkPages but contradicts the pages' headers.
type lyingCache struct {
	*countingSource
	kind  string
	pages []pageLoc
}

func (s *lyingCache) CachedMetadata(kind string) (any, bool) {
	if kind == s.kind {
		return s.pages, true
	}
	return nil, false
}

func (s *lyingCache) CacheMetadata(string, any, int64) {}

// TestLyingOffsetIndexFallsBack: pages whose first rows do not follow from
// their headers make the reader read the row group whole, with the same
// result.
func TestLyingOffsetIndexFallsBack(t *testing.T) {
	data := pageIndexFile(t, 20000, false)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, err := Open(context.Background(), "pi.parquet", newLendingSource(data), mem)
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := f.pf.MetaData().RowGroup(0).ColumnChunk(0)
	loc := indexLocation(cc, false, int64(len(data)))
	pages, err := decodeOffsetIndex(data[loc.Off:loc.End()], chunkOf(cc), 8000)
	f.Close()
	if err != nil || len(pages) < 3 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	for i := 1; i < len(pages); i++ {
		pages[i].first += 3 // every later page "starts" 3 rows late
	}
	src := &lyingCache{countingSource: &countingSource{lendingSource: newLendingSource(data)}, kind: cacheKind(indexKey{0, 0}, false), pages: pages}
	f, err = Open(context.Background(), "pi.parquet", src, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, _ := f.Project([]string{"i64", "s"})
	var rows int64
	err = f.Read(context.Background(), p, scanner.ReadOptions{Limit: 5000, Mem: mem}, func(r arrow.RecordBatch) error {
		rows += r.NumRows()
		r.Release()
		return nil
	})
	if err != nil || rows != 8000 {
		t.Fatalf("read %d rows, %v; want the first row group whole (8000)", rows, err)
	}
}

// refuseFirst is a budget that refuses its first reservation (a filtered
// read's first is its page index) and takes the rest.
type refuseFirst struct {
	capReserver
	calls int
}

func (r *refuseFirst) Reserve(ctx context.Context, n int64) error {
	r.calls++
	if r.calls == 1 {
		return fmt.Errorf("refusing %d bytes: %w", n, errTestBudget)
	}
	return r.capReserver.Reserve(ctx, n)
}

// TestPageIndexChargedToBudget: the page index bytes are charged to the
// read's budget before they are fetched and given back after; a budget
// that refuses them skips the index (the groups are read whole, with the
// same rows) instead of failing the read or going over.
func TestPageIndexChargedToBudget(t *testing.T) {
	data := pageIndexFile(t, 20000, false)
	const text = "i64 >= 70000 AND i64 < 70700"
	columns := []string{"i64", "s", "f64n"}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	want, _ := readFiltered(t, data, columns, text, scanner.ReadOptions{MaxIndexBytes: -1}, mem)
	defer want.Release()

	took := &capReserver{cap: 1 << 40}
	counts := &scanner.ReadCounts{}
	got, _ := readFiltered(t, data, columns, text, scanner.ReadOptions{Budget: took, Counts: counts}, mem)
	defer got.Release()
	if !array.RecordEqual(got, want) || counts.PagesSkipped == 0 || took.Held() != 0 || took.peak == 0 {
		t.Fatalf("index read within the budget: equal %v, %d pages skipped, %d held, peak %d",
			array.RecordEqual(got, want), counts.PagesSkipped, took.Held(), took.peak)
	}

	refused := &refuseFirst{capReserver: capReserver{cap: 1 << 40}}
	counts = &scanner.ReadCounts{}
	got2, _ := readFiltered(t, data, columns, text, scanner.ReadOptions{Budget: refused, Counts: counts}, mem)
	defer got2.Release()
	if !array.RecordEqual(got2, want) || counts.PagesSkipped != 0 || refused.Held() != 0 {
		t.Fatalf("index refused: equal %v, %d pages skipped (want 0: index skipped), %d held",
			array.RecordEqual(got2, want), counts.PagesSkipped, refused.Held())
	}
}
