package parquet

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// structRecord has struct columns of flat leaves with random nulls at
// every depth: a nullable struct of nullable and required leaves and a
// nested struct, a required struct, and a struct three deep.
func structRecord(t testing.TB, rows int, seed uint64) arrow.RecordBatch {
	inner := arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "c", Type: inner, Nullable: true},
			arrow.Field{Name: "d", Type: arrow.PrimitiveTypes.Int64})},
		{Name: "r", Type: arrow.StructOf(
			arrow.Field{Name: "p", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "q", Type: arrow.BinaryTypes.String})},
		{Name: "deep", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "l1", Nullable: true, Type: arrow.StructOf(
				arrow.Field{Name: "l2", Nullable: true, Type: arrow.StructOf(
					arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int32, Nullable: true}),
				})})},
	}, nil)
	rnd := rand.New(rand.NewPCG(seed, 7))
	null := func(p float64) bool { return rnd.Float64() < p }
	orNull := func(p float64, s string) string {
		if null(p) {
			return "null"
		}
		return s
	}
	var js strings.Builder
	js.WriteString("[")
	for i := range rows {
		if i > 0 {
			js.WriteString(",")
		}
		c := orNull(0.2, fmt.Sprintf(`{"x": %s, "y": %s}`, orNull(0.3, fmt.Sprintf("%d.25", i)), orNull(0.3, fmt.Sprint(i%3 == 0))))
		s := orNull(0.15, fmt.Sprintf(`{"a": %s, "b": %s, "c": %s, "d": %d}`,
			orNull(0.25, fmt.Sprint(i%1000)), orNull(0.25, fmt.Sprintf(`"s%d"`, i%37)), c, i))
		r := fmt.Sprintf(`{"p": %s, "q": "q%d"}`, orNull(0.5, fmt.Sprint(i)), i%11)
		deep := orNull(0.1, fmt.Sprintf(`{"l1": %s}`, orNull(0.1, fmt.Sprintf(`{"l2": %s}`,
			orNull(0.1, fmt.Sprintf(`{"v": %s}`, orNull(0.1, fmt.Sprint(i))))))))
		fmt.Fprintf(&js, `{"id": %d, "s": %s, "r": %s, "deep": %s}`, i, s, r, deep)
	}
	js.WriteString("]")
	rec, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(js.String()))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// nestedWriterVariants are the ways the nested tests write their files:
// plain and dictionary, v1 and v2 pages, compressed or not, small pages
// and several row groups.
func nestedWriterVariants() map[string][]parquet.WriterProperty {
	base := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1500), parquet.WithDataPageSize(1 << 10)}
	with := func(extra ...parquet.WriterProperty) []parquet.WriterProperty {
		return append(append([]parquet.WriterProperty{}, base...), extra...)
	}
	return map[string][]parquet.WriterProperty{
		"plain-v1":       with(parquet.WithDictionaryDefault(false)),
		"plain-v2-zstd":  with(parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Zstd)),
		"dict-v1-snappy": with(parquet.WithCompression(compress.Codecs.Snappy)),
		"dict-v2":        with(parquet.WithDataPageVersion(parquet.DataPageV2)),
		"delta-v2": with(parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithEncodingFor("s.a", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("s.b", parquet.Encodings.DeltaByteArray)),
	}
}

