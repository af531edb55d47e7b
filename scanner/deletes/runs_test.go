package deletes

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// applyByFilter is Apply as it was before runs.go: a mask of the kept
// rows through compute's Filter. The tests hold Apply to its output.
func applyByFilter(ctx context.Context, rec arrow.RecordBatch, firstRow int64, rows *Rows, mem memory.Allocator) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	deleted := deletedIn(rows, firstRow, n)
	switch {
	case len(deleted) == 0:
		rec.Retain()
		return rec, nil
	case int64(len(deleted)) == n:
		return rec.NewSlice(0, 0), nil
	}
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.Reserve(int(n))
	next := 0
	for i := int64(0); i < n; i++ {
		del := next < len(deleted) && deleted[next] == i
		if del {
			next++
		}
		b.UnsafeAppend(!del)
	}
	mask := b.NewBooleanArray()
	defer mask.Release()
	return compute.FilterRecordBatch(exec.WithAllocator(ctx, mem), rec, mask, compute.DefaultFilterOptions())
}

// column is a test column: its type and the JSON of its row i (null
// every seventh row where nulls is set).
type column struct {
	name  string
	dt    arrow.DataType
	value func(i int) string
	nulls bool
}

var testColumns = []column{
	{"int64", arrow.PrimitiveTypes.Int64, func(i int) string { return fmt.Sprint(i * 3) }, true},
	{"int32", arrow.PrimitiveTypes.Int32, func(i int) string { return fmt.Sprint(-i) }, false},
	{"int8", arrow.PrimitiveTypes.Int8, func(i int) string { return fmt.Sprint(i % 100) }, true},
	{"uint16", arrow.PrimitiveTypes.Uint16, func(i int) string { return fmt.Sprint(i) }, false},
	{"float64", arrow.PrimitiveTypes.Float64, func(i int) string { return fmt.Sprint(float64(i) / 4) }, true},
	{"float32", arrow.PrimitiveTypes.Float32, func(i int) string { return fmt.Sprint(float32(i) * 1.5) }, false},
	{"bool", arrow.FixedWidthTypes.Boolean, func(i int) string { return fmt.Sprint(i%3 == 0) }, true},
	{"bool no nulls", arrow.FixedWidthTypes.Boolean, func(i int) string { return fmt.Sprint(i%5 < 2) }, false},
	{"date32", arrow.FixedWidthTypes.Date32, func(i int) string { return fmt.Sprintf("%q", fmt.Sprintf("2024-01-%02d", i%28+1)) }, true},
	{"timestamp", arrow.FixedWidthTypes.Timestamp_us, func(i int) string { return fmt.Sprint(int64(i) * 1e6) }, true},
	{"decimal128", &arrow.Decimal128Type{Precision: 10, Scale: 2}, func(i int) string { return fmt.Sprintf("%q", fmt.Sprintf("%d.%02d", i, i%100)) }, true},
	{"fixed size binary", &arrow.FixedSizeBinaryType{ByteWidth: 3}, func(i int) string { return fmt.Sprintf("%q", "YWJj") }, true},
	{"string", arrow.BinaryTypes.String, func(i int) string { return fmt.Sprintf("%q", strings.Repeat("s", i%13)+fmt.Sprint(i)) }, true},
	{"string no nulls", arrow.BinaryTypes.String, func(i int) string { return fmt.Sprintf("%q", fmt.Sprint("v", i)) }, false},
	{"empty strings", arrow.BinaryTypes.String, func(i int) string { return `""` }, false},
	{"binary", arrow.BinaryTypes.Binary, func(i int) string { return fmt.Sprintf("%q", "AQID") }, true},
	{"large string", arrow.BinaryTypes.LargeString, func(i int) string { return fmt.Sprintf("%q", strings.Repeat("L", i%5)) }, true},
	{"large binary", arrow.BinaryTypes.LargeBinary, func(i int) string { return fmt.Sprintf("%q", "AAEC") }, false},
	{"struct", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}),
		func(i int) string {
			if i%4 == 1 {
				return fmt.Sprintf(`{"a": null, "b": "x%d"}`, i)
			}
			return fmt.Sprintf(`{"a": %d, "b": null}`, i)
		}, true},
	{"list", arrow.ListOf(arrow.PrimitiveTypes.Int64), func(i int) string {
		parts := make([]string, i%4)
		for k := range parts {
			parts[k] = fmt.Sprint(i*10 + k)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}, true},
	{"large list of strings", arrow.LargeListOf(arrow.BinaryTypes.String), func(i int) string {
		if i%6 == 0 {
			return "[]"
		}
		return fmt.Sprintf(`["a%d", null, "c"]`, i)
	}, true},
	{"fixed size list", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), func(i int) string { return fmt.Sprintf("[%d, %d]", i, -i) }, true},
	{"list of structs", arrow.ListOf(arrow.StructOf(arrow.Field{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true})), func(i int) string {
		return fmt.Sprintf(`[{"k": "k%d"}, {"k": null}]`, i)
	}, true},
	{"map", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), func(i int) string {
		return fmt.Sprintf(`[{"key": "m%d", "value": %d}]`, i%3, i)
	}, true},
	{"uuid (a fixed-width extension)", extensions.NewUUIDType(), func(i int) string { return fmt.Sprintf(`"00000000-0000-0000-0000-%012d"`, i) }, true},
	{"null", arrow.Null, func(i int) string { return "null" }, false},
}

