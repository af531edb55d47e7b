package parquet

import (
	"fmt"
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

// mixedRecord has native columns (a list, a struct of a float and an
// int16, an int16) beside one only pqarrow reads: a large_string.
func mixedRecord(t testing.TB, rows int) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "pt", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			arrow.Field{Name: "d", Type: arrow.PrimitiveTypes.Int16, Nullable: true}), Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "big", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	}, nil)
	var js strings.Builder
	js.WriteString("[")
	for i := range rows {
		if i > 0 {
			js.WriteString(",")
		}
		tags := fmt.Sprintf("[%d, %d]", i, -i)
		if i%5 == 0 {
			tags = "null"
		}
		fmt.Fprintf(&js, `{"id": %d, "tags": %s, "flag": %v, "pt": {"x": %d.5, "d": %d}, "small": %d, "name": "n%d", "big": "b%d"}`,
			i, tags, i%3 == 0, i, i%1000, i%300, i%17, i%23)
	}
	js.WriteString("]")
	rec, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(js.String()))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestNativeMixedColumns: with columns only pqarrow reads in the request,
// the others are still read natively (every row group), and the batches
// equal pqarrow's, with nothing left allocated or lent.
func TestNativeMixedColumns(t *testing.T) {
	const rows = 6000
	rec := mixedRecord(t, rows)
	defer rec.Release()
	for _, props := range [][]parquet.WriterProperty{
		{parquet.WithMaxRowGroupLength(2000), parquet.WithDataPageSize(4 << 10)},
		{parquet.WithMaxRowGroupLength(2000), parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2)},
	} {
		data := writeParquetBytes(t, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		for _, cols := range [][]string{nil, {"tags", "id"}, {"pt", "flag", "small", "big"}, {"pt.x", "name"}} {
			for _, batchRows := range []int64{700, 4096} {
				t.Run(fmt.Sprintf("%v/%d", cols, batchRows), func(t *testing.T) {
					checkNativeEqualsPqarrow(t, data, cols, batchRows, rows, 3)
				})
			}
		}
	}
}

// TestPagePruningWithPqarrowColumns: when the page index skips rows of a
// row group and a column is pqarrow's (ls), pqarrow's reader is moved
// past the skipped rows (seekPQ), so its rows stay beside the native ones.
func TestPagePruningWithPqarrowColumns(t *testing.T) {
	columns := []string{"i64", "i16", "ls", "s", "low"}
	for _, dict := range []bool{false, true} {
		data := pageIndexFile(t, 20000, dict)
		for _, text := range []string{"i64 >= 70000 AND i64 < 70700", "i64 < 350 OR i64 > 139500", "low = 3"} {
			t.Run(fmt.Sprintf("dict=%v/%s", dict, text), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				counts := &scanner.ReadCounts{}
				got, pruned := readFiltered(t, data, columns, text, scanner.ReadOptions{Counts: counts, BatchRows: 1000}, mem)
				defer got.Release()
				want, _ := readFiltered(t, data, columns, text, scanner.ReadOptions{MaxIndexBytes: -1, BatchRows: 1000}, mem)
				defer want.Release()
				if !array.RecordEqual(got, want) {
					t.Fatalf("page-pruned read with a pqarrow column differs: %d rows, want %d", got.NumRows(), want.NumRows())
				}
				if pruned.open.Load() != 0 {
					t.Fatal("loans not given back")
				}
				if text != "low = 3" && counts.PagesSkipped == 0 {
					t.Fatal("no page skipped: the test means to skip rows")
				}
			})
		}
	}
}

// TestPagePruningNewTypes: page-index row skipping over the columns of
// native_types.go (booleans, decimals, INT96, fixed-size binary) and the
// encodings of native_decode.go gives the rows a full read keeps.
func TestPagePruningNewTypes(t *testing.T) {
	rec := nativeTypesRecord(20000)
	defer rec.Release()
	for name, props := range map[string][]parquet.WriterProperty{
		"plain": {parquet.WithDictionaryDefault(false)},
		"dict":  nil,
		"delta": {parquet.WithDictionaryDefault(false), parquet.WithEncodingFor("i32", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("s", parquet.Encodings.DeltaLengthByteArray), parquet.WithEncodingFor("sorted", parquet.Encodings.DeltaByteArray),
			parquet.WithEncodingFor("f64", parquet.Encodings.ByteStreamSplit), parquet.WithEncodingFor("bool", parquet.Encodings.RLE),
			parquet.WithDataPageVersion(parquet.DataPageV2)},
	} {
		props = append(props, parquet.WithPageIndexEnabled(true), parquet.WithDataPageSize(2<<10), parquet.WithBatchSize(256), parquet.WithMaxRowGroupLength(8000))
		data := writeParquetBytes(t, rec, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithDeprecatedInt96Timestamps(true)))
		for _, text := range []string{"i64 >= 7000000 AND i64 < 7300000", "i64 < 350000 OR i64 > 19500000"} {
			t.Run(name+"/"+text, func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				counts := &scanner.ReadCounts{}
				got, _ := readFiltered(t, data, nil, text, scanner.ReadOptions{Counts: counts, BatchRows: 1000}, mem)
				defer got.Release()
				want, _ := readFiltered(t, data, nil, text, scanner.ReadOptions{MaxIndexBytes: -1, BatchRows: 1000}, mem)
				defer want.Release()
				if !array.RecordEqual(got, want) {
					t.Fatalf("page-pruned read differs: %d rows, want %d", got.NumRows(), want.NumRows())
				}
				if counts.PagesSkipped == 0 {
					t.Fatal("no page skipped")
				}
			})
		}
	}
}
