package parquet

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// stringsRecord is lineitem's string columns: short dictionary strings
// (l_shipmode), longer ones (l_comment) and, when nulls, every seventh
// row null.
func stringsRecord(rows int, nulls bool) arrow.RecordBatch {
	str := arrow.BinaryTypes.String
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "l_shipmode", Type: str, Nullable: nulls},
		{Name: "l_comment", Type: str, Nullable: nulls},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	r := rand.New(rand.NewPCG(3, 4))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	words := []string{"carefully", "final", "deposits", "sleep", "quickly", "furiously", "regular", "ideas", "blithely", "pending"}
	for i := range rows {
		if nulls && i%7 == 3 {
			b.Field(0).AppendNull()
			b.Field(1).AppendNull()
			continue
		}
		b.Field(0).(*array.StringBuilder).Append(pick("AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR"))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%s %s %s", pick(words...), pick(words...), pick(words...)))
	}
	return b.NewRecordBatch()
}

// TestNativeStringsMatchPqarrow: dictionary and plain string columns,
// with and without nulls, read natively equal pqarrow at batch sizes
// that cut pages.
func TestNativeStringsMatchPqarrow(t *testing.T) {
	for _, nulls := range []bool{false, true} {
		for _, dict := range []bool{true, false} {
			t.Run(fmt.Sprintf("nulls=%v/dict=%v", nulls, dict), func(t *testing.T) {
				rec := stringsRecord(20_000, nulls)
				defer rec.Release()
				props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict), parquet.WithDataPageSize(8<<10),
					parquet.WithMaxRowGroupLength(7000), parquet.WithCompression(compress.Codecs.Snappy))
				data := writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
				for _, batch := range []int64{1, 333, 4096} {
					checkNativeEqualsPqarrow(t, data, nil, batch, 20_000, 3)
				}
			})
		}
	}
}

// BenchmarkStrings reads lineitem's string columns natively, dictionary
// encoded (as pyarrow writes them by default) and plain. Run:
//
//	go test ./scanner/parquet -run XXX -bench Strings -benchmem -count 6
func BenchmarkStrings(b *testing.B) {
	for _, nulls := range []bool{false, true} {
		for _, dict := range []bool{true, false} {
			rec := stringsRecord(200_000, nulls)
			arrowBytes := int64(0)
			for _, c := range rec.Columns() {
				for _, buf := range c.Data().Buffers() {
					if buf != nil {
						arrowBytes += int64(buf.Len())
					}
				}
			}
			data := writeParquetBytes(b, rec, parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict), parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
			rec.Release()
			b.Run(fmt.Sprintf("nulls=%v/dict=%v", nulls, dict), func(b *testing.B) {
				b.SetBytes(arrowBytes)
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					benchRead(b, data, true)
				}
				// CPU time, not wall time: the machine is shared.
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time so far, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
