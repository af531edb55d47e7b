package parquet

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// lateValueColumns is how many value columns lateFile writes beside cat.
const lateValueColumns = 20

// lateFile writes rows with a dictionary-encoded cat column, mostly
// (i/100)%100+1: runs of 100 rows, each value in 1 % of the rows; but
// rows 64k and 64k+1 hold 0 and 200, so that every page's statistics
// span every value and the page index prunes nothing for cat = v. Beside
// it: v0..v19 random doubles (v0 with nulls) in
// small PLAIN pages, and a string column s.
func lateFile(t testing.TB, rows int) []byte {
	t.Helper()
	return lateFileIndexed(t, rows, true)
}

// lateFileIndexed is lateFile, with a page index or without one (as
// pyarrow writes by default).
func lateFileIndexed(t testing.TB, rows int, index bool) []byte {
	t.Helper()
	fields := []arrow.Field{{Name: "cat", Type: arrow.PrimitiveTypes.Int64}}
	for i := range lateValueColumns {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("v%d", i), Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true})
	sc := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer b.Release()
	r := rand.New(rand.NewPCG(3, 4))
	for i := range rows {
		cat := int64(i/100)%100 + 1
		switch i % 64 {
		case 0:
			cat = 0
		case 1:
			cat = 200
		}
		b.Field(0).(*array.Int64Builder).Append(cat)
		for c := 1; c <= lateValueColumns; c++ {
			if c == 1 && i%13 == 0 {
				b.Field(c).AppendNull()
				continue
			}
			b.Field(c).(*array.Float64Builder).Append(r.Float64())
		}
		b.Field(lateValueColumns + 1).(*array.StringBuilder).Append(fmt.Sprintf("w%d", r.IntN(1000)))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithPageIndexEnabled(index), parquet.WithDataPageSize(2<<10),
		parquet.WithBatchSize(256), parquet.WithMaxRowGroupLength(10000), parquet.WithDictionaryDefault(false),
		parquet.WithDictionaryFor("cat", true))
	return writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
}

func lateProjection() []string {
	out := []string{"cat"}
	for i := range lateValueColumns {
		out = append(out, fmt.Sprintf("v%d", i))
	}
	return append(out, "s")
}

// TestLateMaterializationMatchesPlainRead: whatever the mode, a filtered
// read keeps the rows a full read keeps; late reads fetch less of the
// other columns where few rows survive, and auto stops reading late
// where most do.
func TestLateMaterializationMatchesPlainRead(t *testing.T) {
	data := lateFile(t, 40000)
	all := lateProjection()
	cases := []struct {
		name, filter string
		columns      []string
		lateGroups   int64   // in auto mode
		maxShare     float64 // of the one-pass read's data bytes
		alwaysShare  float64 // with LateAlways, when not maxShare
	}{
		{"one percent", "cat = 8", all, 4, 0.2, 0},
		{"two filter columns", "cat = 8 AND v0 > 0.5", all, 4, 0.2, 0},
		{"scattered string", "s = 'w12'", all, 4, 0.5, 0},
		{"nulls", "v0 IS NULL AND cat < 3", all, 4, 0.5, 0},
		{"half survive", "cat <= 50", all, 1, 1.05, 0},
		// The page index keeps so few pages of v0 and v1 that auto finds
		// under lateMinBytes to save.
		{"none survive", "cat = 8 AND v1 > 0.999 AND v0 < 0.001", all, 0, 1, 0.2},
		{"filter columns only", "cat = 8", []string{"cat"}, 0, 1, 0},
		{"no value matches", "cat = 1000", all, 0, 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			want, full := readFiltered(t, data, tc.columns, tc.filter, scanner.ReadOptions{MaxIndexBytes: -1, BatchRows: 1000}, mem)
			defer want.Release()
			off, plain := readFiltered(t, data, tc.columns, tc.filter, scanner.ReadOptions{LateMaterialization: scanner.LateOff, BatchRows: 1000}, mem)
			defer off.Release()
			for _, mode := range []scanner.LateMode{scanner.LateAuto, scanner.LateAlways} {
				counts := &scanner.ReadCounts{}
				got, late := readFiltered(t, data, tc.columns, tc.filter, scanner.ReadOptions{LateMaterialization: mode, BatchRows: 1000, Counts: counts}, mem)
				defer got.Release()
				if !array.RecordEqual(got, want) || !array.RecordEqual(off, want) {
					t.Fatalf("mode %d: %d rows, off %d, want %d", mode, got.NumRows(), off.NumRows(), want.NumRows())
				}
				if late.open.Load() != 0 || full.open.Load() != 0 || plain.open.Load() != 0 {
					t.Fatalf("loans not given back")
				}
				share, limit := float64(late.data.Load())/float64(plain.data.Load()), tc.maxShare
				if mode == scanner.LateAlways && tc.alwaysShare > 0 {
					limit = tc.alwaysShare
				}
				if share > limit {
					t.Fatalf("mode %d: late read %d data bytes, %.2f of the plain read's %d", mode, late.data.Load(), share, plain.data.Load())
				}
				if mode == scanner.LateAuto && counts.LateGroups != tc.lateGroups {
					t.Fatalf("auto read %d row groups late, want %d", counts.LateGroups, tc.lateGroups)
				}
				// Auto gives up (and says so, for the stream's later files)
				// only where most rows survive.
				if gaveUp := tc.name == "half survive"; mode == scanner.LateAuto && counts.LateGaveUp != gaveUp {
					t.Fatalf("auto gave up: %v, want %v", counts.LateGaveUp, gaveUp)
				}
				if mode == scanner.LateAlways && tc.maxShare < 1 && counts.LateGroups != 4 {
					t.Fatalf("always read %d row groups late, want 4", counts.LateGroups)
				}
			}
		})
	}
}

