package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage"
)

// lendingSource is a memSource that lends its bytes (scanner.Lender),
// counting the loans not yet given back.
type lendingSource struct {
	memSource
	data        []byte
	loans, open atomic.Int64
	refuse      bool // lend nothing, as a scheduler short of memory
}

func newLendingSource(data []byte) *lendingSource {
	return &lendingSource{memSource: memSource{bytes.NewReader(data)}, data: data}
}

func (s *lendingSource) Borrow(off, n int64) ([]byte, func(), bool, error) {
	if s.refuse {
		return nil, nil, false, nil
	}
	s.loans.Add(1)
	s.open.Add(1)
	var once sync.Once
	return s.data[off : off+n : off+n], func() { once.Do(func() { s.open.Add(-1) }) }, true, nil
}

var _ scanner.Lender = (*lendingSource)(nil)

// nativeTestRecord has a column of every type the native path reads,
// with and without nulls, and one it leaves to pqarrow (ls, a
// large_string, when the Arrow schema is stored).
func nativeTestRecord(rows int) arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "req", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i32n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64n", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "sn", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "low", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	r := rand.New(rand.NewPCG(1, 2))
	null := func(i int) bool { return i%97 == 3 || r.IntN(10) == 0 }
	word := func() string { return fmt.Sprintf("w%d-%s", r.IntN(1000), string(make([]byte, r.IntN(40)))) }
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i) * 7)
		b.Field(1).(*array.Int64Builder).Append(-int64(i))
		if null(i) {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int32Builder).Append(int32(i))
		}
		b.Field(3).(*array.Uint32Builder).Append(uint32(i) * 3)
		b.Field(4).(*array.Float32Builder).Append(float32(i) / 3)
		if null(i) {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Float64Builder).Append(float64(i) / 7)
		}
		b.Field(6).(*array.Date32Builder).Append(arrow.Date32(i))
		b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1000))
		b.Field(8).(*array.StringBuilder).Append(word())
		if null(i) {
			b.Field(9).AppendNull()
		} else {
			b.Field(9).(*array.StringBuilder).Append(word())
		}
		b.Field(10).(*array.BinaryBuilder).Append([]byte(word()))
		b.Field(11).(*array.Int16Builder).Append(int16(i))
		b.Field(12).(*array.Int64Builder).Append(int64(i % 5))
		if null(i) {
			b.Field(13).AppendNull()
		} else {
			b.Field(13).(*array.LargeStringBuilder).Append(word())
		}
	}
	return b.NewRecordBatch()
}