// testBatch has a column of every test type (and a dictionary column)
// over rows [from, from+n).
func testBatch(t *testing.T, mem memory.Allocator, from, n int) arrow.RecordBatch {
	t.Helper()
	var fields []arrow.Field
	var cols []arrow.Array
	for _, c := range testColumns {
		vals := make([]string, n)
		for i := range vals {
			if c.nulls && (from+i)%7 == 2 {
				vals[i] = "null"
			} else {
				vals[i] = c.value(from + i)
			}
		}
		a, _, err := array.FromJSON(mem, c.dt, strings.NewReader("["+strings.Join(vals, ",")+"]"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		fields = append(fields, arrow.Field{Name: c.name, Type: c.dt, Nullable: true})
		cols = append(cols, a)
	}
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	db := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
	for i := range n {
		if (from+i)%7 == 3 {
			db.AppendNull()
		} else if err := db.AppendString(fmt.Sprint("d", (from+i)%4)); err != nil {
			t.Fatal(err)
		}
	}
	fields = append(fields, arrow.Field{Name: "dictionary", Type: dt, Nullable: true})
	cols = append(cols, db.NewArray())
	db.Release()
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func TestApplyMatchesFilter(t *testing.T) {
	const n = 300
	patterns := map[string][]uint64{
		"none":              nil,
		"all":               seq(0, n),
		"first":             {0},
		"last":              {n - 1},
		"both edges":        {0, 1, n - 2, n - 1},
		"every tenth":       stride(3, n, 10),
		"every other":       stride(0, n, 2),
		"a long run":        seq(50, 150),
		"all but one":       append(seq(0, 137), seq(138, n)...),
		"all but the edges": seq(1, n-1),
		"past the batch":    {n + 5, n + 1000},
		"runs of 70 kept":   stride(0, n, 71),
	}
	// Each batch as decoded (offset 0) and as a slice of a larger one: a
	// slice's buffers start before its rows.
	shapes := []struct {
		name  string
		slice bool
	}{{"whole", false}, {"slice", true}}
	for _, shape := range shapes {
		for name, positions := range patterns {
			t.Run(shape.name+"/"+name, func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				var rec arrow.RecordBatch
				if shape.slice {
					big := testBatch(t, mem, 0, n+40)
					rec = big.NewSlice(17, 17+n)
					big.Release()
				} else {
					rec = testBatch(t, mem, 17, n)
				}
				defer rec.Release()
				// The batch starts at file row 1000.
				bm := roaring64.New()
				for _, p := range positions {
					bm.Add(p + 1000)
				}
				rows := &Rows{Bitmap: bm}
				want, err := applyByFilter(ctx, rec, 1000, rows, mem)
				if err != nil {
					t.Fatal(err)
				}
				defer want.Release()
				got, err := Apply(ctx, rec, 1000, rows, mem)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				if got.NumRows() != want.NumRows() {
					t.Fatalf("%d rows, want %d", got.NumRows(), want.NumRows())
				}
				for i := range int(want.NumCols()) {
					g, w := got.Column(i), want.Column(i)
					if !array.Equal(g, w) {
						t.Errorf("column %s:\n got %v\nwant %v", want.ColumnName(i), g, w)
					}
					if g.NullN() != w.NullN() {
						t.Errorf("column %s: %d nulls, want %d", want.ColumnName(i), g.NullN(), w.NullN())
					}
					if v, ok := g.(interface{ ValidateFull() error }); ok {
						if err := v.ValidateFull(); err != nil {
							t.Errorf("column %s: %v", want.ColumnName(i), err)
						}
					}
				}
			})
		}
	}
}

// TestTakeRunsCopiesTestColumns: every test column's layout is copied by
// takeRuns, so that TestApplyMatchesFilter tests the copy, not the
// fallback.
func TestTakeRunsCopiesTestColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testBatch(t, mem, 0, 20)
	defer rec.Release()
	for i, c := range rec.Columns() {
		d, ok := takeRuns(c.Data(), []run{{1, 4}, {9, 20}}, 14, mem)
		if !ok {
			t.Errorf("column %s: not copied", rec.ColumnName(i))
			continue
		}
		d.Release()
	}
}

// TestApplyUncopiedLayout: a layout runs.go does not copy
// (an extension type) goes through compute's Filter, the columns beside
// it still copied.
func TestApplyUncopiedLayout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	ut, err := extensions.NewJSONType(arrow.BinaryTypes.String)
	if err != nil {
		t.Fatal(err)
	}
	docs, _, err := array.FromJSON(mem, ut, strings.NewReader(`["1", null, "{\"a\": 3}", "[4]", "\"five\""]`))
	if err != nil {
		t.Fatal(err)
	}
	defer docs.Release()
	if d, ok := takeRuns(docs.Data(), []run{{0, 1}}, 1, mem); ok {
		d.Release()
		t.Fatal("takeRuns copied an extension type: pick another layout for this test")
	}
	ints, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader(`[1, 2, 3, null, 5]`))
	if err != nil {
		t.Fatal(err)
	}
	defer ints.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "u", Type: ut, Nullable: true}, {Name: "i", Type: ints.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{docs, ints}, 5)
	defer rec.Release()
	rows := &Rows{Bitmap: roaring64.BitmapOf(1, 3)}
	want, err := applyByFilter(ctx, rec, 0, rows, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	got, err := Apply(ctx, rec, 0, rows, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if !array.RecordEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func stride(from, to, step uint64) []uint64 {
	var out []uint64
	for v := from; v < to; v += step {
		out = append(out, v)
	}
	return out
}

// benchBatch is a batch shaped like issue #28's table (ids, timestamps,
// a short and a long string, an int, a float) of n rows.
func benchBatch(mem memory.Allocator, from, n int) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(mem, sc)
	defer bld.Release()
	for i := from; i < from+n; i++ {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		bld.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(i * 1000))
		bld.Field(2).(*array.StringBuilder).Append(fmt.Sprint("cat-", i%20))
		bld.Field(3).(*array.Int32Builder).Append(int32(i % 100))
		bld.Field(4).(*array.Float64Builder).Append(float64(i) / 3)
		bld.Field(5).(*array.StringBuilder).Append(fmt.Sprintf("a note of some length about row %d", i))
	}
	return bld.NewRecordBatch()
}

