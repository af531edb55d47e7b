package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/scand/scand/server/stream"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/wire"
)

// captureStream is a DoGet stream that records each message as the bytes
// gRPC would send: proto.Marshal for the stock writer's FlightData,
// wire.SendCodec for everything else. The zero-copy buffers are freed as soon
// as they are copied out, as the transport would after writing them.
type captureStream struct {
	grpc.ServerStream
	ctx  context.Context
	msgs [][]byte
}

func (c *captureStream) Context() context.Context { return c.ctx }

func (c *captureStream) Send(fd *flight.FlightData) error {
	b, err := proto.Marshal(fd)
	if err != nil {
		return err
	}
	c.msgs = append(c.msgs, b)
	return nil
}

func (c *captureStream) SendMsg(m any) error {
	if fd, ok := m.(*flight.FlightData); ok {
		return c.Send(fd)
	}
	bs, err := wire.SendCodec{}.Marshal(m)
	if err != nil {
		return err
	}
	c.msgs = append(c.msgs, bs.Materialize())
	bs.Free()
	return nil
}

// withCopyBelow sets stream.CopyBodyBelow for the rest of the test.
func withCopyBelow(t *testing.T, n int) {
	old := stream.CopyBodyBelow
	stream.CopyBodyBelow = n
	t.Cleanup(func() { stream.CopyBodyBelow = old })
}

// sameMessages compares the messages of the two paths byte for byte. With
// stats set, app_metadata (the IO figures, which differ between runs) is
// taken from the zero-copy message before comparing. Like the stock
// writer, the zero-copy writer puts it on every message written for the
// last batch: the schema too, when that batch is the first.
func sameMessages(t *testing.T, what string, stock, zc [][]byte, stats bool) {
	t.Helper()
	if len(stock) != len(zc) {
		t.Errorf("%s: %d messages on the stock path, %d on the zero-copy path", what, len(stock), len(zc))
		return
	}
	for i := range stock {
		want := stock[i]
		if stats {
			var s, z flight.FlightData
			if err := proto.Unmarshal(stock[i], &s); err != nil {
				t.Fatalf("%s: message %d: %v", what, i, err)
			}
			if err := proto.Unmarshal(zc[i], &z); err != nil {
				t.Fatalf("%s: zero-copy message %d does not parse: %v", what, i, err)
			}
			s.AppMetadata = z.AppMetadata
			want, _ = proto.Marshal(&s)
		}
		if !bytes.Equal(want, zc[i]) {
			t.Errorf("%s: message %d of %d differs: %d bytes stock, %d zero-copy; first difference at %d",
				what, i, len(stock), len(want), len(zc[i]), firstDiff(want, zc[i]))
			return
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// doGetMessages runs a whole scan through s.DoGet on captureStreams and
// returns every message of every endpoint.
func doGetMessages(ctx context.Context, s *Server, req map[string]any) ([][]byte, error) {
	cmd, _ := json.Marshal(req)
	info, err := s.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		return nil, err
	}
	var all [][]byte
	for _, ep := range info.Endpoint {
		st := &captureStream{ctx: ctx}
		if err := s.DoGet(ep.Ticket, st); err != nil {
			return nil, err
		}
		all = append(all, st.msgs...)
	}
	return all, nil
}

// The zero-copy path sends exactly the bytes of proto.Marshal of the stock
// writer's messages, for every file of parquet-testing that scand reads,
// with bodies copied or referenced, plain or compressed, in whole or
// limited (sliced) batches.
func TestSendPathBytesIdentical(t *testing.T) {
	root := testdata(t, "")
	files, _ := filepath.Glob(filepath.Join(root, "parquet-testing", "*.parquet"))
	if len(files) == 0 {
		t.Skip("no parquet-testing files")
	}
	ctx := context.Background()
	type variant struct {
		name        string
		copyBelow   int
		compression wire.Compression
		req         map[string]any
	}
	variants := []variant{
		{"default", stream.CopyBodyBelow, wire.CompressNone, nil},
		{"by-reference", 0, wire.CompressNone, nil},
		{"by-reference/batch_rows=7,limit=40", 0, wire.CompressNone, map[string]any{"batch_rows": 7, "limit": 40}},
		{"by-reference/lz4", 0, wire.CompressLZ4, nil},
		{"by-reference/zstd", 0, wire.CompressZstd, nil},
	}
	compared := 0
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			if v.compression != wire.CompressNone && testing.Short() {
				t.Skip("compression variants are slow")
			}
			withCopyBelow(t, v.copyBelow)
			srv, err := New(onRoot(t, root, iosched.Options{}, Config{Mem: memory.NewGoAllocator(), Compression: v.compression,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				rel, _ := filepath.Rel(root, f)
				if filepath.Base(rel) == "large_string_map.brotli.parquet" {
					continue // > 2 GiB decoded
				}
				req := map[string]any{"paths": []string{rel}}
				for k, x := range v.req {
					req[k] = x
				}
				srv.cfg.SendPath = wire.SendStock
				stock, serr := doGetMessages(ctx, srv, req)
				srv.cfg.SendPath = wire.SendZeroCopy
				zc, zerr := doGetMessages(ctx, srv, req)
				if serr != nil || zerr != nil {
					if status.Code(serr) != status.Code(zerr) {
						t.Errorf("%s: stock path %v, zero-copy path %v", rel, serr, zerr)
					}
					continue
				}
				sameMessages(t, rel, stock, zc, true)
				compared++
			}
		})
	}
	t.Logf("%d scans compared", compared)
}

// identityRecords covers what parquet files rarely produce: sliced arrays
// at odd offsets (the writer realigns bitmaps and shifts offsets into new
// buffers), booleans, nulls, nested lists and structs, and dictionary
// columns whose dictionary is replaced between batches.
func identityRecords(t *testing.T, mem memory.Allocator) []arrow.RecordBatch {
	t.Helper()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
		{Name: "d", Type: dictType, Nullable: true},
	}, nil)
	var out []arrow.RecordBatch
	for batch := 0; batch < 3; batch++ {
		n := 5000 + 977*batch
		b := array.NewRecordBuilder(mem, schema)
		for i := 0; i < n; i++ {
			if i%11 == 0 {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.Int64Builder).Append(int64(i * batch))
			}
			b.Field(1).(*array.BooleanBuilder).AppendValues([]bool{i%3 == 0}, []bool{i%5 != 0})
			if i%13 == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(strings.Repeat("s", i%37) + fmt.Sprint(i))
			}
			b.Field(3).(*array.LargeStringBuilder).Append(fmt.Sprint("large-", i))
			lb := b.Field(4).(*array.ListBuilder)
			lb.Append(i%7 != 0)
			for j := 0; j < i%5; j++ {
				lb.ValueBuilder().(*array.Float64Builder).Append(float64(i) / float64(j+1))
			}
			sb := b.Field(5).(*array.StructBuilder)
			sb.Append(i%17 != 0)
			sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
			db := b.Field(6).(*array.BinaryDictionaryBuilder)
			if i%19 == 0 {
				db.AppendNull()
			} else if err := db.AppendString(fmt.Sprintf("v%d-%d", batch, i%(50+batch*10))); err != nil {
				t.Fatal(err)
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		out = append(out, rec)
		for _, cut := range [][2]int64{{3, 3 + 2000}, {1001, int64(n)}, {7, 8}} {
			out = append(out, rec.NewSlice(cut[0], cut[1]))
		}
	}
	return out
}