// readColumns reads columns of src through a fresh File, with or without
// the native path, and returns each column concatenated, the batch sizes,
// and how many row groups the native path decoded.
func readColumns(t *testing.T, src scanner.Source, columns []string, batchRows int64, native bool, mem memory.Allocator) (cols []arrow.Array, sizes []int64, nativeGroups int) {
	t.Helper()
	f, err := Open(context.Background(), "test.parquet", src, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.noNative = !native
	p, err := f.Project(columns)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, BatchRows: batchRows}, func(rec arrow.RecordBatch) error {
		if !rec.Schema().Equal(p.Schema) {
			t.Errorf("batch schema %s differs from the projection's %s", rec.Schema(), p.Schema)
		}
		recs = append(recs, rec)
		sizes = append(sizes, rec.NumRows())
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
	out := make([]arrow.Array, len(p.Schema.Fields()))
	for i := range out {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		if len(parts) == 0 {
			continue
		}
		out[i], err = array.Concatenate(parts, mem)
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, sizes, f.nativeGroups
}

func TestNativeMatchesPqarrow(t *testing.T) {
	const rows = 20000
	rec := nativeTestRecord(rows)
	defer rec.Release()
	type variant struct {
		name  string
		props []parquet.WriterProperty
	}
	var variants []variant
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, c := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd} {
			variants = append(variants, variant{
				name: fmt.Sprintf("v%d-%s", v+1, c),
				props: []parquet.WriterProperty{parquet.WithDataPageVersion(v), parquet.WithCompression(c),
					parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(8 << 10), parquet.WithMaxRowGroupLength(7000)},
			})
		}
	}
	variants = append(variants,
		variant{name: "dictionary", props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(7000)}},
		variant{name: "dictionary-v2-snappy", props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(7000),
			parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(8 << 10)}},
		// Dictionaries that fill up: the writer goes on in PLAIN pages.
		variant{name: "dictionary-overflow", props: []parquet.WriterProperty{parquet.WithDictionaryPageSizeLimit(4 << 10),
			parquet.WithDataPageSize(4 << 10), parquet.WithCompression(compress.Codecs.Zstd)}},
		variant{name: "big-pages", props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}},
	)
	columnSets := [][]string{
		nil, // all: pqarrow reads ls beside the native columns
		{"i64", "req", "i32n", "u32", "f32", "f64n", "d32", "ts", "s", "sn", "b"},
		{"f64n", "i64"},
		{"sn"},
		{"low", "i64"},
	}
	for _, v := range variants {
		data := writeParquetBytes(t, rec, parquet.NewWriterProperties(v.props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		for _, cols := range columnSets {
			for _, batchRows := range []int64{1000, 4096, 65536} {
				t.Run(fmt.Sprintf("%s/%d-cols/%d", v.name, len(cols), batchRows), func(t *testing.T) {
					var mem memory.Allocator = memory.DefaultAllocator
					if batchRows == 4096 {
						// Go's allocator: the reader's copies come from a
						// pool that does not clear; fill it with garbage.
						dirtyPool()
					} else {
						checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer checked.AssertSize(t, 0)
						mem = checked
					}
					src := newLendingSource(data)
					want, _, _ := readColumns(t, memSource{bytes.NewReader(data)}, cols, batchRows, false, mem)
					got, sizes, groups := readColumns(t, src, cols, batchRows, true, mem)
					defer releaseAll(want)
					defer releaseAll(got)
					for i := range want {
						if !array.Equal(want[i], got[i]) {
							t.Errorf("column %d differs:\nnative  %v\npqarrow %v", i, got[i], want[i])
						}
						if groups > 0 {
							// (pqarrow leaves this scan's values there)
							checkZeroUnderNulls(t, got[i])
						}
					}
					total := int64(0)
					for _, n := range sizes {
						if n > batchRows {
							t.Errorf("batch of %d rows, asked for at most %d", n, batchRows)
						}
						total += n
					}
					if total != rows {
						t.Errorf("%d rows, want %d", total, rows)
					}
					if n := src.open.Load(); n != 0 {
						t.Errorf("%d loans not given back", n)
					}
					// pqarrow reads ls, the rest natively
					// (native_mixed.go).
					if groups == 0 {
						t.Errorf("native path decoded no row group")
					}
				})
			}
		}
	}
}

// checkZeroUnderNulls checks that a fixed-width array's values under its
// null slots are zero: reused memory must not show another scan's data.
func checkZeroUnderNulls(t *testing.T, a arrow.Array) {
	t.Helper()
	fw, ok := a.DataType().(arrow.FixedWidthDataType)
	if !ok || a.NullN() == 0 {
		return
	}
	w := fw.BitWidth() / 8
	vals := a.Data().Buffers()[1].Bytes()
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			for _, b := range vals[(a.Data().Offset()+i)*w : (a.Data().Offset()+i+1)*w] {
				if b != 0 {
					t.Fatalf("%s: value under null slot %d is not zero", a.DataType(), i)
				}
			}
		}
	}
}

// dirtyPool puts garbage-filled buffers of many sizes into pageBuffers.
func dirtyPool() {
	var bufs [][]byte
	for size := poolMinBytes; size <= 4<<20; size *= 2 {
		for range 4 {
			b := pageBuffers.Allocate(size)
			for i := range b {
				b[i] = 0xa5
			}
			bufs = append(bufs, b)
		}
	}
	for _, b := range bufs {
		pageBuffers.Free(b)
	}
}