// TestNativeStructsMatchPqarrow: struct columns are decoded natively
// (planned so, and every row group read natively) and equal pqarrow's,
// whole or with some of their fields, beside flat columns.
func TestNativeStructsMatchPqarrow(t *testing.T) {
	const rows = 4000
	rec := structRecord(t, rows, 1)
	defer rec.Release()
	for name, props := range nestedWriterVariants() {
		data := writeParquetBytes(t, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		for _, cols := range [][]string{nil, {"s"}, {"deep", "id"}, {"s.c", "r.q"}, {"s.c.y", "s.b"}, {"deep.l1.l2.v"}} {
			for _, batchRows := range []int64{333, 4096} {
				t.Run(fmt.Sprintf("%s/%v/%d", name, cols, batchRows), func(t *testing.T) {
					checkNestedNative(t, data, cols)
					checkNativeEqualsPqarrow(t, data, cols, batchRows, rows, 3)
				})
			}
		}
	}
}

// checkNestedNative fails unless every nested output column of cols is
// planned native.
func checkNestedNative(t *testing.T, data []byte, cols []string) {
	t.Helper()
	f, err := Open(context.Background(), "test.parquet", memSource{bytes.NewReader(data)}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project(cols)
	if err != nil {
		t.Fatal(err)
	}
	impl := p.Impl.(*projection)
	if impl.native == nil {
		t.Fatalf("no column planned native")
	}
	for i, c := range impl.native {
		if c.leaf < 0 {
			t.Errorf("column %s left to pqarrow", p.Schema.Field(i).Name)
		}
	}
}

// TestNativeStructsWithPageIndex: a filter whose page index selects row
// ranges reads struct columns natively over those rows, equal to
// pqarrow's filtered read.
func TestNativeStructsWithPageIndex(t *testing.T) {
	const rows = 4000
	rec := structRecord(t, rows, 2)
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2000), parquet.WithDataPageSize(512),
		parquet.WithDictionaryDefault(false), parquet.WithPageIndexEnabled(true))
	data := writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	for _, text := range []string{"id >= 700 AND id < 950", "id < 30 OR id > 3900"} {
		t.Run(text, func(t *testing.T) {
			checkFilteredEqual(t, data, []string{"s", "id", "deep"}, text)
		})
	}
}

// checkFilteredEqual reads columns of data under filter text with the
// page index (skipping rows) and without it, and checks they agree and
// that rows were skipped.
func checkFilteredEqual(t *testing.T, data []byte, columns []string, text string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	counts := &scanner.ReadCounts{}
	got, src := readFiltered(t, data, columns, text, scanner.ReadOptions{Counts: counts, BatchRows: 100}, mem)
	defer got.Release()
	want, _ := readFiltered(t, data, columns, text, scanner.ReadOptions{MaxIndexBytes: -1, BatchRows: 100}, mem)
	defer want.Release()
	if !array.RecordEqual(got, want) {
		t.Fatalf("page-pruned read differs: %d rows, want %d", got.NumRows(), want.NumRows())
	}
	if counts.PagesSkipped == 0 {
		t.Fatal("no page skipped: the test means to skip rows")
	}
	if src.open.Load() != 0 {
		t.Fatal("loans not given back")
	}
}

