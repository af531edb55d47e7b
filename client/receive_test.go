package client

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	scandv1 "github.com/scand/scand/proto/scand/v1"
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

// A scan receives the same batches whether they are built from gRPC's
// receive buffers (the default), gathered into one buffer per message,
// or decoded by the stock codec, on both server send paths; and the
// default's batches own their memory exactly: once they are released and
// the client closed, the allocator holds nothing and every receive buffer
// is back in the pool.
func TestScanReceivePaths(t *testing.T) {
	dir := t.TempDir()
	codecParquet(t, filepath.Join(dir, "t.parquet"), 90000)
	bucket, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []wire.SendPath{wire.SendZeroCopy, wire.SendStock} {
		for _, comp := range []wire.Compression{wire.CompressNone, wire.CompressLZ4} {
			srv, err := server.New(server.Config{Bucket: bucket, SendPath: path, Compression: comp, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(lis)
			baseline := wire.OutstandingReceiveBuffers()
			// read scans with opts and, when checked, a checked allocator
			// (otherwise the client's own copy pool).
			read := func(checked bool, opts ...Option) []arrow.RecordBatch {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				if checked {
					opts = append(opts, WithAllocator(mem))
				}
				c, err := Dial(context.Background(), lis.Addr().String(), opts...)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				s, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"t.parquet"}, BatchRows: 7000})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Release()
				var out []arrow.RecordBatch
				for s.Next() {
					// Copied out so that the batch itself is released by
					// the scan and its memory checked.
					out = append(out, copyBatch(t, s.RecordBatch()))
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				return out
			}
			want := read(true, WithStockCodec())
			for name, got := range map[string][]arrow.RecordBatch{
				"default":           read(true),
				"default allocator": read(false),
				"gathering":         read(true, WithGatheringReceive()),
			} {
				if len(got) != len(want) {
					t.Fatalf("%s/%s, %s: %d batches, want %d", path, comp, name, len(got), len(want))
				}
				for i := range want {
					if !array.RecordEqual(got[i], want[i]) {
						t.Errorf("%s/%s, %s: batch %d differs", path, comp, name, i)
					}
					got[i].Release()
				}
			}
			for _, r := range want {
				r.Release()
			}
			srv.Stop()
			deadline := time.Now().Add(5 * time.Second)
			for wire.OutstandingReceiveBuffers() != baseline && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := wire.OutstandingReceiveBuffers() - baseline; n != 0 {
				t.Errorf("%s/%s: %d receive buffers not returned", path, comp, n)
			}
		}
	}
}

// copyBatch copies rec into Go memory, through an IPC round trip.
func copyBatch(t *testing.T, rec arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := ipc.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Next() {
		t.Fatal(r.Err())
	}
	out := r.RecordBatch()
	out.Retain()
	return out
}