func releaseAll(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// TestNativeReferencesLentBytes checks the zero-copy property: a batch of
// an uncompressed column without nulls points into the lent bytes, and
// holds the loan until it is released.
func TestNativeReferencesLentBytes(t *testing.T) {
	rec := nativeTestRecord(5000)
	defer rec.Release()
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false)), pqarrow.NewArrowWriterProperties())
	src := newLendingSource(data)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, err := Open(context.Background(), "test.parquet", src, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project([]string{"i64", "f32"})
	if err != nil {
		t.Fatal(err)
	}
	var held []arrow.RecordBatch
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, BatchRows: 1 << 20}, func(rec arrow.RecordBatch) error {
		held = append(held, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 {
		t.Fatalf("%d batches, want 1", len(held))
	}
	lo := uintptr(unsafe.Pointer(&data[0]))
	hi := lo + uintptr(len(data))
	for i, c := range held[0].Columns() {
		b := c.Data().Buffers()[1].Bytes()
		at := uintptr(unsafe.Pointer(&b[0]))
		if at < lo || at >= hi {
			t.Errorf("column %d was copied; want it to point into the file's bytes", i)
		}
	}
	if src.open.Load() == 0 {
		t.Error("loans given back while a batch still points into them")
	}
	held[0].Release()
	if n := src.open.Load(); n != 0 {
		t.Errorf("%d loans not given back after the batch was released", n)
	}
}

// BenchmarkNative decodes files like bench/sendpath's (uncompressed,
// PLAIN): 8 int64 columns, or 3 string columns of 20-200 bytes; and, as
// pyarrow writes by default (dictionary, Snappy), 4 int64 and 4 string
// columns of 1,000 distinct values each.
func BenchmarkNative(b *testing.B) {
	const rows = 200_000
	for _, kind := range []string{"wide", "strings", "dictionary"} {
		mem := memory.NewGoAllocator()
		var fields []arrow.Field
		n := 8
		if kind == "strings" {
			n = 3
		}
		isString := func(c int) bool { return kind == "strings" || (kind == "dictionary" && c%2 == 1) }
		for i := range n {
			typ := arrow.DataType(arrow.PrimitiveTypes.Int64)
			if isString(i) {
				typ = arrow.BinaryTypes.String
			}
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: typ, Nullable: true})
		}
		rb := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
		r := rand.New(rand.NewPCG(1, 2))
		for i := range rows {
			for c := range n {
				switch {
				case kind == "dictionary" && isString(c):
					rb.Field(c).(*array.StringBuilder).Append(fmt.Sprintf("value %d of a column", r.IntN(1000)))
				case kind == "dictionary":
					rb.Field(c).(*array.Int64Builder).Append(r.Int64N(1000) << 20)
				case isString(c):
					rb.Field(c).(*array.StringBuilder).Append(string(bytes.Repeat([]byte("word "), 4+r.IntN(36))))
				default:
					rb.Field(c).(*array.Int64Builder).Append(int64(i * c))
				}
			}
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Uncompressed))
		if kind == "dictionary" {
			props = parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
		}
		data := writeParquetBytes(b, rec, props, pqarrow.NewArrowWriterProperties())
		rec.Release()
		for _, native := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/native=%v", kind, native), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					f, err := Open(context.Background(), "bench.parquet", memSource{bytes.NewReader(data)}, memory.DefaultAllocator)
					if err != nil {
						b.Fatal(err)
					}
					f.noNative = !native
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

// TestNativeLeavesGroupsToPqarrowWhenNotLent: when the scheduler will not
// lend (memory short), a copy of each chunk would sit outside its budget,
// so pqarrow streams the row group instead; the result is the same.
func TestNativeLeavesGroupsToPqarrowWhenNotLent(t *testing.T) {
	rec := nativeTestRecord(3000)
	defer rec.Release()
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(1000)), pqarrow.NewArrowWriterProperties())
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cols := []string{"i64", "s"}
	want, _, groups := readColumns(t, newLendingSource(data), cols, 4096, true, mem)
	defer releaseAll(want)
	if groups != 3 {
		t.Fatalf("lent: native path decoded %d row groups, want 3", groups)
	}
	src := newLendingSource(data)
	src.refuse = true
	got, _, groups := readColumns(t, src, cols, 4096, true, mem)
	defer releaseAll(got)
	if groups != 0 {
		t.Errorf("not lent: native path decoded %d row groups, want 0", groups)
	}
	for i := range want {
		if !array.Equal(want[i], got[i]) {
			t.Errorf("column %d differs", i)
		}
	}
}