// listRecord has list columns of flat leaves with empty lists, null lists
// and null elements: lists of ints, of strings and of booleans, a list of
// lists, and lists inside structs (one of them the struct's first field).
func listRecord(t testing.TB, rows int, seed uint64) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "ls", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		{Name: "ll", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), Nullable: true},
		{Name: "sl", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true})},
		{Name: "fl", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "flags", Type: arrow.ListOf(arrow.FixedWidthTypes.Boolean), Nullable: true},
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true})},
	}, nil)
	rnd := rand.New(rand.NewPCG(seed, 11))
	null := func(p float64) bool { return rnd.Float64() < p }
	orNull := func(p float64, s string) string {
		if null(p) {
			return "null"
		}
		return s
	}
	list := func(maxLen int, elem func(j int) string) string {
		var b strings.Builder
		b.WriteString("[")
		for j := range rnd.IntN(maxLen + 1) {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(elem(j))
		}
		b.WriteString("]")
		return b.String()
	}
	var js strings.Builder
	js.WriteString("[")
	for i := range rows {
		if i > 0 {
			js.WriteString(",")
		}
		l := orNull(0.15, list(12, func(j int) string { return orNull(0.2, fmt.Sprint(i*10+j)) }))
		ls := list(6, func(j int) string { return orNull(0.1, fmt.Sprintf(`"e%d"`, (i+j)%23)) })
		ll := orNull(0.1, list(4, func(int) string {
			return orNull(0.2, list(5, func(j int) string { return orNull(0.1, fmt.Sprint(i-j)) }))
		}))
		sl := orNull(0.1, fmt.Sprintf(`{"name": %s, "tags": %s}`, orNull(0.2, fmt.Sprintf(`"n%d"`, i%9)),
			orNull(0.2, list(5, func(j int) string { return orNull(0.2, fmt.Sprint(j)) }))))
		fl := orNull(0.1, fmt.Sprintf(`{"flags": %s, "x": %s}`,
			orNull(0.2, list(9, func(j int) string { return orNull(0.2, fmt.Sprint((i+j)%3 == 0)) })), orNull(0.2, fmt.Sprint(i))))
		fmt.Fprintf(&js, `{"id": %d, "l": %s, "ls": %s, "ll": %s, "sl": %s, "fl": %s}`, i, l, ls, ll, sl, fl)
	}
	js.WriteString("]")
	rec, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(js.String()))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestNativeListsMatchPqarrow: list columns (lists of leaves, of lists,
// inside structs) are decoded natively, whole or pruned, and equal
// pqarrow's, with pages small enough that rows span them.
func TestNativeListsMatchPqarrow(t *testing.T) {
	const rows = 3000
	rec := listRecord(t, rows, 3)
	defer rec.Release()
	for name, props := range nestedWriterVariants() {
		props = append(props, parquet.WithBatchSize(7))
		data := writeParquetBytes(t, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		for _, cols := range [][]string{nil, {"l"}, {"ll", "id"}, {"sl.tags", "ls"}, {"fl"}, {"fl.x", "sl"}} {
			for _, batchRows := range []int64{250, 4096} {
				t.Run(fmt.Sprintf("%s/%v/%d", name, cols, batchRows), func(t *testing.T) {
					checkNestedNative(t, data, cols)
					checkNativeEqualsPqarrow(t, data, cols, batchRows, rows, 2)
				})
			}
		}
	}
}

// TestNativeListPagesSpanRows: the files the list tests write with v1
// pages have pages that start inside a row, so that rows spanning pages
// are tested (v2 pages start at rows, as the format requires).
func TestNativeListPagesSpanRows(t *testing.T) {
	rec := listRecord(t, 3000, 3)
	defer rec.Release()
	props := append(nestedWriterVariants()["plain-v1"], parquet.WithBatchSize(7))
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	f, err := Open(t.Context(), "lists.parquet", newLendingSource(data), memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project(nil)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := f.openGroup(&groupPlan{g: 0}, p.Impl.(*projection).native, &account{})
	if gr != nil {
		defer gr.release()
	}
	if err != nil {
		t.Fatal(err)
	}
	inside := 0
	for _, c := range gr.cols {
		for i := range c.pages {
			if !c.col.repeated {
				continue
			}
			if err := c.load(&c.pages[i]); err != nil {
				t.Fatal(err)
			}
			if pg := &c.pages[i]; pg.levels > 0 && pg.reps[0] != 0 {
				inside++
			}
		}
	}
	if inside == 0 {
		t.Fatal("no page starts inside a row")
	}
}

// mapRecord has maps and lists of structs: a map of strings to ints, a
// list of structs of leaves, a list of structs holding a list, and a
// list of maps, with nulls and empty ones at every depth.
func mapRecord(t testing.TB, rows int, seed uint64) arrow.RecordBatch {
	ab := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})
	xys := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: "ys", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true})
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "lst", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: ab, Nullable: true}), Nullable: true},
		{Name: "lsl", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: xys, Nullable: true}), Nullable: true},
		{Name: "lm", Type: arrow.ListOf(arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String)), Nullable: true},
	}, nil)
	rnd := rand.New(rand.NewPCG(seed, 13))
	orNull := func(p float64, s string) string {
		if rnd.Float64() < p {
			return "null"
		}
		return s
	}
	seq := func(open, close string, maxLen int, elem func(j int) string) string {
		var b strings.Builder
		b.WriteString(open)
		for j := range rnd.IntN(maxLen + 1) {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(elem(j))
		}
		b.WriteString(close)
		return b.String()
	}
	mapOf := func(maxLen int, key, val func(j int) string) string {
		return seq("[", "]", maxLen, func(j int) string { return fmt.Sprintf(`{"key": %s, "value": %s}`, key(j), val(j)) })
	}
	var js strings.Builder
	js.WriteString("[")
	for i := range rows {
		if i > 0 {
			js.WriteString(",")
		}
		m := orNull(0.1, mapOf(6, func(j int) string { return fmt.Sprintf(`"k%d"`, j) }, func(j int) string { return orNull(0.2, fmt.Sprint(i+j)) }))
		lst := orNull(0.1, seq("[", "]", 5, func(j int) string {
			return orNull(0.2, fmt.Sprintf(`{"a": %s, "b": %s}`, orNull(0.2, fmt.Sprint(i*j)), orNull(0.2, fmt.Sprintf(`"b%d"`, j))))
		}))
		lsl := orNull(0.1, seq("[", "]", 4, func(j int) string {
			return orNull(0.2, fmt.Sprintf(`{"x": %d, "ys": %s}`, j, orNull(0.2, seq("[", "]", 4, func(k int) string { return fmt.Sprint(i + j + k) }))))
		}))
		lm := orNull(0.1, seq("[", "]", 3, func(j int) string {
			return orNull(0.2, mapOf(3, func(k int) string { return fmt.Sprint(k) }, func(k int) string { return orNull(0.3, fmt.Sprintf(`"v%d"`, i+k)) }))
		}))
		fmt.Fprintf(&js, `{"id": %d, "m": %s, "lst": %s, "lsl": %s, "lm": %s}`, i, m, lst, lsl, lm)
	}
	js.WriteString("]")
	rec, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(js.String()))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestNativeMapsMatchPqarrow: maps, lists of structs, lists of structs of