// TestLateMaterializationOnPrunedPages: with the page pruning filters of
// the native reader's test file, reading late changes no row.
func TestLateMaterializationOnPrunedPages(t *testing.T) {
	filters := []string{"i64 >= 70000 AND i64 < 70700", "u32 = 36000", "low = 3", "i32n IS NULL",
		"s >= 'w5'", "f64n > 100 AND sn IS NOT NULL", "low = 1 AND s < 'w2'"}
	columns := []string{"i64", "req", "i32n", "u32", "f64n", "d32", "s", "sn", "low"}
	for _, dict := range []bool{false, true} {
		data := pageIndexFile(t, 20000, dict)
		for _, text := range filters {
			t.Run(fmt.Sprintf("%s/dict=%v", text, dict), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				counts := &scanner.ReadCounts{}
				got, _ := readFiltered(t, data, columns, text, scanner.ReadOptions{LateMaterialization: scanner.LateAlways, BatchRows: 700, Counts: counts}, mem)
				defer got.Release()
				want, _ := readFiltered(t, data, columns, text, scanner.ReadOptions{LateMaterialization: scanner.LateOff, BatchRows: 700}, mem)
				defer want.Release()
				if !array.RecordEqual(got, want) {
					t.Fatalf("late read differs: %d rows, want %d", got.NumRows(), want.NumRows())
				}
				if counts.LateGroups == 0 {
					t.Fatalf("no row group read late")
				}
			})
		}
	}
}