// BenchmarkApply compares Apply with the Filter it replaced on a batch of
// 10,000 rows (a row group of issue #28's table), 10 % deleted.
func BenchmarkApply(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n = 10000
	rec := benchBatch(mem, 0, n)
	defer rec.Release()
	for _, pattern := range []struct {
		name string
		pos  []uint64
	}{{"every tenth", stride(3, n, 10)}, {"one run of 10 %", seq(4000, 5000)}} {
		rows := &Rows{Bitmap: roaring64.BitmapOf(pattern.pos...)}
		for _, impl := range []struct {
			name  string
			apply func(context.Context, arrow.RecordBatch, int64, *Rows, memory.Allocator) (arrow.RecordBatch, error)
		}{{"filter (old)", applyByFilter}, {"runs (new)", Apply}} {
			b.Run(pattern.name+"/"+impl.name, func(b *testing.B) {
				ctx := context.Background()
				b.SetBytes(benchBytes(rec))
				for b.Loop() {
					out, err := impl.apply(ctx, rec, 0, rows, mem)
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
			})
		}
	}
}

// BenchmarkGather compares, for three such batches with every tenth row
// deleted that a stream gathers into one message, the Filter of each then
// their concatenation (before) with one Take of the three (now).
func BenchmarkGather(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n = 10000
	var recs []arrow.RecordBatch
	var bytes int64
	for k := range 3 {
		r := benchBatch(mem, k*n, n)
		defer r.Release()
		recs = append(recs, r)
		bytes += benchBytes(r)
	}
	rows := &Rows{Bitmap: roaring64.BitmapOf(stride(3, 3*n, 10)...)}
	ctx := context.Background()
	b.Run("filter, concatenate (old)", func(b *testing.B) {
		b.SetBytes(bytes)
		for b.Loop() {
			var parts []arrow.RecordBatch
			for k, r := range recs {
				out, err := applyByFilter(ctx, r, int64(k*n), rows, mem)
				if err != nil {
					b.Fatal(err)
				}
				parts = append(parts, out)
			}
			cols := make([]arrow.Array, len(parts))
			for i := range int(parts[0].NumCols()) {
				for k, p := range parts {
					cols[k] = p.Column(i)
				}
				c, err := array.Concatenate(cols, mem)
				if err != nil {
					b.Fatal(err)
				}
				c.Release()
			}
			for _, p := range parts {
				p.Release()
			}
		}
	})
	b.Run("take (new)", func(b *testing.B) {
		b.SetBytes(bytes)
		for b.Loop() {
			var parts []Part
			for k, r := range recs {
				p, err := Select(r, []Span{{int64(k * n), n}}, rows)
				if err != nil {
					b.Fatal(err)
				}
				parts = append(parts, p)
			}
			out, err := Take(ctx, parts, mem)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
}

// benchBytes is the bytes of rec's buffers.
func benchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
	}
	return n
}

// TestApplySpans: a batch of several spans of the file is the
// concatenation of each span's rows with its own deletes.
func TestApplySpans(t *testing.T) {
	cases := map[string]struct {
		spans   []Span
		deleted []uint64
	}{
		"one span":                 {[]Span{{100, 50}}, []uint64{100, 120, 149}},
		"a gap between":            {[]Span{{0, 20}, {60, 30}}, []uint64{0, 19, 20, 59, 60, 89}},
		"gap rows are not deleted": {[]Span{{0, 20}, {60, 30}}, seq(20, 60)},
		"kept across the join":     {[]Span{{0, 20}, {60, 30}}, []uint64{5, 70}},
		"all of the first span":    {[]Span{{10, 10}, {40, 10}}, seq(10, 20)},
		"an empty span":            {[]Span{{10, 10}, {30, 0}, {40, 10}}, []uint64{12, 41}},
		"everything":               {[]Span{{10, 10}, {40, 10}}, append(seq(10, 20), seq(40, 50)...)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			var n int64
			for _, s := range c.spans {
				n += s.Rows
			}
			rec := testBatch(t, mem, 0, int(n))
			defer rec.Release()
			rows := &Rows{Bitmap: roaring64.BitmapOf(c.deleted...)}
			got, err := ApplySpans(ctx, rec, c.spans, rows, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			var parts []arrow.RecordBatch
			at := int64(0)
			for _, s := range c.spans {
				piece := rec.NewSlice(at, at+s.Rows)
				p, err := applyByFilter(ctx, piece, s.FirstRow, rows, mem)
				piece.Release()
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, p)
				at += s.Rows
			}
			tbl := array.NewTableFromRecords(rec.Schema(), parts)
			defer tbl.Release()
			for _, p := range parts {
				p.Release()
			}
			if got.NumRows() != tbl.NumRows() {
				t.Fatalf("%d rows, want %d", got.NumRows(), tbl.NumRows())
			}
			for i := range int(got.NumCols()) {
				want, err := array.Concatenate(tbl.Column(i).Data().Chunks(), mem)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got.Column(i), want) {
					t.Errorf("column %s:\n got %v\nwant %v", got.ColumnName(i), got.Column(i), want)
				}
				want.Release()
			}
		})
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testBatch(t, mem, 0, 10)
	defer rec.Release()
	if _, err := ApplySpans(context.Background(), rec, []Span{{0, 4}, {10, 5}}, &Rows{Bitmap: roaring64.BitmapOf(1)}, mem); err == nil {
		t.Error("spans of 9 rows for a batch of 10: no error")
	}
}

// TestTakeParts: the kept rows of several batches copied into one batch
// are those of each batch's own Apply, concatenated. The batches'
// dictionary columns have dictionaries of their own (compute's Filter and
// Concatenate take them); their other columns are copied.
func TestTakeParts(t *testing.T) {
	cases := map[string][][]uint64{ // deleted rows of each part
		"every tenth":       {stride(3, 50, 10), stride(3, 70, 10), stride(3, 20, 10)},
		"a part all gone":   {{1}, seq(0, 70), {0, 19}},
		"a part untouched":  {nil, {69}, nil},
		"only the edges":    {{0, 49}, {0, 69}, {0, 19}},
		"all but one row":   {seq(1, 50), seq(0, 70), seq(0, 20)},
		"long runs removed": {seq(5, 45), seq(10, 60), seq(2, 3)},
	}
	sizes := []int{50, 70, 20}
	for name, deleted := range cases {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			var parts []Part
			var want []arrow.RecordBatch
			from := 0
			for k, n := range sizes {
				big := testBatch(t, mem, from, n+5)
				rec := big.NewSlice(5, int64(n+5)) // a slice: offsets differ by part
				big.Release()
				defer rec.Release()
				rows := &Rows{Bitmap: roaring64.BitmapOf(deleted[k]...)}
				p, err := Select(rec, []Span{{0, int64(n)}}, rows)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, p)
				w, err := applyByFilter(ctx, rec, 0, rows, mem)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Release()
				want = append(want, w)
				from += n
			}
			got, err := Take(ctx, parts, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			var rows int64
			for _, w := range want {
				rows += w.NumRows()
			}
			if got.NumRows() != rows {
				t.Fatalf("%d rows, want %d", got.NumRows(), rows)
			}
			for i := range int(got.NumCols()) {
				cols := make([]arrow.Array, len(want))
				for k, w := range want {
					cols[k] = w.Column(i)
				}
				w, err := array.Concatenate(cols, mem)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got.Column(i), w) {
					t.Errorf("column %s:\n got %v\nwant %v", got.ColumnName(i), got.Column(i), w)
				}
				if got.Column(i).NullN() != w.NullN() {
					t.Errorf("column %s: %d nulls, want %d", got.ColumnName(i), got.Column(i).NullN(), w.NullN())
				}
				w.Release()
			}
		})
	}
}
