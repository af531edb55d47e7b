package parquet

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// nativeTypesRecord has a column of each type the native reader learnt
// after the first ones (native_types.go), with and without nulls, plus
// the integer, float and string columns the encodings apply to.
func nativeTypesRecord(rows int) arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "bool", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "boolreq", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "dec9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "dec15", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
		{Name: "dec38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 4}, Nullable: true},
		{Name: "dec50", Type: &arrow.Decimal256Type{Precision: 50, Scale: 5}, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 5}, Nullable: true},
		{Name: "uuid", Type: extensions.NewUUIDType(), Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "sorted", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	r := rand.New(rand.NewPCG(3, 4))
	null := func() bool { return r.IntN(8) == 0 }
	for i := range rows {
		appendOrNull(b.Field(0), null(), func(f array.Builder) { f.(*array.BooleanBuilder).Append(r.IntN(3) == 0) })
		b.Field(1).(*array.BooleanBuilder).Append(i%7 < 3)
		appendOrNull(b.Field(2), null(), func(f array.Builder) {
			f.(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(2e9) - 1e9))
		})
		appendOrNull(b.Field(3), null(), func(f array.Builder) {
			f.(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(2e14) - 1e14))
		})
		appendOrNull(b.Field(4), null(), func(f array.Builder) {
			f.(*array.Decimal128Builder).Append(decimal128.New(r.Int64N(1<<40)-1<<39, r.Uint64()))
		})
		appendOrNull(b.Field(5), null(), func(f array.Builder) {
			f.(*array.Decimal256Builder).Append(decimal256.New(uint64(r.Int64N(1<<20)-1<<19), r.Uint64(), r.Uint64(), r.Uint64()))
		})
		appendOrNull(b.Field(6), null(), func(f array.Builder) {
			f.(*array.Float16Builder).Append(float16.New(float32(i%1000) / 8))
		})
		appendOrNull(b.Field(7), null(), func(f array.Builder) {
			f.(*array.FixedSizeBinaryBuilder).Append([]byte(fmt.Sprintf("%05d", i%100000)))
		})
		appendOrNull(b.Field(8), null(), func(f array.Builder) {
			var u [16]byte
			for j := range u {
				u[j] = byte(r.Uint32())
			}
			f.(*extensions.UUIDBuilder).Append(u)
		})
		appendOrNull(b.Field(9), null(), func(f array.Builder) {
			f.(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i)*1_000_003_000 + 1e18))
		})
		appendOrNull(b.Field(10), null(), func(f array.Builder) { f.(*array.Int32Builder).Append(int32(r.IntN(1 << 20))) })
		b.Field(11).(*array.Int64Builder).Append(int64(i)*1000 + r.Int64N(50))
		appendOrNull(b.Field(12), null(), func(f array.Builder) { f.(*array.Float32Builder).Append(r.Float32()) })
		b.Field(13).(*array.Float64Builder).Append(float64(i) / 3)
		appendOrNull(b.Field(14), null(), func(f array.Builder) {
			f.(*array.StringBuilder).Append(fmt.Sprintf("w%d%s", r.IntN(500), bytes.Repeat([]byte("x"), r.IntN(30))))
		})
		b.Field(15).(*array.StringBuilder).Append(fmt.Sprintf("prefix/shared/key-%08d", i))
	}
	return b.NewRecordBatch()
}

func appendOrNull(b array.Builder, null bool, add func(array.Builder)) {
	if null {
		b.AppendNull()
		return
	}
	add(b)
}