// lists and lists of maps are decoded natively and equal pqarrow's.
func TestNativeMapsMatchPqarrow(t *testing.T) {
	const rows = 3000
	rec := mapRecord(t, rows, 5)
	defer rec.Release()
	for name, props := range nestedWriterVariants() {
		props = append(props, parquet.WithBatchSize(7))
		data := writeParquetBytes(t, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		for _, cols := range [][]string{nil, {"m"}, {"lst", "id"}, {"lsl"}, {"lm"}, {"lst.b"}} {
			for _, batchRows := range []int64{250, 4096} {
				t.Run(fmt.Sprintf("%s/%v/%d", name, cols, batchRows), func(t *testing.T) {
					checkNestedNative(t, data, cols)
					checkNativeEqualsPqarrow(t, data, cols, batchRows, rows, 2)
				})
			}
		}
	}
}

// TestNativeListsWithRowRanges: a read the page index or a limit cuts into
// row ranges reads list and map columns through pqarrow, per column
// (demoteRepeated), beside native ones, and returns the rows a read
// without the index does.
func TestNativeListsWithRowRanges(t *testing.T) {
	for name, rec := range map[string]arrow.RecordBatch{"lists": listRecord(t, 4000, 4), "maps": mapRecord(t, 4000, 6)} {
		defer rec.Release()
		props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2000), parquet.WithDataPageSize(512),
			parquet.WithDictionaryDefault(false), parquet.WithPageIndexEnabled(true))
		data := writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		for _, text := range []string{"id >= 700 AND id < 950", "id < 30 OR id > 3900"} {
			t.Run(name+"/"+text, func(t *testing.T) {
				checkFilteredEqual(t, data, nil, text)
			})
		}
		// Every column, and only nested ones (all of them then pqarrow's
		// in the row group the limit cuts).
		for _, cols := range [][]string{nil, {"l", "ll", "sl"}, {"m", "lm"}} {
			t.Run(fmt.Sprintf("%s/limit/%v", name, cols), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				f, err := Open(t.Context(), "x.parquet", newLendingSource(data), mem)
				if err != nil {
					t.Fatal(err)
				}
				p, err := f.Project(cols)
				f.Close()
				if err != nil || len(p.Missing) > 0 {
					t.Skip("not this record's columns")
				}
				got := readLimited(t, data, cols, 2500, mem)
				defer got.Release()
				want, _ := readFiltered(t, data, cols, "", scanner.ReadOptions{MaxIndexBytes: -1, BatchRows: 100}, mem)
				defer want.Release()
				wantHead := want.NewSlice(0, 2500)
				defer wantHead.Release()
				if !array.RecordEqual(got, wantHead) {
					t.Fatalf("limited read differs: %d rows, want %d", got.NumRows(), wantHead.NumRows())
				}
			})
		}
	}
}