// Generated batches give the same bytes on both writers, including the
// last message's app_metadata, and the zero-copy writer leaves nothing
// allocated behind.
func TestSendPathBytesIdenticalGenerated(t *testing.T) {
	variants := []struct {
		copyBelow int
		comp      wire.Compression
	}{{stream.CopyBodyBelow, wire.CompressNone}, {0, wire.CompressNone}, {0, wire.CompressLZ4}, {0, wire.CompressZstd}}
	for _, v := range variants {
		{
			copyBelow, comp := v.copyBelow, v.comp
			t.Run(fmt.Sprintf("copyBelow=%d,compression=%q", copyBelow, comp.String()), func(t *testing.T) {
				if comp != wire.CompressNone && testing.Short() {
					t.Skip("compression variants are slow")
				}
				withCopyBelow(t, copyBelow)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer assertReleased(t, mem)
				recs := identityRecords(t, mem)
				cfg := &stream.Config{Compression: comp, Mem: mem}
				write := func(path wire.SendPath) [][]byte {
					cfg.SendPath = path
					st := &captureStream{ctx: context.Background()}
					w := cfg.NewBatchWriter(st, recs[0].Schema(), wire.CompressNone)
					for _, r := range recs[:len(recs)-1] {
						if err := w.Write(r); err != nil {
							t.Fatal(err)
						}
					}
					if err := w.WriteWithAppMetadata(recs[len(recs)-1], []byte(`{"rows":1}`)); err != nil {
						t.Fatal(err)
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					return st.msgs
				}
				stock := write(wire.SendStock)
				zc := write(wire.SendZeroCopy)
				sameMessages(t, "generated", stock, zc, false)
				// The stream decodes to the batches written.
				rdr, err := ipc.NewReader(flightBytesReader(t, zc), ipc.WithAllocator(mem))
				if err != nil {
					t.Fatal(err)
				}
				i := 0
				for rdr.Next() {
					if !array.RecordEqual(rdr.RecordBatch(), recs[i]) {
						t.Errorf("batch %d differs after the round trip", i)
					}
					i++
				}
				if rdr.Err() != nil || i != len(recs) {
					t.Errorf("read %d of %d batches: %v", i, len(recs), rdr.Err())
				}
				rdr.Release()
				for _, r := range recs {
					r.Release()
				}
			})
		}
	}
}

// flightBytesReader turns marshalled FlightData messages back into an IPC
// stream (continuation, metadata length, metadata padded to 8, body).
func flightBytesReader(t *testing.T, msgs [][]byte) io.Reader {
	var buf bytes.Buffer
	for _, b := range msgs {
		var fd flight.FlightData
		if err := proto.Unmarshal(b, &fd); err != nil {
			t.Fatal(err)
		}
		hdr := fd.DataHeader
		pad := (8 - len(hdr)%8) % 8
		buf.Write([]byte{0xff, 0xff, 0xff, 0xff})
		n := uint32(len(hdr) + pad)
		buf.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
		buf.Write(hdr)
		buf.Write(make([]byte, pad))
		buf.Write(fd.DataBody)
	}
	return &buf
}

// testServerZC starts a server with cfg and returns it and a stock client.
func testServerZC(t *testing.T, cfg Config) (*Server, flight.Client, *grpc.ClientConn) {
	t.Helper()
	srv, addr := serveForTest(t, cfg)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return srv, flight.NewClientFromConn(conn, nil), conn
}

// faultyBucket fails every read past the first quarter of an object,
// except reads of its tail (the footer). Use it with NoCoalesce, or the
// scheduler fetches a small file in one read.
type faultyBucket struct{ storage.Bucket }

type faultyObject struct{ storage.Object }

func (b faultyBucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	o, err := b.Bucket.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	return faultyObject{o}, nil
}

func (o faultyObject) ReadAt(ctx context.Context, p []byte, off int64) error {
	size := o.Info().Size
	if off > size/4 && off+int64(len(p)) < size-1024 {
		return errors.New("injected read failure")
	}
	return o.Object.ReadAt(ctx, p, off)
}

// Every stream of the zero-copy path leaves nothing allocated: completed,
// failed mid-stream, cancelled by the client, and cut by a dropped
// connection (which gRPC never frees by itself) while the server keeps
// running.
func TestSendPathReleasesEverything(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 200000)
	defer rec.Release()
	writeParquet(t, dir, "big.parquet", rec, 20000)
	withCopyBelow(t, 0)
	old := stream.OrphanDelay
	stream.OrphanDelay = 100 * time.Millisecond
	t.Cleanup(func() { stream.OrphanDelay = old })
	lb, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := []byte(`{"paths":["big.parquet"],"batch_rows":1000}`)

	cases := []struct {
		name   string
		bucket storage.Bucket
		io     iosched.Options
		run    func(t *testing.T, c flight.Client, conn *grpc.ClientConn)
	}{
		{"completed", lb, iosched.Options{}, func(t *testing.T, c flight.Client, _ *grpc.ClientConn) {
			res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"big.parquet"}, "batch_rows": 1000})
			if err != nil {
				t.Fatal(err)
			}
			if res.rows() != 200000 {
				t.Errorf("%d rows, want 200000", res.rows())
			}
			res.release()
		}},
		{"failed", faultyBucket{lb}, iosched.Options{NoCoalesce: true}, func(t *testing.T, c flight.Client, _ *grpc.ClientConn) {
			_, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"big.parquet"}, "batch_rows": 1000})
			if err == nil {
				t.Fatal("scan over a failing store succeeded")
			}
			t.Logf("failed as expected: %v", err)
		}},
		{"cancelled", lb, iosched.Options{}, func(t *testing.T, c flight.Client, _ *grpc.ClientConn) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
			if err != nil {
				t.Fatal(err)
			}
			stream, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
			if err != nil {
				t.Fatal(err)
			}
			rdr, err := flight.NewRecordReader(stream)
			if err != nil {
				t.Fatal(err)
			}
			if !rdr.Next() {
				t.Fatal("no first batch")
			}
			cancel()
			for rdr.Next() {
			}
			rdr.Release()
		}},
		{"connection dropped", lb, iosched.Options{}, func(t *testing.T, c flight.Client, conn *grpc.ClientConn) {
			info, err := c.GetFlightInfo(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
			if err != nil {
				t.Fatal(err)
			}
			stream, err := c.DoGet(context.Background(), info.Endpoint[0].Ticket)
			if err != nil {
				t.Fatal(err)
			}
			// Read one message, then stop reading, so that the server's
			// messages pile up in flow control, and drop the connection.
			if _, err := stream.Recv(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			conn.Close()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			_, c, conn := testServerZC(t, Config{Bucket: tc.bucket, Scheduler: iosched.New(tc.bucket, tc.io), Mem: mem})
			tc.run(t, c, conn)
			// The server is still running: nothing but the stream's end
			// may have freed the batches.
			assertReleased(t, mem)
		})
	}
}