// TestNativeTypesMatchPqarrow extends TestNativeMatchesPqarrow to the
// types and encodings of native_types.go, native_decode.go and friends,
// as arrow-go writes them: each column set must be read natively, and
// equal pqarrow's read.
func TestNativeTypesMatchPqarrow(t *testing.T) {
	const rows = 12000
	rec := nativeTypesRecord(rows)
	defer rec.Release()
	base := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(5000), parquet.WithDataPageSize(8 << 10)}
	with := func(extra ...parquet.WriterProperty) []parquet.WriterProperty {
		return append(append([]parquet.WriterProperty{}, base...), extra...)
	}
	encoded := func(v parquet.DataPageVersion, encs map[string]parquet.Encoding) []parquet.WriterProperty {
		p := with(parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(v), parquet.WithCompression(compress.Codecs.Snappy))
		for col, e := range encs {
			p = append(p, parquet.WithEncodingFor(col, e))
		}
		return p
	}
	delta := map[string]parquet.Encoding{
		"i32": parquet.Encodings.DeltaBinaryPacked, "i64": parquet.Encodings.DeltaBinaryPacked,
		"dec9": parquet.Encodings.DeltaBinaryPacked, "dec15": parquet.Encodings.DeltaBinaryPacked,
		"s": parquet.Encodings.DeltaLengthByteArray, "sorted": parquet.Encodings.DeltaByteArray,
	}
	bss := map[string]parquet.Encoding{
		"f32": parquet.Encodings.ByteStreamSplit, "f64": parquet.Encodings.ByteStreamSplit,
		"i32": parquet.Encodings.ByteStreamSplit, "i64": parquet.Encodings.ByteStreamSplit,
		"f16": parquet.Encodings.ByteStreamSplit, "fsb": parquet.Encodings.ByteStreamSplit,
		"dec38": parquet.Encodings.ByteStreamSplit,
	}
	variants := []struct {
		name  string
		props []parquet.WriterProperty
		arrow []pqarrow.WriterOption
	}{
		{"plain-v1", with(parquet.WithDictionaryDefault(false)), nil},
		{"plain-v2-zstd", with(parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Zstd)), nil},
		{"dictionary-snappy", with(parquet.WithCompression(compress.Codecs.Snappy)), nil},
		{"decimals-as-integers", with(parquet.WithStoreDecimalAsInteger(true)), nil},
		{"int96", with(parquet.WithDictionaryDefault(false)), []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)}},
		{"int96-dictionary", with(), []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)}},
		{"delta-v1", append(encoded(parquet.DataPageV1, delta), parquet.WithStoreDecimalAsInteger(true)), nil},
		{"delta-v2", append(encoded(parquet.DataPageV2, delta), parquet.WithStoreDecimalAsInteger(true)), nil},
		{"bss-v1", encoded(parquet.DataPageV1, bss), nil},
		{"bss-v2", encoded(parquet.DataPageV2, bss), nil},
		{"rle-bool-v2", encoded(parquet.DataPageV2, map[string]parquet.Encoding{"bool": parquet.Encodings.RLE, "boolreq": parquet.Encodings.RLE}), nil},
	}
	for _, v := range variants {
		arrowProps := pqarrow.NewArrowWriterProperties(append(v.arrow, pqarrow.WithStoreSchema())...)
		data := writeParquetBytes(t, rec, parquet.NewWriterProperties(v.props...), arrowProps)
		for _, batchRows := range []int64{1000, 4096} {
			t.Run(fmt.Sprintf("%s/%d", v.name, batchRows), func(t *testing.T) {
				checkNativeEqualsPqarrow(t, data, nil, batchRows, rows, 3)
			})
		}
	}
}

// checkNativeEqualsPqarrow reads cols of data both ways, the native way
// with a checked allocator, and checks that the native path read every row group and
// returned what pqarrow does.
func checkNativeEqualsPqarrow(t *testing.T, data []byte, cols []string, batchRows int64, rows, wantGroups int) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dirtyPool()
	src := newLendingSource(data)
	// pqarrow's own allocator is not checked: arrow-go v18.8.0's delta
	// decoders leave 64 bytes a column chunk allocated.
	want, _, _ := readColumns(t, memSource{bytes.NewReader(data)}, cols, batchRows, false, memory.NewGoAllocator())
	got, sizes, groups := readColumns(t, src, cols, batchRows, true, mem)
	defer releaseAll(want)
	defer releaseAll(got)
	if groups != wantGroups {
		t.Errorf("the native path decoded %d row groups, want all %d", groups, wantGroups)
	}
	for i := range want {
		if !array.Equal(want[i], got[i]) {
			t.Errorf("column %d (%s) differs:\nnative  %v\npqarrow %v", i, want[i].DataType(), got[i], want[i])
		}
		checkZeroUnderNulls(t, got[i])
	}
	total := int64(0)
	for _, n := range sizes {
		total += n
	}
	if total != int64(rows) {
		t.Errorf("%d rows, want %d", total, rows)
	}
	if n := src.open.Load(); n != 0 {
		t.Errorf("%d loans not given back", n)
	}
}