// TestNativeCorruptPageGivesLoansBack: a string page whose length prefix
// runs past the page, found after batches of the row group went out, is a
// corrupt-data error, and every loan comes back once those batches are
// released.
func TestNativeCorruptPageGivesLoansBack(t *testing.T) {
	rec := nativeTestRecord(5000)
	defer rec.Release()
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(8<<10)), pqarrow.NewArrowWriterProperties())
	// Find the second data page of column "s" and break its first length.
	f, err := Open(context.Background(), "test.parquet", memSource{bytes.NewReader(data)}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	leaf := f.pf.MetaData().Schema.ColumnIndexByName("s")
	cc, err := f.pf.MetaData().RowGroup(0).ColumnChunk(leaf)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	broken := slices.Clone(data)
	pos := int(cc.DataPageOffset())
	h, n, err := parsePageHeader(broken[pos:])
	if err != nil || h.typ != pageTypeDataPage {
		t.Fatalf("first page: type %d, %v; want a v1 data page", h.typ, err)
	}
	pos += n + int(h.compressedSize)
	if h, n, err = parsePageHeader(broken[pos:]); err != nil {
		t.Fatal(err)
	}
	body := pos + n // definition levels (4-byte length, RLE), then the values
	levels := int(binary.LittleEndian.Uint32(broken[body:]))
	binary.LittleEndian.PutUint32(broken[body+4+levels:], 0x7fff0000)

	src := newLendingSource(broken)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, err = Open(context.Background(), "test.parquet", src, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project([]string{"i64", "s"})
	if err != nil {
		t.Fatal(err)
	}
	var held []arrow.RecordBatch
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, BatchRows: 100}, func(rec arrow.RecordBatch) error {
		held = append(held, rec)
		return nil
	})
	if !errors.Is(err, scanner.ErrCorrupt) {
		t.Errorf("Read = %v, want a corrupt-data error", err)
	}
	if len(held) == 0 {
		t.Error("no batch before the broken page; the test means to break a later page")
	}
	for _, r := range held {
		r.Release()
	}
	if n := src.open.Load(); n != 0 {
		t.Errorf("%d loans not given back", n)
	}
}

// mappedSource stands for a memory-mapped file (storage.Capabilities.Mapped).
type mappedSource struct{ memSource }

func (mappedSource) Capabilities() storage.Capabilities { return storage.Capabilities{Mapped: true} }

// TestNativeWorkBytesCountMappedChunks: the native reader copies a mapped
// file's chunks out and holds a row group's worth while it decodes it, so
// the decode estimate the server admits streams by counts them; lent
// chunks are in the IO budget already and do not.
func TestNativeWorkBytesCountMappedChunks(t *testing.T) {
	rec := nativeTestRecord(3000)
	defer rec.Release()
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	work := func(src scanner.Source, cols []string) (work, stored int64) {
		f, err := Open(context.Background(), "test.parquet", src, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		p, err := f.Project(cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range p.Groups {
			work += g.WorkBytes
			stored += g.Bytes
		}
		return work, stored
	}
	native := []string{"i64", "s"}
	lent, stored := work(newLendingSource(data), native)
	mapped, _ := work(mappedSource{memSource{bytes.NewReader(data)}}, native)
	if mapped != lent+stored {
		t.Errorf("mapped file: work %d, want the lent estimate %d plus the chunks' %d bytes", mapped, lent, stored)
	}
	// ls is pqarrow's: it streams the chunks, mapped or not.
	lent, _ = work(newLendingSource(data), []string{"ls"})
	mapped, _ = work(mappedSource{memSource{bytes.NewReader(data)}}, []string{"ls"})
	if mapped != lent {
		t.Errorf("pqarrow projection: mapped work %d, lent %d; want the same", mapped, lent)
	}
}