// readLimited reads the first limit rows of data natively, as one record.
func readLimited(t *testing.T, data []byte, columns []string, limit int64, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	f, err := Open(t.Context(), "limit.parquet", newLendingSource(data), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project(columns)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	err = f.Read(t.Context(), p, scanner.ReadOptions{Mem: mem, BatchRows: 300, Limit: limit}, func(r arrow.RecordBatch) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	cols := make([]arrow.Array, p.Schema.NumFields())
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		if cols[i], err = array.Concatenate(parts, mem); err != nil {
			t.Fatal(err)
		}
		defer cols[i].Release()
	}
	whole := array.NewRecordBatch(p.Schema, cols, int64(cols[0].Len()))
	defer whole.Release()
	return whole.NewSlice(0, min(limit, whole.NumRows()))
}

// FuzzNativeNested reads mutations of files with struct, list and map
// columns (v1 pages that split rows, v2 pages, dictionary and plain).
// Any bytes give batches or an error, within the budget, and give all of
// it back.
func FuzzNativeNested(f *testing.F) {
	for _, mk := range []func(testing.TB, int, uint64) arrow.RecordBatch{structRecord, listRecord, mapRecord} {
		rec := mk(f, 60, 1)
		for _, props := range [][]parquet.WriterProperty{
			{parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDataPageSize(256), parquet.WithBatchSize(5)},
			{parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Uncompressed)},
		} {
			f.Add(writeParquetBytes(f, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())))
		}
		rec.Release()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Open(t.Context(), "fuzz.parquet", newLendingSource(data), memory.NewGoAllocator())
		if err != nil {
			return
		}
		defer file.Close()
		p, err := file.Project(nil)
		if err != nil {
			return
		}
		budget := &capReserver{cap: 64 << 20}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		_ = file.Read(t.Context(), p, scanner.ReadOptions{Mem: mem, Budget: budget, BatchRows: 17}, func(r arrow.RecordBatch) error {
			r.Release()
			return nil
		})
		if h := budget.Held(); h != 0 {
			t.Errorf("%d bytes of budget held after the read", h)
		}
	})
}

// FuzzDecodeLevels: any bytes decode to levels or an error, never above
// the maximum; at bit width 1 they agree with the flat decoder
// (walkLevels), which is the reference for that width.
func FuzzDecodeLevels(f *testing.F) {
	f.Add([]byte{0x10, 0x01, 0x03, 0xff}, uint8(1), uint16(12))
	f.Add([]byte{0x03, 0x88, 0xc6, 0xfa}, uint8(3), uint16(8))
	f.Add([]byte{0x08, 0x02, 0x05, 0x1b, 0x00}, uint8(2), uint16(9))
	f.Add([]byte{0x04, 0xff, 0x7f}, uint8(16), uint16(2))
	f.Fuzz(func(t *testing.T, b []byte, width uint8, n uint16) {
		bw := int(width%16) + 1
		maxLevel := int16(1<<bw - 1)
		if bw == 16 {
			maxLevel = 1<<15 - 1
		}
		dst := make([]int16, int(n)%4096)
		err := decodeLevels(b, bw, maxLevel, dst)
		if err != nil {
			return
		}
		for i, v := range dst {
			if v < 0 || v > maxLevel {
				t.Fatalf("level %d is %d, above %d", i, v, maxLevel)
			}
		}
		if bw != 1 {
			return
		}
		valid := make([]byte, (len(dst)+7)/8)
		nulls, err := decodeValidity(b, len(dst), valid, 0)
		if err != nil {
			t.Fatalf("decodeLevels read %d levels that walkLevels rejects: %v", len(dst), err)
		}
		want := 0
		for i, v := range dst {
			if v == 0 {
				want++
			}
			if (valid[i/8]>>(i%8))&1 != byte(v) {
				t.Fatalf("level %d: %d, the flat decoder says %d", i, v, (valid[i/8]>>(i%8))&1)
			}
		}
		if nulls != want {
			t.Fatalf("%d nulls, the flat decoder says %d", want, nulls)
		}
	})
}