// TestNativeMatchesPyarrowFiles reads the files pyarrow 26 wrote
// (testdata/native/make.py: its defaults, V2 pages with zstd, INT96, and
// every DELTA and BYTE_STREAM_SPLIT encoding it writes) natively, equal
// to pqarrow.
func TestNativeMatchesPyarrowFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/native/*.parquet")
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "flba-delta") })
	if err != nil || len(files) < 4 {
		t.Fatalf("testdata/native: %d files, %v", len(files), err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, batchRows := range []int64{300, 4096} {
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(name), batchRows), func(t *testing.T) {
				checkNativeEqualsPqarrow(t, data, nil, batchRows, 2000, 3)
			})
		}
	}
}

// TestNativeReadsDeltaFixedLenByteArrays: arrow-go v18.8.0 cannot read
// DELTA_BYTE_ARRAY pages of FIXED_LEN_BYTE_ARRAY values (pyarrow writes
// them when asked); the native reader does, equal to the same values
// written PLAIN.
func TestNativeReadsDeltaFixedLenByteArrays(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	read := func(name string) []arrow.Array {
		data, err := os.ReadFile(filepath.Join("testdata/native", name))
		if err != nil {
			t.Fatal(err)
		}
		cols, _, groups := readColumns(t, newLendingSource(data), nil, 500, true, mem)
		if groups != 3 {
			t.Errorf("%s: %d row groups read natively, want 3", name, groups)
		}
		return cols
	}
	got, want := read("flba-delta.parquet"), read("flba-delta.expected")
	defer releaseAll(got)
	defer releaseAll(want)
	if !array.Equal(got[0], want[0]) {
		t.Errorf("DELTA_BYTE_ARRAY column differs from its PLAIN twin:\n%v\n%v", got[0], want[0])
	}
}

// FuzzNativeRead fuzzes whole files through the native reader's new types
// and encodings: seeds of nativeTypesRecord written PLAIN, dictionary,
// DELTA_*, BYTE_STREAM_SPLIT and RLE booleans. Any bytes give batches or
// an error, within the budget, and give all of it back.
func FuzzNativeRead(f *testing.F) {
	rec := nativeTypesRecord(40)
	defer rec.Release()
	encs := func(e parquet.Encoding, cols ...string) []parquet.WriterProperty {
		p := []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithStoreDecimalAsInteger(true)}
		for _, c := range cols {
			p = append(p, parquet.WithEncodingFor(c, e))
		}
		return p
	}
	for _, props := range [][]parquet.WriterProperty{
		{parquet.WithCompression(compress.Codecs.Uncompressed)},
		{parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Uncompressed)},
		encs(parquet.Encodings.DeltaBinaryPacked, "i32", "i64", "dec9", "dec15"),
		encs(parquet.Encodings.DeltaByteArray, "s", "sorted"),
		encs(parquet.Encodings.DeltaLengthByteArray, "s", "sorted"),
		encs(parquet.Encodings.ByteStreamSplit, "f32", "f64", "f16", "fsb", "uuid", "dec38"),
		encs(parquet.Encodings.RLE, "bool", "boolreq"),
	} {
		f.Add(writeParquetBytes(f, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())))
	}
	// Dictionary strings with nulls, in pages of a few rows (gatherDict
	// and spreadEnds across page boundaries).
	strs := stringsRecord(40, true)
	defer strs.Release()
	f.Add(writeParquetBytes(f, strs, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDataPageSize(64)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())))
	// 8- and 16-bit integers with nulls, dictionary, PLAIN and
	// BYTE_STREAM_SPLIT, in pages of a few rows (values spaced out
	// around nulls across page boundaries).
	narrow := narrowIntsRecord(60, 1)
	defer narrow.Release()
	for _, props := range [][]parquet.WriterProperty{
		{parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDataPageSize(64)},
		{parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(64)},
		encs(parquet.Encodings.ByteStreamSplit, "i8", "u8", "i16", "u16"),
	} {
		f.Add(writeParquetBytes(f, narrow, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())))
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
		_ = file.Read(t.Context(), p, scanner.ReadOptions{Mem: memory.NewGoAllocator(), Budget: budget}, func(r arrow.RecordBatch) error {
			r.Release()
			return nil
		})
		if h := budget.Held(); h != 0 {
			t.Errorf("%d bytes of budget held after the read", h)
		}
	})
}

// TestNativeMatchesPqarrowOnCorpus reads every parquet-testing file
// pqarrow reads both ways (the native reader with per-column fallback,
// and pqarrow alone), and checks the batches are equal: the DELTA, BSS,
// decimal, INT96, float16 and boolean files of other writers (parquet-mr,
// Impala, Spark, Rust) included.
func TestNativeMatchesPqarrowOnCorpus(t *testing.T) {
	dir := os.Getenv("SCAND_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "parquet-testing", "*.parquet"))
	if len(files) == 0 {
		t.Skipf("no parquet-testing files under %s (set SCAND_TESTDATA)", dir)
	}
	native := 0
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil || len(data) > 32<<20 {
			continue
		}
		want, ok := readWholeFile(data, false)
		if !ok {
			continue // pqarrow cannot read it: other tests say what scand does
		}
		got, ok := readWholeFile(data, true)
		if !ok {
			t.Errorf("%s: pqarrow reads it, the native path fails", filepath.Base(name))
			continue
		}
		if got.native > 0 {
			native++
		}
		for i := range want.cols {
			// NaN equals NaN here (floating_orders_nan_count, nan_in_stats).
			if !array.ApproxEqual(want.cols[i], got.cols[i], array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
				t.Errorf("%s: column %d differs", filepath.Base(name), i)
			}
		}
		releaseAll(want.cols)
		releaseAll(got.cols)
	}
	t.Logf("%d files read natively (some columns at least)", native)
	if native < 20 {
		t.Errorf("only %d corpus files took the native path", native)
	}
}

type readResult struct {
	cols   []arrow.Array
	native int
}

// readWholeFile reads all of data, concatenating each column, and says whether
// it worked.
func readWholeFile(data []byte, native bool) (res readResult, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	mem := memory.NewGoAllocator()
	f, err := Open(context.Background(), "corpus.parquet", newLendingSource(data), mem)
	if err != nil {
		return res, false
	}
	defer f.Close()
	f.noNative = !native
	p, err := f.Project(nil)
	if err != nil {
		return res, false
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, BatchRows: 1000}, func(r arrow.RecordBatch) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return res, false
	}
	for i := range p.Schema.Fields() {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		if len(parts) == 0 {
			continue
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return res, false
		}
		res.cols = append(res.cols, c)
	}
	res.native = f.nativeGroups
	return res, true
}

// TestNativeNarrowIntsMatchPqarrow: 8- and 16-bit integers, signed and
// not, over their whole range and with nulls, are read natively (as the
// low bytes of their INT32) equal to pqarrow, in PLAIN, dictionary,
// DELTA_BINARY_PACKED and BYTE_STREAM_SPLIT pages.
func TestNativeNarrowIntsMatchPqarrow(t *testing.T) {
	const rows = 6000
	rec := narrowIntsRecord(rows, 9)
	defer rec.Release()
	for name, props := range map[string][]parquet.WriterProperty{
		"plain": {parquet.WithDictionaryDefault(false)},
		"dict":  nil,
		"delta-v2": {parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithEncoding(parquet.Encodings.DeltaBinaryPacked)},
		"bss":            {parquet.WithDictionaryDefault(false), parquet.WithEncoding(parquet.Encodings.ByteStreamSplit)},
		"dict-v2-snappy": {parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Snappy)},
	} {
		t.Run(name, func(t *testing.T) {
			props = append(props, parquet.WithMaxRowGroupLength(2000), parquet.WithDataPageSize(1<<10))
			data := writeParquetBytes(t, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
			for _, batch := range []int64{333, 4096} {
				checkNativeEqualsPqarrow(t, data, nil, batch, rows, 3)
			}
		})
	}
}

// narrowIntsRecord is rows of int8, uint8, int16 and uint16 over their
// whole range, the first and last nullable with some nulls.
func narrowIntsRecord(rows int, seed uint64) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	r := rand.New(rand.NewPCG(seed, seed+1))
	for i := range rows {
		if i%11 == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int8Builder).Append(int8(r.Uint32()))
		}
		b.Field(1).(*array.Uint8Builder).Append(uint8(r.Uint32()))
		b.Field(2).(*array.Int16Builder).Append(int16(r.Uint32()))
		if i%7 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Uint16Builder).Append(uint16(r.Uint32()))
		}
	}
	return b.NewRecordBatch()
}

// BenchmarkNarrowInts reads 8- and 16-bit integer columns (dictionary
// encoded, as pyarrow writes them) natively and through pqarrow, in the
// same run. CPU time, not wall time: the machine may be shared.
//
//	go test ./scanner/parquet -run XXX -bench NarrowInts -benchmem -count 6
func BenchmarkNarrowInts(b *testing.B) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer bld.Release()
	r := rand.New(rand.NewPCG(9, 10))
	const rows = 500_000
	for i := range rows {
		if i%11 == 0 {
			bld.Field(0).AppendNull()
		} else {
			bld.Field(0).(*array.Int8Builder).Append(int8(r.IntN(100)))
		}
		bld.Field(1).(*array.Int16Builder).Append(int16(r.IntN(3000)))
		bld.Field(2).(*array.Uint16Builder).Append(uint16(r.IntN(60000)))
	}
	rec := bld.NewRecordBatch()
	data := writeParquetBytes(b, rec, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	rec.Release()
	for _, native := range []bool{true, false} {
		b.Run(fmt.Sprintf("native=%v", native), func(b *testing.B) {
			b.SetBytes(rows * 5)
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				benchRead(b, data, native)
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
