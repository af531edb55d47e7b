package orc

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// arrowBytes sums the buffer sizes of an array and its children.
func arrowBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += arrowBytes(c)
	}
	return n
}

// BenchmarkDecode measures decode throughput in MB/s of Arrow data
// produced (b.SetBytes), whole files, all columns, default batch size:
//
//	go test ./scanner/orc/ -run '^$' -bench Decode -benchmem -count 10 | tee new.txt
//	benchstat old.txt new.txt
func BenchmarkDecode(b *testing.B) {
	dir := orcExamples(b)
	for _, name := range []string{
		"demo-12-zlib.orc",              // 1.9M rows, ZLIB, RLE v2 + dictionaries
		"demo-11-zlib.orc",              // same rows, RLE v1, 385 stripes
		"TestOrcFile.testSeek.orc",      // ZLIB, all primitive types + lists, maps, structs
		"TestVectorOrcFile.testLz4.orc", // LZ4, bigint/int
		"nulls-at-end-snappy.orc",       // SNAPPY, numbers with nulls
		"TestOrcFile.columnProjection.orc",
	} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			src := &memSource{data: data}
			f, err := Open(context.Background(), name, src, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			p, err := f.Project(nil)
			if err != nil {
				b.Fatal(err)
			}
			mem := memory.NewGoAllocator()
			var size int64
			read := func() {
				size = 0
				err := f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem}, func(rec arrow.RecordBatch) error {
					for _, c := range rec.Columns() {
						size += arrowBytes(c.Data())
					}
					rec.Release()
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			read()
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				read()
			}
		})
	}
}
