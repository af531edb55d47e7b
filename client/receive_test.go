package client

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/scand/scand/server"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/wire"
)

// The codec's unit and fuzz tests are in package wire (receive_test.go);
// this one runs it against a real server.

// codecParquet writes rows of an int64 and a string column.
func codecParquet(t *testing.T, path string, rows int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%9 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(strings.Repeat("s", i%300))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rows/3))), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Against a real scand server, a connection with the codec reads the same
// batches as one without, on both server send paths.
func TestZeroCopyCodecEndToEnd(t *testing.T) {
	dir := t.TempDir()
	codecParquet(t, filepath.Join(dir, "t.parquet"), 60000)
	bucket, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []wire.SendPath{wire.SendZeroCopy, wire.SendStock} {
		srv, err := server.New(server.Config{Bucket: bucket, SendPath: path, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(lis)
		read := func(opts ...grpc.DialOption) []arrow.RecordBatch {
			conn, err := grpc.NewClient(lis.Addr().String(), append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fc := flight.NewClientFromConn(conn, nil)
			ctx := context.Background()
			info, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths":["t.parquet"]}`)})
			if err != nil {
				t.Fatal(err)
			}
			var out []arrow.RecordBatch
			for _, ep := range info.Endpoint {
				stream, err := fc.DoGet(ctx, ep.Ticket)
				if err != nil {
					t.Fatal(err)
				}
				rdr, err := flight.NewRecordReader(stream)
				if err != nil {
					t.Fatal(err)
				}
				for rdr.Next() {
					r := rdr.RecordBatch()
					r.Retain()
					out = append(out, r)
				}
				rdr.Release()
			}
			return out
		}
		want, got := read(), read(ZeroCopyCodec())
		if len(got) != len(want) {
			t.Fatalf("%s: %d batches with the codec, %d without", path, len(got), len(want))
		}
		for i := range want {
			if !array.RecordEqual(got[i], want[i]) {
				t.Errorf("%s: batch %d differs", path, i)
			}
			got[i].Release()
			want[i].Release()
		}
		srv.Stop()
	}
}
