package main

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// dataset is one generated Parquet file.
type dataset struct {
	name      string // short name in the table
	key       string // object key in the bucket
	cols      int
	rows      int
	rowGroups int
	path      string // local file
	size      int64
	footer    int64 // footer length, magic and length field included
}

// columns returns the dataset's column names, all or every other one.
func (d *dataset) columns(alternate bool) []string {
	var out []string
	for i := 0; i < d.cols; i++ {
		if !alternate || i%2 == 0 {
			out = append(out, colName(i))
		}
	}
	return out
}

func colName(i int) string { return fmt.Sprintf("c%03d", i) }

// writeDataset writes d: columns alternating int64 and float64, random
// values (incompressible), uncompressed and plain encoded (no dictionary),
// in d.rowGroups row groups of equal size. Column statistics are written,
// as every writer does by default.
func writeDataset(d *dataset, seed uint64) error {
	fields := make([]arrow.Field, d.cols)
	for i := range fields {
		typ := arrow.DataType(arrow.PrimitiveTypes.Int64)
		if i%2 == 1 {
			typ = arrow.PrimitiveTypes.Float64
		}
		fields[i] = arrow.Field{Name: colName(i), Type: typ}
	}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(d.path)
	if err != nil {
		return err
	}
	defer f.Close()
	perGroup := (d.rows + d.rowGroups - 1) / d.rowGroups
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Uncompressed),
		parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(int64(perGroup)),
	)
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for done := 0; done < d.rows; done += perGroup {
		n := min(perGroup, d.rows-done)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for c := range fields {
			switch cb := b.Field(c).(type) {
			case *array.Int64Builder:
				cb.Reserve(n)
				for range n {
					cb.UnsafeAppend(int64(rng.Uint64()))
				}
			case *array.Float64Builder:
				cb.Reserve(n)
				for range n {
					cb.UnsafeAppend(rng.NormFloat64() * 1e6)
				}
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := w.Write(rec) // one row group per call
		rec.Release()
		if err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	pf, err := file.OpenParquetFile(d.path, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	if got := pf.NumRowGroups(); got != d.rowGroups {
		return fmt.Errorf("%s: wrote %d row groups, want %d", d.path, got, d.rowGroups)
	}
	st, err := os.Stat(d.path)
	if err != nil {
		return err
	}
	d.size = st.Size()
	d.footer = int64(pf.MetaData().Size()) + 8
	return nil
}