func TestIntersectRowRanges(t *testing.T) {
	cases := []struct{ a, b, want rowRanges }{
		{rowRanges{{0, 10}}, rowRanges{{5, 15}}, rowRanges{{5, 10}}},
		{rowRanges{{0, 10}, {20, 30}}, rowRanges{{5, 25}}, rowRanges{{5, 10}, {20, 25}}},
		{rowRanges{{0, 10}}, rowRanges{{10, 20}}, rowRanges{}},
		{rowRanges{}, rowRanges{{0, 5}}, rowRanges{}},
		{rowRanges{{0, 100}}, rowRanges{{1, 2}, {3, 4}, {50, 200}}, rowRanges{{1, 2}, {3, 4}, {50, 100}}},
	}
	for _, tc := range cases {
		got := intersect(tc.a, tc.b)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("intersect(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestLateReuseMatchesDecodingTwice: the second pass's filter columns
// taken from the first pass's batches equal those decoded again, with
// budgets that take the kept batches and a budget too small for them
// (nothing kept: decoded twice); the budget is all given back.
func TestLateReuseMatchesDecodingTwice(t *testing.T) {
	data := lateFile(t, 40000)
	for _, text := range []string{"cat = 8", "s = 'w12'", "cat = 8 AND v0 > 0.5", "v0 IS NULL AND cat < 3", "cat <= 50"} {
		t.Run(text, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			lateDecodeTwice = true
			want, _ := readFiltered(t, data, lateProjection(), text, scanner.ReadOptions{LateMaterialization: scanner.LateAlways, BatchRows: 700}, mem)
			lateDecodeTwice = false
			defer want.Release()
			for _, budget := range []*capReserver{{cap: 1 << 40}, nil} {
				opts := scanner.ReadOptions{LateMaterialization: scanner.LateAlways, BatchRows: 700}
				if budget != nil {
					opts.Budget = budget
				}
				got, _ := readFiltered(t, data, lateProjection(), text, opts, mem)
				defer got.Release()
				if !array.RecordEqual(got, want) {
					t.Fatalf("reusing: %d rows, decoding twice: %d", got.NumRows(), want.NumRows())
				}
				if budget != nil && budget.Held() != 0 {
					t.Fatalf("%d budget bytes still held", budget.Held())
				}
			}
		})
	}
}

// TestFilterKeptRefusedByBudget: a kept batch the budget cannot take
// gives back what was kept, and the second pass decodes again.
func TestFilterKeptRefusedByBudget(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(make([]int64, 100), nil)
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, 100)
	defer rec.Release()
	budget := &capReserver{cap: 1000}
	k := &filterKept{acct: newAccount(context.Background(), budget)}
	k.keep(0, rec) // 800 bytes: fits
	if !k.usable(rowRanges{{10, 90}}) || budget.Held() == 0 {
		t.Fatalf("first batch not kept: held %d", budget.Held())
	}
	k.keep(100, rec) // does not fit
	if k.usable(rowRanges{{10, 90}}) || budget.Held() != 0 || len(k.batches) != 0 {
		t.Fatalf("refused batch: usable, or %d bytes held", budget.Held())
	}
	k.release()
}

// BenchmarkLateMaterialization reads lateFile late, with the second pass
// reusing the first pass's filter columns and decoding them again:
//
//	go test -run '^$' -bench LateMaterialization -benchmem ./scanner/parquet
func BenchmarkLateMaterialization(b *testing.B) {
	data := lateFile(b, 40000)
	for _, text := range []string{"cat = 8", "s = 'w12'", "cat <= 50", "s >= 'w5'"} {
		for _, twice := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/decode_twice=%v", text, twice), func(b *testing.B) {
				lateDecodeTwice = twice
				defer func() { lateDecodeTwice = false }()
				benchLateRead(b, data, text)
			})
		}
	}
}

// BenchmarkLateWithoutPageIndex: a filtered read of a file without a
// page index, late materialization off, auto and always, with the filter
// applied to what the read emits (as the stream does): auto must never be
// slower than off by more than a few percent.
func BenchmarkLateWithoutPageIndex(b *testing.B) {
	data := lateFileIndexed(b, 40000, false)
	for _, text := range []string{"cat = 8", "s = 'w12'", "cat <= 10", "cat <= 50", "v1 > 0.2"} {
		for _, mode := range []scanner.LateMode{scanner.LateOff, scanner.LateAuto, scanner.LateAlways} {
			b.Run(fmt.Sprintf("%s/%s", text, mode), func(b *testing.B) {
				benchLateMode(b, data, text, mode)
			})
		}
	}
}

