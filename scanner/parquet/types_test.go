package parquet

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// storedSchemaFile writes one row of a column of type written, with an
// ARROW:schema that says the column is of type stored (as pyarrow writes
// types Parquet has no annotation for).
func storedSchemaFile(t *testing.T, stored, written arrow.DataType, appendRow func(array.Builder)) []byte {
	ss := arrow.NewSchema([]arrow.Field{{Name: "d", Type: stored, Nullable: true}}, nil)
	ipcSchema := flight.SerializeSchema(ss, memory.DefaultAllocator)
	md := arrow.NewMetadata([]string{"ARROW:schema"}, []string{base64.StdEncoding.EncodeToString(ipcSchema)})
	sc := arrow.NewSchema([]arrow.Field{{Name: "d", Type: written, Nullable: true}}, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	appendRow(b.Field(0))
	rec := b.NewRecordBatch()
	defer rec.Release()
	return writeParquetBytes(t, rec, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
}

// readFirstColumn reads a whole file and returns its schema's first type,
// the type of the batches' first column and its values as text.
func readFirstColumn(t *testing.T, data []byte, native bool) (schemaType, batchType arrow.DataType, values string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	f, err := Open(context.Background(), "t.parquet", newLendingSource(data), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.noNative = !native
	p, err := f.Project(nil)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem}, func(rec arrow.RecordBatch) error {
		batchType = rec.Column(0).DataType()
		values += fmt.Sprint(rec.Column(0))
		rec.Release()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f.Schema().Field(0).Type, batchType, values
}

func TestDurationReads(t *testing.T) {
	for _, unit := range []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond} {
		typ := &arrow.DurationType{Unit: unit}
		data := storedSchemaFile(t, typ, arrow.PrimitiveTypes.Int64, func(b array.Builder) {
			b.(*array.Int64Builder).Append(5)
		})
		for _, native := range []bool{true, false} {
			st, bt, v := readFirstColumn(t, data, native)
			if !arrow.TypeEqual(st, typ) || !arrow.TypeEqual(bt, typ) || v != "[5]" {
				t.Errorf("%s native=%v: schema %s, batch %s %s", typ, native, st, bt, v)
			}
		}
	}
}

// TestInt96WrapsLikePyarrow: an INT96 timestamp past 2262 reads as
// pyarrow 26 reads it: nanoseconds, wrapped around in 64 bits.
func TestInt96WrapsLikePyarrow(t *testing.T) {
	const days = 1<<31 - 1
	v := binary.LittleEndian.AppendUint64(nil, 7)
	v = binary.LittleEndian.AppendUint32(v, days)
	data := bombFile{rows: 1, cols: 1, phys: 3, // INT96
		pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 12, numValues: 1, body: v}}}.build()
	d, perDay := uint64(days-julianUnixEpoch), uint64(86400_000_000_000)
	want := int64(d*perDay + 7) // wraps, as in Arrow C++
	st, bt, got := readFirstColumn(t, data, false)
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
	if !arrow.TypeEqual(st, ns) || !arrow.TypeEqual(bt, ns) || got != fmt.Sprintf("[%d]", want) {
		t.Errorf("schema %s, batch %s %s; want timestamp[ns] [%d]", st, bt, got, want)
	}
}

// TestUnknownLogicalTypeReadsPhysical: a LogicalType union whose member
// (field 30) arrow-go does not know reads as the physical type.
func TestUnknownLogicalTypeReadsPhysical(t *testing.T) {
	leaf := func(w *compactWriter) {
		w.i32(1, 2) // INT64
		w.i32(3, 0)
		w.str(4, "x")
		w.structField(10, func() { w.structField(30, func() {}) })
		w.i32(15, 9) // a field after the dropped one: re-encoded header
	}
	body := binary.LittleEndian.AppendUint64(nil, 42)
	data := bombFile{rows: 1, cols: 1, schema: []func(*compactWriter){nil, leaf},
		pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 8, numValues: 1, body: body}}}.build()
	for _, native := range []bool{true, false} {
		st, _, got := readFirstColumn(t, data, native)
		if st.ID() != arrow.INT64 || got != "[42]" {
			t.Errorf("native=%v: %s %s, want int64 [42]", native, st, got)
		}
	}
}

// The type-matrix corpus files, against pyarrow 26's read of them.
func TestCorpusTypesLikePyarrow(t *testing.T) {
	dir := os.Getenv("SCAND_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	for _, c := range []struct{ file, typ, values string }{
		// pq.read_table(...).column(0).cast(pa.int64())
		{"int96_from_spark.parquet", "timestamp[ns]", "[1704141296123456000 1704070800000000000 -4852191831933722624 1735599600000000000 (null) 5606152519850745856]"},
		{"old_list_structure.parquet", "list<array: list<array: int32>>", "[[[1 2] [3 4]]]"},
	} {
		data, err := os.ReadFile(filepath.Join(dir, "parquet-testing", c.file))
		if err != nil {
			t.Skip(err)
		}
		st, bt, got := readFirstColumn(t, data, false)
		if st.String() != c.typ || bt.String() != c.typ || got != c.values {
			t.Errorf("%s: schema %s, batches %s %s; want %s %s", c.file, st, bt, got, c.typ, c.values)
		}
	}
}
