package parquet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// lineitemRecord is TPC-H lineitem's shape as the throughput benchmark has it:
// prices as decimal(15,2), plus one boolean.
func lineitemRecord(rows int) arrow.RecordBatch { return lineitemShape(rows, false) }

// lineitemShape is lineitemRecord, with one more column that only pqarrow
// reads (a large_string, l_priority) when mixed.
func lineitemShape(rows int, mixed bool) arrow.RecordBatch {
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	i64, i32, str, date := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String, arrow.FixedWidthTypes.Date32
	names := []string{"l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice",
		"l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate", "l_receiptdate",
		"l_shipinstruct", "l_shipmode", "l_comment", "l_returned"}
	types := []arrow.DataType{i64, i64, i64, i32, dec, dec, dec, dec, str, str, date, date, date, str, str, str, arrow.FixedWidthTypes.Boolean}
	if mixed {
		names, types = append(names, "l_priority"), append(types, arrow.BinaryTypes.LargeString)
	}
	fields := make([]arrow.Field, len(names))
	for i := range names {
		fields[i] = arrow.Field{Name: names[i], Type: types[i]}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	r := rand.New(rand.NewPCG(11, 12))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	words := []string{"carefully", "final", "deposits", "sleep", "quickly", "furiously", "regular", "ideas", "blithely", "pending"}
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i/4 + 1))
		b.Field(1).(*array.Int64Builder).Append(r.Int64N(200000))
		b.Field(2).(*array.Int64Builder).Append(r.Int64N(10000))
		b.Field(3).(*array.Int32Builder).Append(int32(i%7 + 1))
		for c, hi := range []int64{5000, 10000000, 10, 8} {
			b.Field(4 + c).(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(hi)))
		}
		b.Field(8).(*array.StringBuilder).Append(pick("A", "N", "R"))
		b.Field(9).(*array.StringBuilder).Append(pick("O", "F"))
		for c := range 3 {
			b.Field(10 + c).(*array.Date32Builder).Append(arrow.Date32(8000 + r.IntN(2500)))
		}
		b.Field(13).(*array.StringBuilder).Append(pick("DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"))
		b.Field(14).(*array.StringBuilder).Append(pick("AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR"))
		b.Field(15).(*array.StringBuilder).Append(fmt.Sprintf("%s %s %s", pick(words...), pick(words...), pick(words...)))
		b.Field(16).(*array.BooleanBuilder).Append(r.IntN(4) == 0)
		if mixed {
			b.Field(17).(*array.LargeStringBuilder).Append(pick("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"))
		}
	}
	return b.NewRecordBatch()
}

// BenchmarkLineitem reads the lineitem shape written as pyarrow does by
// default (dictionary, Snappy), with the native path and without it: before
// it read decimals and booleans, one such column sent the whole file
// through pqarrow, so native=false is also what any projection of the
// file cost then. pqcol=true adds a column only pqarrow reads (before the
// per-column fallback, it sent the whole file to pqarrow). Bytes are the Arrow data produced. Run:
//
//	go test ./scanner/parquet -run XXX -bench Lineitem -benchmem -count 5
func BenchmarkLineitem(b *testing.B) {
	for _, mixed := range []bool{false, true} {
		rec := lineitemShape(200_000, mixed)
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
		for _, native := range []bool{true, false} {
			b.Run(fmt.Sprintf("pqcol=%v/native=%v", mixed, native), func(b *testing.B) {
				b.SetBytes(arrowBytes)
				b.ReportAllocs()
				for b.Loop() {
					benchRead(b, data, native)
				}
			})
		}
	}
}

func benchRead(b *testing.B, data []byte, native bool) {
	f, err := Open(context.Background(), "lineitem.parquet", newLendingSource(data), memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	f.noNative = !native
	p, _ := f.Project(nil)
	err = f.Read(context.Background(), p, scanner.ReadOptions{}, func(rec arrow.RecordBatch) error {
		rec.Release()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if native && f.nativeGroups == 0 {
		b.Fatal("not read natively")
	}
}

// TestLineitemNative: the benchmark's file is read natively, equal to
// pqarrow.
func TestLineitemNative(t *testing.T) {
	rec := lineitemRecord(20_000)
	defer rec.Release()
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(7000)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	checkNativeEqualsPqarrow(t, data, nil, 4096, 20_000, 3)
}