// openFiltered opens the file data, projects columns (nil: all) and binds
// the SQL filter text to it, for a benchmark's reads.
func openFiltered(b *testing.B, name string, data []byte, columns []string, text string) (*File, *scanner.Projection, *filter.Predicate) {
	b.Helper()
	f, err := Open(context.Background(), name, newLendingSource(data), memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	if columns == nil {
		for _, fd := range f.Schema().Fields() {
			columns = append(columns, fd.Name)
		}
	}
	p, err := f.Project(columns)
	if err != nil {
		f.Close()
		b.Fatal(err)
	}
	e, err := sql.Parse(text)
	if err != nil {
		f.Close()
		b.Fatal(err)
	}
	pred, err := filter.Bind(e, f.Schema())
	if err != nil {
		f.Close()
		b.Fatal(err)
	}
	return f, p, pred
}

func benchLateRead(b *testing.B, data []byte, text string) {
	benchLateMode(b, data, text, scanner.LateAlways)
}

func benchLateMode(b *testing.B, data []byte, text string, mode scanner.LateMode) {
	f, p, pred := openFiltered(b, "late.parquet", data, lateProjection(), text)
	defer f.Close()
	opts := scanner.ReadOptions{Filter: pred, LateMaterialization: mode, BatchRows: 1000}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		err := f.Read(context.Background(), p, opts, func(r arrow.RecordBatch) error {
			out, err := pred.Filter(context.Background(), r, memory.DefaultAllocator)
			r.Release()
			if err == nil {
				out.Release()
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestLateFirstPassAnnouncedPerColumn: the first pass announces each
// filter column of each row group on its own (see firstRanges), so that
// the IO scheduler never merges two of them across the other columns'
// pages between them; a group too small to read late (under one round
// trip's bytes) is announced whole, once.
func TestLateFirstPassAnnouncedPerColumn(t *testing.T) {
	for _, tc := range []struct {
		roundTrip int64
		want      int
	}{{0, 4 * 2}, {1 << 40, 4}} {
		lists, announced := lateFirstRanges(t, tc.roundTrip)
		if len(lists) != tc.want {
			t.Fatalf("round trip %d: %d announcements, want %d", tc.roundTrip, len(lists), tc.want)
		}
		for i, a := range announced {
			if a != (tc.roundTrip > 0) {
				t.Fatalf("round trip %d: group %d announced whole %v", tc.roundTrip, i, a)
			}
		}
		if tc.roundTrip > 0 {
			continue
		}
		for _, rs := range lists {
			lo, hi := rs[0].Off, rs[len(rs)-1].End()
			if hi-lo > 1<<20 {
				t.Fatalf("one announcement spans [%d, %d): more than one column chunk", lo, hi)
			}
		}
	}
}

// lateFirstRanges is the first pass's announcements of a late read of
// lateFile whose store's round trip is worth roundTrip bytes.
func lateFirstRanges(t *testing.T, roundTrip int64) ([][]scanner.Range, []bool) {
	t.Helper()
	f := openBytes(t, lateFile(t, 40000))
	p, err := f.Project(lateProjection())
	if err != nil {
		t.Fatal(err)
	}
	opts := scanner.ReadOptions{Filter: bindFilter(t, f, "cat = 8 AND v0 > 0.5"), RoundTripBytes: roundTrip}
	impl := p.Impl.(*projection)
	plans, err := f.planRows(nil, impl, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	lr := f.lateRead(p, impl, plans, opts)
	if lr == nil {
		t.Fatal("not read late")
	}
	for i := range plans {
		if lr.eligible(&plans[i]) {
			lr.wholeRows(&plans[i])
		}
	}
	announced := make([]bool, len(plans))
	return lr.firstRanges(plans, announced), announced
}

func TestRunsBetween(t *testing.T) {
	r := func(off, n int64) scanner.Range { return scanner.Range{Off: off, Len: n} }
	cases := []struct {
		name          string
		ranges, avoid []scanner.Range
		want          string
	}{
		{"nothing to avoid", []scanner.Range{r(10, 5), r(0, 5)}, nil, "[[{0 5} {10 5}]]"},
		{"a filter piece between", []scanner.Range{r(0, 5), r(20, 5), r(40, 5)}, []scanner.Range{r(10, 5)}, "[[{0 5}] [{20 5} {40 5}]]"},
		{"avoided ranges elsewhere", []scanner.Range{r(0, 5), r(20, 5)}, []scanner.Range{r(50, 5)}, "[[{0 5} {20 5}]]"},
		{"none", nil, []scanner.Range{r(0, 1)}, "[]"},
	}
	for _, tc := range cases {
		if got := fmt.Sprint(runsBetween(tc.ranges, tc.avoid)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestLateMaterializationWithoutPageIndex: a file without a page index
// (pyarrow's default) is read late from its page headers: the filter
// columns first, the other columns' pages only where rows survive, and
// not fetched at all in a group where none does. Every mode keeps the
// rows a plain read keeps; with late materialization off, nothing is
// skipped.
func TestLateMaterializationWithoutPageIndex(t *testing.T) {
	data := lateFileIndexed(t, 40000, false)
	all := lateProjection()
	cases := []struct {
		name, filter string
		columns      []string
		skips        bool    // pages of the other columns are skipped, in every group (always)
		maxShare     float64 // of the plain read's data bytes, read late
		autoLate     int64   // row groups auto reads late
	}{
		{"one percent", "cat = 8", all, true, 1, 4},
		{"two filter columns", "cat = 8 AND v0 > 0.5", all, true, 1, 4},
		// One row in about 1,000 and 800, scattered: a run of the 21
		// other columns costs more than the rows between two survivors
		// (lateGap), so auto decodes them whole and reads the later
		// groups in one pass.
		{"scattered string", "s = 'w12'", all, false, 1, 1},
		{"nulls", "v0 IS NULL AND cat < 3", all, true, 1, 1},
		{"half survive", "cat <= 50", all, false, 1, 1},
		// One row in a hundred, scattered: auto decodes the other
		// columns whole rather than run by run (lateGap), and reads the
		// later groups in one pass.
		{"scattered densely", "v2 > 0.99", all, false, 1, 1},
		{"no survivor", "cat = 150", all, false, 0.1, 4},
		{"a few columns", "cat = 8", []string{"v3", "cat", "s"}, true, 1, 0}, // under lateMinBytes
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			offCounts := &scanner.ReadCounts{}
			want, plain := readFiltered(t, data, tc.columns, tc.filter, scanner.ReadOptions{LateMaterialization: scanner.LateOff, BatchRows: 1000, Counts: offCounts}, mem)
			defer want.Release()
			if offCounts.LateGroups != 0 || offCounts.PagesSkipped != 0 {
				t.Fatalf("off: %d groups late, %d pages skipped", offCounts.LateGroups, offCounts.PagesSkipped)
			}
			for _, mode := range []scanner.LateMode{scanner.LateAlways, scanner.LateAuto} {
				counts := &scanner.ReadCounts{}
				got, late := readFiltered(t, data, tc.columns, tc.filter, scanner.ReadOptions{LateMaterialization: mode, BatchRows: 1000, Counts: counts}, mem)
				defer got.Release()
				if !array.RecordEqual(got, want) {
					t.Fatalf("%s: %d rows, want %d", mode, got.NumRows(), want.NumRows())
				}
				if late.open.Load() != 0 || plain.open.Load() != 0 {
					t.Fatalf("loans not given back")
				}
				if mode == scanner.LateAlways && counts.LateGroups != 4 {
					t.Fatalf("always: %d row groups read late, want 4", counts.LateGroups)
				}
				if mode == scanner.LateAuto && counts.LateGroups != tc.autoLate {
					t.Fatalf("auto: %d row groups read late, want %d", counts.LateGroups, tc.autoLate)
				}
				if tc.skips && mode == scanner.LateAlways && counts.PagesSkipped < 4*int64(len(tc.columns)-1) {
					t.Fatalf("%s: %d pages skipped", mode, counts.PagesSkipped)
				}
				if share := float64(late.data.Load()) / float64(plain.data.Load()); share > tc.maxShare {
					t.Fatalf("%s: late read %d data bytes, %.2f of the plain read's %d", mode, late.data.Load(), share, plain.data.Load())
				}
			}
		})
	}
}

func TestSpread(t *testing.T) {
	cases := []struct {
		in   rowRanges
		gap  int64
		want rowRanges
	}{
		{rowRanges{}, 64, rowRanges{}},
		{rowRanges{{0, 1}, {10, 11}, {100, 101}}, 64, rowRanges{{0, 11}, {100, 101}}},
		{rowRanges{{0, 1}, {65, 66}}, 64, rowRanges{{0, 1}, {65, 66}}},
		{rowRanges{{0, 1}, {64, 66}}, 64, rowRanges{{0, 66}}},
		{rowRanges{{5, 9}}, 0, rowRanges{{5, 9}}},
	}
	for _, tc := range cases {
		if got := spread(tc.in, tc.gap); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("spread(%v, %d) = %v, want %v", tc.in, tc.gap, got, tc.want)
		}
	}
}

// TestLateSecondPassRuns pins auto's choice, once a group's survivors are
// known, between decoding the other columns run by run and decoding them
// whole (one run): survivors nearer than a run's cost in rows decoded
// (lateGap) are joined. Forced late keeps runs lateMergeRows apart.
func TestLateSecondPassRuns(t *testing.T) {
	fixed := nativeColumn{kind: kindFixed, width: 8}
	bytes := nativeColumn{kind: kindBytes}
	cols := func(nFixed, nBytes int) []nativeColumn {
		var out []nativeColumn
		for range nFixed {
			out = append(out, fixed)
		}
		for range nBytes {
			out = append(out, bytes)
		}
		return out
	}
	// every k rows from row 0, n survivors.
	every := func(k, n int64) rowRanges {
		out := rowRanges{}
		for i := range n {
			out = out.add(i*k, i*k+1)
		}
		return out
	}
	cases := []struct {
		name      string
		mode      scanner.LateMode
		cols      []nativeColumn
		survivors rowRanges
		gap       int64
		runs      int
	}{
		// bench/taxi q3: two fixed-width columns deferred, one survivor
		// in 520 rows: decoded whole, as one run.
		{"q3, two fixed columns", scanner.LateAuto, cols(2, 0), every(520, 575), 2250, 1},
		// q4 and q5: one in 62 and 158.
		{"q4, dense", scanner.LateAuto, cols(2, 0), every(62, 4947), 2250, 1},
		{"q5", scanner.LateAuto, cols(2, 0), every(158, 1897), 2250, 1},
		// q7: nine columns deferred, two of them strings, one survivor
		// in 1,000: run by run.
		{"q7, sparse, strings", scanner.LateAuto, cols(7, 2), every(1000, 309), 652, 309},
		// A run of survivors stays one run, far from the next.
		{"clustered", scanner.LateAuto, cols(3, 0), rowRanges{{100, 200}, {50000, 50100}}, 2000, 2},
		// Forced late: runs 64 rows apart stay apart, whatever they cost.
		{"always", scanner.LateAlways, cols(2, 0), every(520, 575), lateMergeRows, 575},
		{"always, dense", scanner.LateAlways, cols(2, 0), every(62, 100), lateMergeRows, 1},
		// Many string columns: a row costs more than a run's share.
		{"strings only", scanner.LateAuto, cols(0, 20), every(300, 100), 196, 100},
		{"no columns", scanner.LateAuto, nil, every(520, 10), 1500, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gap := mergeGap(tc.mode, tc.cols)
			if gap != tc.gap {
				t.Errorf("gap %d rows, want %d", gap, tc.gap)
			}
			if got := spread(tc.survivors, gap); len(got) != tc.runs {
				t.Errorf("%d runs, want %d", len(got), tc.runs)
			}
		})
	}
}

// TestSelectRows: the survivors of one batch, as positions in it.
func TestSelectRows(t *testing.T) {
	rs := rowRanges{{5, 7}, {10, 20}, {30, 31}}
	cases := []struct {
		start, n int64
		want     rowRanges
		all      bool
	}{
		{0, 5, rowRanges{}, false},
		{0, 40, rowRanges{{5, 7}, {10, 20}, {30, 31}}, false},
		{6, 10, rowRanges{{0, 1}, {4, 10}}, false},
		{10, 10, rowRanges{{0, 10}}, true},
		{12, 3, rowRanges{{0, 3}}, true},
		{19, 12, rowRanges{{0, 1}, {11, 12}}, false},
		{31, 5, rowRanges{}, false},
	}
	for _, tc := range cases {
		got, all := selectRows(rs, tc.start, tc.n)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || all != tc.all {
			t.Errorf("selectRows(%d, %d) = %v, %v; want %v, %v", tc.start, tc.n, got, all, tc.want, tc.all)
		}
	}
}

// TestTakeRows: the survivors' copy agrees with arrow's take kernel, on
// slices (offsets), with and without nulls, for the layouts it copies
// itself and one it leaves to the kernel.
func TestTakeRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 300
	i64 := array.NewInt64Builder(mem)
	str := array.NewStringBuilder(mem)
	boo := array.NewBooleanBuilder(mem)
	dict := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for i := range n {
		if i%7 == 3 {
			i64.AppendNull()
			str.AppendNull()
			boo.AppendNull()
			dict.AppendNull()
			continue
		}
		i64.Append(int64(i * 3))
		str.Append(fmt.Sprintf("s%d", i%50))
		boo.Append(i%3 == 0)
		if err := dict.AppendString(fmt.Sprintf("d%d", i%5)); err != nil {
			t.Fatal(err)
		}
	}
	arrs := []arrow.Array{i64.NewArray(), str.NewArray(), boo.NewArray(), dict.NewArray()}
	for _, b := range []array.Builder{i64, str, boo, dict} {
		b.Release()
	}
	defer releaseArrays(arrs)
	sels := []rowRanges{
		{{0, 1}},
		{{3, 4}, {10, 12}, {100, 190}, {200, 201}},
		{{0, 250}},
	}
	for _, a := range arrs {
		for _, from := range []int64{0, 13} {
			s := array.NewSlice(a, from, from+250)
			for _, sel := range sels {
				got, err := takeRows(s, sel, mem)
				if err != nil {
					t.Fatal(err)
				}
				var parts []arrow.Array
				for _, r := range sel {
					parts = append(parts, array.NewSlice(s, r.start, r.end))
				}
				want, err := array.Concatenate(parts, mem)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got, want) || got.NullN() != want.NullN() {
					t.Errorf("%s from %d, %v: got %v, want %v", a.DataType(), from, sel, got, want)
				}
				releaseArrays(parts)
				got.Release()
				want.Release()
			}
			s.Release()
		}
	}
}

// TestAddTrue: the survivors of a mask are its valid true rows, on
// slices (unaligned bitmaps), with and without nulls.
func TestAddTrue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 2))
	for _, density := range []float64{0, 0.01, 0.5, 0.99, 1} {
		for _, nulls := range []bool{false, true} {
			b := array.NewBooleanBuilder(mem)
			for range 1000 {
				if nulls && r.IntN(10) == 0 {
					b.AppendNull()
					continue
				}
				b.Append(r.Float64() < density)
			}
			a := b.NewBooleanArray()
			b.Release()
			for _, from := range []int64{0, 3, 8} {
				s := array.NewSlice(a, from, 1000).(*array.Boolean)
				want := rowRanges{}
				for i := 0; i < s.Len(); i++ {
					if s.IsValid(i) && s.Value(i) {
						want = want.add(100+int64(i), 101+int64(i))
					}
				}
				if got := addTrue(rowRanges{}, s, 100); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("density %v, nulls %v, from %d: %d ranges, want %d", density, nulls, from, len(got), len(want))
				}
				s.Release()
			}
			a.Release()
		}
	}
}

