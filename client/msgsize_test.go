package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
)

// writeLongStrings writes rows rows of an "s" column of about 1 KiB each,
// in one row group.
func writeLongStrings(t *testing.T, path string, rows int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	long := strings.Repeat("x", 1000)
	for i := range rows {
		b.Append(fmt.Sprintf("%d%s", i, long))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(rows))
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rows))), pqarrow.DefaultWriterProps())
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

// scanBatches reads the whole scan and returns its batch count and the
// largest batch's body bytes.
func scanBatches(t *testing.T, c *client.Client, req *scandv1.ScanRequest, opts ...client.Option) (batches int, largest int64, info *flight.FlightInfo) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	scan, err := c.Scan(context.Background(), req, append(opts, client.WithAllocator(mem))...)
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	var rows int64
	for scan.Next() {
		rec := scan.RecordBatch()
		batches++
		rows += rec.NumRows()
		largest = max(largest, int64(rec.Column(0).(*array.String).ValueLen(0))*rec.NumRows())
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 20000 {
		t.Fatalf("%d rows, want 20000", rows)
	}
	return batches, largest, scan.Info()
}

// The client asks for 8 MiB messages by default (4 MiB batches), and with
// more reads the larger batches a stock 4 MiB Flight client cannot;
// WithMaxMessageBytes(0) gets the stock sizes. The caller's request is not
// changed.
func TestClientAcceptsLargerMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir()
	writeLongStrings(t, filepath.Join(dir, "wide.parquet"), 20000) // about 20 MB decoded
	c := startServer(t, dir, server.Config{})
	req := &scandv1.ScanRequest{Paths: []string{"wide.parquet"}}
	for _, tc := range []struct {
		name         string
		opts         []client.Option
		batches      int
		over, atMost int64      // the largest batch's bytes: over, at most
		stock        codes.Code // what a stock client reading the tickets gets; Unknown: not checked
	}{
		// The default's batches are about 4 MiB, a stock client's limit.
		{name: "default", batches: 5, over: 3 << 20, atMost: 6 << 20, stock: codes.Unknown},
		{name: "32 MiB", opts: []client.Option{client.WithMaxMessageBytes(32 << 20)}, batches: 2, over: 4 << 20, atMost: 24 << 20, stock: codes.ResourceExhausted},
		{name: "disabled", opts: []client.Option{client.WithMaxMessageBytes(0)}, batches: 10, over: 1 << 20, atMost: 3 << 20, stock: codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batches, largest, info := scanBatches(t, c, req, tc.opts...)
			if batches != tc.batches || largest <= tc.over || largest > tc.atMost {
				t.Errorf("%d batches, the largest of %d bytes; want %d, in (%d, %d]", batches, largest, tc.batches, tc.over, tc.atMost)
			}
			if tc.stock == codes.Unknown {
				return
			}
			if err := stockRead(t, c.Addr(), info); status.Code(err) != tc.stock {
				t.Errorf("a stock client reading the stream gets %v, want %v", err, tc.stock)
			}
		})
	}
	if req.MaxMessageBytes != 0 {
		t.Errorf("the caller's request was changed: max_message_bytes %d", req.MaxMessageBytes)
	}
}

// stockRead redeems info's tickets with a stock arrow-go Flight client
// (gRPC's default 4 MiB receive limit).
func stockRead(t *testing.T, addr string, info *flight.FlightInfo) error {
	t.Helper()
	fc, err := flight.NewClientWithMiddleware(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	for _, ep := range info.GetEndpoint() {
		stream, err := fc.DoGet(context.Background(), ep.GetTicket())
		if err != nil {
			return err
		}
		rdr, err := flight.NewRecordReader(stream)
		if err != nil {
			return err
		}
		for rdr.Next() {
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}
