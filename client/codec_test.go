package client

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/server"
)

// codecSplit cuts b into buffers of at most size bytes, as gRPC delivers
// a message reassembled from HTTP/2 frames.
func codecSplit(b []byte, size int) mem.BufferSlice {
	var out mem.BufferSlice
	for len(b) > 0 {
		k := min(size, len(b))
		out = append(out, mem.SliceBuffer(bytes.Clone(b[:k])))
		b = b[k:]
	}
	return out
}

func codecBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// The codec decodes every FlightData shape to what proto.Unmarshal gives,
// however the message is cut into buffers, with data_body 64-byte aligned
// whenever it copied.
func TestZeroCopyCodecMatchesProto(t *testing.T) {
	msgs := map[string]*flight.FlightData{
		"empty":           {},
		"header only":     {DataHeader: codecBytes(100)},
		"small body":      {DataHeader: codecBytes(200), DataBody: codecBytes(8)},
		"app_metadata":    {DataHeader: codecBytes(200), AppMetadata: []byte(`{"rows":3}`), DataBody: codecBytes(4096)},
		"metadata only":   {AppMetadata: []byte("m")},
		"descriptor":      {FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("x")}, DataHeader: codecBytes(10), DataBody: codecBytes(10)},
		"empty desc":      {FlightDescriptor: &flight.FlightDescriptor{}, DataBody: codecBytes(3)},
		"large body":      {DataHeader: codecBytes(300), DataBody: codecBytes(3 << 20)},
		"long varint len": {DataHeader: codecBytes(1 << 14), DataBody: codecBytes(1<<21 + 5)},
	}
	for name, m := range msgs {
		wire, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 7, 16 << 10, len(wire) + 1} {
			if size == 1 && len(wire) > 1<<16 {
				continue
			}
			var got flight.FlightData
			if err := (flightCodec{}).Unmarshal(codecSplit(wire, size), &got); err != nil {
				t.Fatalf("%s, %d-byte buffers: %v", name, size, err)
			}
			if !proto.Equal(&got, m) {
				t.Errorf("%s, %d-byte buffers: decoded message differs", name, size)
			}
			if len(got.DataBody) > 0 && size < len(wire) && addr(got.DataBody, 0)%bodyAlign != 0 {
				t.Errorf("%s, %d-byte buffers: data_body at %#x, not %d-byte aligned", name, size, addr(got.DataBody, 0), bodyAlign)
			}
		}
	}
}

// A message in one aligned buffer is not copied: the decoded body is the
// received buffer.
func TestZeroCopyCodecKeepsSingleBuffer(t *testing.T) {
	prefix := protowire.AppendTag(nil, 1000, protowire.BytesType)
	prefix = protowire.AppendVarint(prefix, 4096)
	raw := make([]byte, 64+4096)
	start := 64 - len(prefix) // body at raw[64], as aligned as raw itself
	copy(raw[start:], prefix)
	wire := raw[start:]
	var got flight.FlightData
	if err := (flightCodec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.DataBody) != 4096 || &got.DataBody[0] != &raw[64] {
		t.Errorf("body was copied")
	}
}

// Unknown, repeated or malformed fields go through protobuf, which keeps
// unknown fields and rejects what is malformed.
func TestZeroCopyCodecFallsBack(t *testing.T) {
	base, _ := proto.Marshal(&flight.FlightData{DataHeader: []byte("h"), DataBody: []byte("body")})
	unknown := protowire.AppendTag(bytes.Clone(base), 9, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 5)
	repeated := append(bytes.Clone(base), base...)
	for name, wire := range map[string][]byte{"unknown field": unknown, "repeated fields": repeated} {
		var got, want flight.FlightData
		if err := proto.Unmarshal(wire, &want); err != nil {
			t.Fatal(err)
		}
		if err := (flightCodec{}).Unmarshal(codecSplit(wire, 3), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !proto.Equal(&got, &want) {
			t.Errorf("%s: decoded message differs from protobuf's", name)
		}
	}
	var got flight.FlightData
	if err := (flightCodec{}).Unmarshal(codecSplit(base[:len(base)-1], 2), &got); err == nil {
		t.Error("truncated message accepted")
	}
}

// The codec agrees with protobuf on any input: same message, or both fail.
func FuzzZeroCopyCodec(f *testing.F) {
	for _, m := range []*flight.FlightData{{}, {DataHeader: []byte("hdr"), AppMetadata: []byte("m"), DataBody: codecBytes(100)},
		{FlightDescriptor: &flight.FlightDescriptor{Path: []string{"a"}}, DataBody: []byte("b")}} {
		b, _ := proto.Marshal(m)
		f.Add(b, uint8(3))
	}
	f.Fuzz(func(t *testing.T, wire []byte, cut uint8) {
		var want, got flight.FlightData
		werr := proto.Unmarshal(wire, &want)
		gerr := (flightCodec{}).Unmarshal(codecSplit(wire, int(cut)+1), &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("protobuf: %v, codec: %v", werr, gerr)
		}
		if werr == nil && !proto.Equal(&got, &want) {
			t.Fatal("decoded message differs from protobuf's")
		}
	})
}

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
			b.Field(1).(*array.StringBuilder).Append(string(codecBytes(i % 300)))
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
	for _, path := range []string{server.SendPathZeroCopy, server.SendPathStock} {
		srv, err := server.New(server.Config{Root: dir, SendPath: path, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
