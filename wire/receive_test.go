package wire

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
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
func TestReceiveCodecMatchesProto(t *testing.T) {
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
		msg, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 7, 16 << 10, len(msg) + 1} {
			if size == 1 && len(msg) > 1<<16 {
				continue
			}
			var got flight.FlightData
			if err := (ReceiveCodec{}).Unmarshal(codecSplit(msg, size), &got); err != nil {
				t.Fatalf("%s, %d-byte buffers: %v", name, size, err)
			}
			if !proto.Equal(&got, m) {
				t.Errorf("%s, %d-byte buffers: decoded message differs", name, size)
			}
			if len(got.DataBody) > 0 && size < len(msg) && addr(got.DataBody, 0)%bodyAlign != 0 {
				t.Errorf("%s, %d-byte buffers: data_body at %#x, not %d-byte aligned", name, size, addr(got.DataBody, 0), bodyAlign)
			}
		}
	}
}

// A message in one aligned buffer is not copied: the decoded body is the
// received buffer.
func TestReceiveCodecKeepsSingleBuffer(t *testing.T) {
	prefix := protowire.AppendTag(nil, 1000, protowire.BytesType)
	prefix = protowire.AppendVarint(prefix, 4096)
	raw := make([]byte, 64+4096)
	start := 64 - len(prefix) // body at raw[64], as aligned as raw itself
	copy(raw[start:], prefix)
	msg := raw[start:]
	var got flight.FlightData
	if err := (ReceiveCodec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(msg)}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.DataBody) != 4096 || &got.DataBody[0] != &raw[64] {
		t.Errorf("body was copied")
	}
}

// Unknown, repeated or malformed fields go through protobuf, which keeps
// unknown fields and rejects what is malformed.
func TestReceiveCodecFallsBack(t *testing.T) {
	base, _ := proto.Marshal(&flight.FlightData{DataHeader: []byte("h"), DataBody: []byte("body")})
	unknown := protowire.AppendTag(bytes.Clone(base), 9, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 5)
	repeated := append(bytes.Clone(base), base...)
	for name, msg := range map[string][]byte{"unknown field": unknown, "repeated fields": repeated} {
		var got, want flight.FlightData
		if err := proto.Unmarshal(msg, &want); err != nil {
			t.Fatal(err)
		}
		if err := (ReceiveCodec{}).Unmarshal(codecSplit(msg, 3), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !proto.Equal(&got, &want) {
			t.Errorf("%s: decoded message differs from protobuf's", name)
		}
	}
	var got flight.FlightData
	if err := (ReceiveCodec{}).Unmarshal(codecSplit(base[:len(base)-1], 2), &got); err == nil {
		t.Error("truncated message accepted")
	}
}

// The codec agrees with protobuf on any input: same message, or both fail.
func FuzzReceiveCodec(f *testing.F) {
	for _, m := range []*flight.FlightData{{}, {DataHeader: []byte("hdr"), AppMetadata: []byte("m"), DataBody: codecBytes(100)},
		{FlightDescriptor: &flight.FlightDescriptor{Path: []string{"a"}}, DataBody: []byte("b")}} {
		b, _ := proto.Marshal(m)
		f.Add(b, uint8(3))
	}
	f.Fuzz(func(t *testing.T, msg []byte, cut uint8) {
		var want, got flight.FlightData
		werr := proto.Unmarshal(msg, &want)
		gerr := (ReceiveCodec{}).Unmarshal(codecSplit(msg, int(cut)+1), &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("protobuf: %v, codec: %v", werr, gerr)
		}
		if werr == nil && !proto.Equal(&got, &want) {
			t.Fatal("decoded message differs from protobuf's")
		}
		// Into a Received: the same fields, the body as pieces.
		var r Received
		rerr := (ReceiveCodec{}).Unmarshal(codecSplit(msg, int(cut)+1), &r)
		if (werr == nil) != (rerr == nil) {
			t.Fatalf("protobuf: %v, codec into Received: %v", werr, rerr)
		}
		if werr != nil {
			return
		}
		body := make([]byte, r.BodyLen())
		r.copyOut(body, 0)
		r.Free()
		if !bytes.Equal(r.Header, want.DataHeader) || !bytes.Equal(r.AppMetadata, want.AppMetadata) ||
			!bytes.Equal(body, want.DataBody) || !proto.Equal(r.Descriptor, want.FlightDescriptor) {
			t.Fatal("Received differs from protobuf's message")
		}
	})
}

// BenchmarkReceiveCodec decodes a FlightData message as gRPC hands it
// over: its HTTP/2 frames' 16 KiB buffers. The copy into one aligned
// buffer is the codec's whole cost; B/s is its rate (the gather the Go
// client pays once per message byte, on top of gRPC's own copy of each
// frame out of its read buffer).
//
//	go test ./wire -run XXX -bench ReceiveCodec -benchmem -count 6
func BenchmarkReceiveCodec(b *testing.B) {
	for _, size := range []int{256 << 10, 4 << 20} {
		msg, err := proto.Marshal(&flight.FlightData{DataHeader: codecBytes(300), DataBody: codecBytes(size)})
		if err != nil {
			b.Fatal(err)
		}
		data := codecSplit(msg, 16<<10)
		b.Run(fmt.Sprintf("body=%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			var fd flight.FlightData
			for b.Loop() {
				if err := (ReceiveCodec{}).Unmarshal(data, &fd); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The same copy into one buffer reused: what the gather costs
		// without a fresh allocation per message.
		b.Run(fmt.Sprintf("body=%dKiB/reused-buffer", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			buf := make([]byte, len(msg))
			for b.Loop() {
				data.CopyTo(buf)
			}
		})
	}
}