// TestChunkRuns: runs taken together up to a batch's rows, a longer run
// cut; and survivors mapped to their positions in the runs laid end to
// end.
func TestChunkRuns(t *testing.T) {
	cases := []struct {
		runs rowRanges
		max  int64
		want string
	}{
		{rowRanges{}, 10, "[]"},
		{rowRanges{{0, 3}, {10, 12}, {20, 25}}, 10, "[[{0 3} {10 12} {20 25}]]"},
		{rowRanges{{0, 3}, {10, 12}, {20, 25}}, 5, "[[{0 3} {10 12}] [{20 25}]]"},
		{rowRanges{{0, 3}, {10, 22}}, 5, "[[{0 3} {10 12}] [{12 17}] [{17 22}]]"},
	}
	for _, tc := range cases {
		if got := fmt.Sprint(chunkRuns(tc.runs, tc.max)); got != tc.want {
			t.Errorf("chunkRuns(%v, %d) = %s, want %s", tc.runs, tc.max, got, tc.want)
		}
	}
	runs := rowRanges{{10, 20}, {50, 60}, {100, 101}}
	keep := rowRanges{{12, 13}, {15, 20}, {50, 51}, {59, 60}, {100, 101}}
	if got, want := fmt.Sprint(positionsIn(runs, keep)), "[{2 3} {5 11} {19 21}]"; got != want {
		t.Errorf("positionsIn = %s, want %s", got, want)
	}
}
