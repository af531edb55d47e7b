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
	"testing"
	"time"

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

// ExampleTableRequest scans a Delta table (two commits of one file each,
// serveOrders below) at its latest version and at version 0.
func ExampleTableRequest() {
	ctx := context.Background()
	addr, stop := serveOrders()
	defer stop()
	c, err := client.Dial(ctx, "grpc://"+addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	for _, req := range []*scandv1.ScanRequest{
		client.TableRequest("orders"),                      // the latest version
		client.TableRequest("orders", client.AtVersion(0)), // time travel
	} {
		req.Columns = []string{"id"}
		req.RowFilter = &scandv1.ScanRequest_Filter{Filter: "id > 1"}
		scan, err := c.Scan(ctx, req)
		if err != nil {
			log.Fatal(err)
		}
		var ids []int64
		for scan.Next() {
			ids = append(ids, scan.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
		}
		if err := scan.Err(); err != nil {
			log.Fatal(err)
		}
		scan.Release()
		fmt.Println(ids)
	}
	// Output:
	// [2 3 4 5 6]
	// [2 3]
}

func TestTableRequestSnapshots(t *testing.T) {
	if r := client.TableRequest("s3://b/wh/sales"); r.GetTable() != "s3://b/wh/sales" || r.Version != nil || len(r.GetPaths()) != 0 {
		t.Fatalf("latest: %v", r)
	}
	if r := client.TableRequest("t", client.AtVersion(0)); r.Version == nil || *r.Version != 0 {
		t.Fatalf("version 0 must be sent: %v", r)
	}
	if r := client.TableRequest("t", client.AtSnapshotID(42)); r.GetSnapshotId() != 42 {
		t.Fatalf("snapshot id: %v", r)
	}
	if r := client.TableRequest("t", client.AtRef("nightly")); r.GetRef() != "nightly" {
		t.Fatalf("ref: %v", r)
	}
	at := time.Date(2026, 11, 30, 13, 0, 0, 500, time.FixedZone("CET", 3600))
	if r := client.TableRequest("t", client.AsOf(at)); r.GetAsOf() != "2026-11-30T12:00:00.0000005Z" {
		t.Fatalf("as_of: %q", r.GetAsOf())
	}
}

// TestTableRequestRefusals: two snapshot choices and an unknown version
// fail at planning with the server's message.
func TestTableRequestRefusals(t *testing.T) {
	ctx := context.Background()
	addr, stop := serveOrders()
	defer stop()
	c, err := client.Dial(ctx, "grpc://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Scan(ctx, client.TableRequest("orders", client.AtVersion(0), client.AsOf(time.Now()))); err == nil {
		t.Fatal("two snapshot choices: no error")
	}
	if _, err := c.Scan(ctx, client.TableRequest("orders", client.AtVersion(9))); err == nil {
		t.Fatal("version 9 of a table at version 1: no error")
	}
}

// serveOrders starts a scand server on a directory holding the Delta table
// orders: version 0 adds a file of ids 1..3, version 1 one of ids 4..6.
func serveOrders() (addr string, stop func()) {
	dir, err := os.MkdirTemp("", "scand-table-example-")
	if err != nil {
		log.Fatal(err)
	}
	table := filepath.Join(dir, "orders")
	if err := os.MkdirAll(filepath.Join(table, "_delta_log"), 0o755); err != nil {
		log.Fatal(err)
	}
	const schema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`
	for v, ids := range [][]int64{{1, 2, 3}, {4, 5, 6}} {
		name := fmt.Sprintf("part-%d.parquet", v)
		size, err := writeIDs(filepath.Join(table, name), ids)
		if err != nil {
			log.Fatal(err)
		}
		commit := fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{},"size":%d,"modificationTime":0,"dataChange":true}}`+"\n", name, size)
		if v == 0 {
			commit = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
				fmt.Sprintf(`{"metaData":{"id":"orders","format":{"provider":"parquet","options":{}},"schemaString":%q,"partitionColumns":[],"configuration":{},"createdTime":0}}`+"\n", schema) +
				commit
		}
		if err := os.WriteFile(filepath.Join(table, "_delta_log", fmt.Sprintf("%020d.json", v)), []byte(commit), 0o644); err != nil {
			log.Fatal(err)
		}
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

// writeIDs writes a Parquet file of one int64 column, id; returns its size.
func writeIDs(path string, ids []int64) (int64, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		return 0, err
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
