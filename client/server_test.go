package client_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
	"github.com/scand/scand/storage/local"
)

// writeSeq writes files of rowGroups row groups of rowsPerGroup rows each,
// whose "id" column counts up from first.
func writeSeq(t *testing.T, path string, first int64, rowGroups, rowsPerGroup int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	id := first
	for range rowGroups {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for range rowsPerGroup {
			b.Append(id)
			id++
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(rowsPerGroup))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		col.Release()
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// startServer serves dir with the real server until the test ends.
func startServer(t *testing.T, dir string, cfg server.Config) *client.Client {
	t.Helper()
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bucket = b
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	c, err := client.Dial(context.Background(), lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		srv.Stop()
		<-done
	})
	return c
}

// TestRealServerManyEndpoints splits two files into one endpoint per row
// group and checks that the client puts the rows back in order.
func TestRealServerManyEndpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir()
	writeSeq(t, filepath.Join(dir, "a.parquet"), 0, 5, 1000)
	writeSeq(t, filepath.Join(dir, "b.parquet"), 5000, 3, 1000)
	c := startServer(t, dir, server.Config{Planning: server.Planning{SplitBytes: 1}})

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	scan, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"*.parquet"}, BatchRows: 300},
		client.WithAllocator(mem), client.WithConcurrency(3), client.WithBufferBatches(1))
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	if n := len(scan.Info().Endpoint); n != 8 {
		t.Fatalf("%d endpoints, want one per row group (8)", n)
	}
	var next int64
	for scan.Next() {
		for _, id := range scan.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			if id != next {
				t.Fatalf("id %d, want %d", id, next)
			}
			next++
		}
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	if next != 8000 {
		t.Fatalf("read %d rows, want 8000", next)
	}
	st := scan.Stats()
	if st.Files != 2 || st.Endpoints != 8 || st.Rows != 8000 || st.Reads == 0 || st.BytesFetched == 0 {
		t.Errorf("stats %+v: want 2 files, 8 endpoints, 8000 rows and some IO", st)
	}
}

func TestRealServerErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir()
	writeSeq(t, filepath.Join(dir, "a.parquet"), 0, 1, 10)
	if err := os.WriteFile(filepath.Join(dir, "notes.parquet"), []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startServer(t, dir, server.Config{})
	tests := []struct {
		name string
		req  *scandv1.ScanRequest
		code codes.Code
	}{
		{"unknown column", &scandv1.ScanRequest{Paths: []string{"a.parquet"}, Columns: []string{"nope"}}, codes.InvalidArgument},
		{"missing file", &scandv1.ScanRequest{Paths: []string{"missing.parquet"}}, codes.NotFound},
		{"outside the root", &scandv1.ScanRequest{Paths: []string{"../x.parquet"}}, codes.PermissionDenied},
		{"not parquet", &scandv1.ScanRequest{Paths: []string{"notes.parquet"}}, codes.InvalidArgument},
		{"no paths", &scandv1.ScanRequest{}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Scan(context.Background(), tt.req)
			if status.Code(err) != tt.code {
				t.Fatalf("err = %v (%v), want %v", err, status.Code(err), tt.code)
			}
		})
	}
}