// TestNativeNestedMutations runs FuzzNativeNested's check over seeded
// random mutations of its seeds (bytes overwritten in the pages), which
// go test -fuzz reaches slowly on files of this size.
func TestNativeNestedMutations(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 9))
	for _, mk := range []func(testing.TB, int, uint64) arrow.RecordBatch{structRecord, listRecord, mapRecord} {
		rec := mk(t, 200, 2)
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDataPageSize(256), parquet.WithBatchSize(5))
		seed := writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		rec.Release()
		for range 300 {
			data := bytes.Clone(seed)
			for range 1 + rnd.IntN(4) {
				// Pages lie between the magic and the footer.
				data[4+rnd.IntN(len(data)*3/4)] = byte(rnd.Uint32())
			}
			file, err := Open(t.Context(), "mutated.parquet", newLendingSource(data), memory.NewGoAllocator())
			if err != nil {
				continue
			}
			p, err := file.Project(nil)
			if err != nil {
				file.Close()
				continue
			}
			budget := &capReserver{cap: 64 << 20}
			_ = file.Read(t.Context(), p, scanner.ReadOptions{Mem: memory.NewGoAllocator(), Budget: budget, BatchRows: 17}, func(r arrow.RecordBatch) error {
				r.Release()
				return nil
			})
			file.Close()
			if h := budget.Held(); h != 0 {
				t.Fatalf("%d bytes of budget held after the read", h)
			}
		}
	}
}

// BenchmarkNativeNested reads files of struct, list and map columns (and
// an int64 id) three ways: nested columns decoded natively, nested
// columns through pqarrow per column beside the native id (as before
// native_nested.go), and the whole file through pqarrow.
//
//	go test -run XXX -bench NativeNested -benchmem -count 10 ./scanner/parquet
func BenchmarkNativeNested(b *testing.B) {
	const rows = 20000
	for name, mk := range map[string]func(testing.TB, int, uint64) arrow.RecordBatch{"structs": structRecord, "lists": listRecord, "maps": mapRecord} {
		rec := mk(b, rows, 1)
		data := writeParquetBytes(b, rec, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.NewArrowWriterProperties())
		rec.Release()
		for _, mode := range []string{"native", "nested-pqarrow", "pqarrow"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				defer func(v bool) { nativeNested = v }(nativeNested)
				nativeNested = mode == "native"
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				cpu0 := cpuTime()
				defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
				for b.Loop() {
					f, err := Open(context.Background(), "bench.parquet", newLendingSource(data), memory.DefaultAllocator)
					if err != nil {
						b.Fatal(err)
					}
					f.noNative = mode == "pqarrow"
					p, _ := f.Project(nil)
					err = f.Read(context.Background(), p, scanner.ReadOptions{}, func(rec arrow.RecordBatch) error {
						rec.Release()
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
			})
		}
	}
}

// TestDemoteRepeated: in row-ranged reads, exactly the nested columns
// holding lists or maps go to pqarrow; structs of flat leaves and flat
// columns stay native.
func TestDemoteRepeated(t *testing.T) {
	rec := listRecord(t, 100, 1)
	defer rec.Release()
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	f, err := Open(t.Context(), "lists.parquet", newLendingSource(data), memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project([]string{"id", "l", "sl.name", "sl"})
	if err != nil {
		t.Fatal(err)
	}
	impl := p.Impl.(*projection)
	cols := demoteRepeated(impl, impl.native)
	for i, want := range []bool{true, false, false} { // id, l, sl (with its list)
		if native := cols[i].leaf >= 0; native != want {
			t.Errorf("column %s: native %v, want %v", p.Schema.Field(i).Name, native, want)
		}
	}
	if impl.native[1].leaf < 0 {
		t.Error("demoteRepeated changed the projection's plan")
	}
	p2, err := f.Project([]string{"sl.name"})
	if err != nil {
		t.Fatal(err)
	}
	impl2 := p2.Impl.(*projection)
	if c := demoteRepeated(impl2, impl2.native); c[0].leaf < 0 {
		t.Error("a struct of a flat leaf was demoted")
	}
}
