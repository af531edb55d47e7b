package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
	"github.com/scand/scand/storage/local"
)

// Example starts a scand server on a directory holding one small Parquet
// file (serveFruit, below), then scans two of its columns with the client.
func Example() {
	ctx := context.Background()
	addr, stop := serveFruit()
	defer stop()

	// Scan it.
	c, err := client.Dial(ctx, "grpc://"+addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	scan, err := c.Scan(ctx, &scandv1.ScanRequest{
		Paths:   []string{"*.parquet"},
		Columns: []string{"name", "qty"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer scan.Release()
	fmt.Println(scan.Schema().Field(0).Name, scan.Schema().Field(1).Name)
	for scan.Next() {
		rec := scan.RecordBatch()
		names := rec.Column(0).(*array.String)
		qtys := rec.Column(1).(*array.Int64)
		for i := range int(rec.NumRows()) {
			fmt.Println(names.Value(i), qtys.Value(i))
		}
	}
	if err := scan.Err(); err != nil {
		log.Fatal(err)
	}
	st := scan.Stats()
	fmt.Printf("%d rows from %d file\n", st.Rows, st.Files)
	// Output:
	// name qty
	// apple 3
	// banana 12
	// cherry 40
	// 3 rows from 1 file
}

// writeFruit writes a three-row Parquet file.
// serveFruit starts a scand server, on a free port, on a directory holding
// one Parquet file of three rows (fruit.parquet), and returns its address
// and what stops it and removes the directory.
func serveFruit() (addr string, stop func()) {
	dir, err := os.MkdirTemp("", "scand-example-")
	if err != nil {
		log.Fatal(err)
	}
	if err := writeFruit(filepath.Join(dir, "fruit.parquet")); err != nil {
		log.Fatal(err)
	}
	bucket, err := local.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(server.Config{Bucket: bucket, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(lis)
	return lis.Addr().String(), func() {
		srv.GracefulStop()
		os.RemoveAll(dir)
	}
}

func writeFruit(path string) error {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"apple", "banana", "cherry"}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.5, 0.25, 4}, nil)
	b.Field(2).(*array.Int64Builder).AppendValues([]int64{3, 12, 40}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		return err
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return err
	}
	return w.Close() // also closes f
}
