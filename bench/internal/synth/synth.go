// Package synth writes the synthetic Parquet files the send-path and
// client benchmarks scan (bench/sendpath, bench/goread): "wide" (8 int64
// and 8 float64 columns), "int64" (16 int64 columns) and "strings" (3
// string columns of 20-200 bytes of words), uncompressed and plain
// encoded, so that the server's decoding is cheap and the stream clients
// receive is the same for every send path.
package synth

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Write writes rows of dataset ds ("wide", "int64" or "strings") to path.
func Write(path, ds string, rows int) error {
	var fields []arrow.Field
	switch ds {
	case "wide":
		for i := range 8 {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("i%d", i), Type: arrow.PrimitiveTypes.Int64})
		}
		for i := range 8 {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("f%d", i), Type: arrow.PrimitiveTypes.Float64})
		}
	case "int64":
		for i := range 16 {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("i%d", i), Type: arrow.PrimitiveTypes.Int64})
		}
	case "strings":
		for i := range 3 {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("s%d", i), Type: arrow.BinaryTypes.String})
		}
	}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Uncompressed),
		parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(128<<10),
	)
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	// Values like real data, so that IPC compression has something to do:
	// ids, counters and codes of growing range, prices with two decimals,
	// measurements; text made of a 2,000-word vocabulary.
	rng := rand.New(rand.NewPCG(1, 2))
	const chunk = 64 << 10
	words := make([][]byte, 2000)
	for i := range words {
		w := make([]byte, 2+rng.IntN(9))
		for k := range w {
			w[k] = byte('a' + rng.IntN(26))
		}
		words[i] = w
	}
	buf := make([]byte, 0, 256)
	for done := 0; done < rows; done += chunk {
		n := min(chunk, rows-done)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for c, fld := range fields {
			switch fld.Type.ID() {
			case arrow.INT64:
				cb := b.Field(c).(*array.Int64Builder)
				for r := range n {
					if c == 0 {
						cb.Append(int64(done + r))
					} else {
						cb.Append(rng.Int64N(1 << min(6*c, 62)))
					}
				}
			case arrow.FLOAT64:
				cb := b.Field(c).(*array.Float64Builder)
				for range n {
					if c < 12 {
						cb.Append(float64(int(rng.ExpFloat64()*5000)) / 100)
					} else {
						cb.Append(rng.NormFloat64())
					}
				}
			case arrow.STRING:
				cb := b.Field(c).(*array.StringBuilder)
				for range n {
					l := 20 + rng.IntN(181)
					buf = buf[:0]
					for len(buf) < l {
						buf = append(append(buf, words[rng.IntN(len(words))]...), ' ')
					}
					cb.BinaryBuilder.Append(buf[:l])
				}
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return w.Close()
}
