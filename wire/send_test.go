package wire

import (
	"bytes"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// countingOwner counts the releases of a message's owner reference.
type countingOwner struct{ n atomic.Int32 }

func (o *countingOwner) Release() { o.n.Add(1) }

// pieces cuts b into pieces of random sizes from seed, as an IPC payload
// hands its body over: buffers and their padding, some tiny, some empty.
func pieces(b []byte, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out [][]byte
	for len(b) > 0 {
		var k int
		switch r.IntN(4) {
		case 0:
			k = r.IntN(8) // padding-sized, possibly empty
		case 1:
			k = r.IntN(2 * tailBytes)
		default:
			k = r.IntN(64 << 10)
		}
		k = min(k, len(b))
		out = append(out, b[:k])
		b = b[k:]
	}
	return out
}

// sendAndReceive lays out a message of header, appMeta and body (by
// reference with an owner when byRef), marshals it with SendCodec and
// checks the bytes against proto.Marshal of the stock message; decodes
// them with ReceiveCodec, both as the send side's buffers and cut into
// frames of frame bytes, and checks the fields; then frees the buffers, as
// the transport does once written, and checks the owner was released
// exactly once, then and not before.
func sendAndReceive(t *testing.T, header, appMeta, body []byte, seed uint64, byRef bool, frame int) {
	t.Helper()
	want := &flight.FlightData{DataHeader: header, AppMetadata: appMeta, DataBody: body}
	wantBytes, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var owner *countingOwner
	var rel Releaser
	if byRef {
		owner = &countingOwner{}
		rel = owner
	}
	bs, err := SendCodec{}.Marshal(NewMessage(header, appMeta, pieces(body, seed), rel))
	if err != nil {
		t.Fatal(err)
	}
	if got := bs.Materialize(); !bytes.Equal(got, wantBytes) {
		t.Fatalf("sent %d bytes, proto.Marshal %d; first difference at %d", len(got), len(wantBytes), firstDiff(got, wantBytes))
	}
	frame = max(frame, len(wantBytes)/4096+1) // a bounded number of frames
	var direct, framed flight.FlightData
	if err := (ReceiveCodec{}).Unmarshal(bs, &direct); err != nil {
		t.Fatalf("decoding the sent buffers: %v", err)
	}
	if err := (ReceiveCodec{}).Unmarshal(codecSplit(wantBytes, frame), &framed); err != nil {
		t.Fatalf("decoding %d-byte frames: %v", frame, err)
	}
	if owner != nil && len(body) > 0 && owner.n.Load() != 0 {
		t.Fatal("owner released before the transport freed the message")
	}
	bs.Free()
	if owner != nil && owner.n.Load() != 1 {
		t.Fatalf("owner released %d times, want once", owner.n.Load())
	}
	for name, got := range map[string]*flight.FlightData{"sent buffers": &direct, "frames": &framed} {
		if !bytes.Equal(got.DataHeader, header) || !bytes.Equal(got.AppMetadata, appMeta) ||
			!bytes.Equal(got.DataBody, body) || got.FlightDescriptor != nil {
			t.Fatalf("%s: decoded message differs: header %d/%d, app_metadata %d/%d, body %d/%d bytes",
				name, len(got.DataHeader), len(header), len(got.AppMetadata), len(appMeta), len(got.DataBody), len(body))
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

func TestSendReceiveShapes(t *testing.T) {
	cases := []struct {
		name                  string
		header, appMeta, body int
	}{
		{"empty", 0, 0, 0},
		{"schema", 200, 0, 0},
		{"schema with metadata", 200, 30, 0},
		{"metadata only", 0, 30, 0},
		{"tiny body", 120, 0, 8},
		{"body under the tail", 120, 0, tailBytes - 1},
		{"body of the tail", 120, 0, tailBytes},
		{"body just over the tail", 120, 0, tailBytes + 1},
		{"body at the copy threshold", 300, 12, CopyBodyBelow},
		{"large body", 300, 12, 3 << 20},
		{"long prefixes", 1 << 14, 1 << 8, 1<<21 + 5},
	}
	for _, c := range cases {
		for _, byRef := range []bool{false, true} {
			for seed := range uint64(3) {
				sendAndReceive(t, codecBytes(c.header), codecBytes(c.appMeta), codecBytes(c.body), seed, byRef, 16<<10)
				if t.Failed() {
					t.Fatalf("%s, by reference %v, seed %d", c.name, byRef, seed)
				}
			}
		}
	}
}

// A message SendMsg never marshalled is released by ReleaseUnsent; one
// that was marshalled belongs to the transport.
func TestMessageReleaseUnsent(t *testing.T) {
	body := [][]byte{codecBytes(CopyBodyBelow)}
	unsent := &countingOwner{}
	NewMessage([]byte("h"), nil, body, unsent).ReleaseUnsent()
	if unsent.n.Load() != 1 {
		t.Errorf("unsent message: owner released %d times, want once", unsent.n.Load())
	}
	sent := &countingOwner{}
	m := NewMessage([]byte("h"), nil, body, sent)
	bs, _ := SendCodec{}.Marshal(m)
	m.ReleaseUnsent()
	if sent.n.Load() != 0 {
		t.Error("ReleaseUnsent released a marshalled message")
	}
	bs.Free()
	m.ReleaseUnsent()
	if sent.n.Load() != 1 {
		t.Errorf("sent message: owner released %d times, want once", sent.n.Load())
	}
	empty := &countingOwner{}
	NewMessage([]byte("h"), nil, nil, empty)
	if empty.n.Load() != 1 {
		t.Error("a message without a body kept its owner")
	}
}

// Anything but a Message goes through the proto codec.
func TestSendCodecOtherMessages(t *testing.T) {
	in := &flight.Ticket{Ticket: []byte("t")}
	bs, err := SendCodec{}.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out flight.Ticket
	if err := (SendCodec{}).Unmarshal(bs, &out); err != nil || !proto.Equal(in, &out) {
		t.Fatalf("got %v, %v", &out, err)
	}
	bs.Free()
}

// FuzzSendReceive is the round trip of both halves of the layout: random
// FlightData laid out by NewMessage and SendCodec, copied or by reference,
// gives the bytes of proto.Marshal, and ReceiveCodec decodes them to the
// same fields.
func FuzzSendReceive(f *testing.F) {
	f.Add([]byte("header"), []byte(`{"rows":1}`), uint32(100), uint64(1), true, uint16(7))
	f.Add([]byte{}, []byte{}, uint32(0), uint64(0), false, uint16(0))
	f.Add(codecBytes(300), []byte{}, uint32(CopyBodyBelow+1), uint64(2), true, uint16(16<<10))
	f.Add(codecBytes(300), []byte("m"), uint32(3*CopyBodyBelow), uint64(3), false, uint16(1000))
	f.Add(codecBytes(130), []byte{}, uint32(tailBytes+3), uint64(4), true, uint16(64))
	f.Fuzz(func(t *testing.T, header, appMeta []byte, bodyLen uint32, seed uint64, byRef bool, frame uint16) {
		body := codecBytes(int(bodyLen % (4 * CopyBodyBelow)))
		sendAndReceive(t, header, appMeta, body, seed, byRef, int(frame)+1)
	})
}

// The buffers a by-reference message goes out as: head, body pieces, and
// a counted tail that is the last buffer.
func TestMessageTailIsCounted(t *testing.T) {
	owner := &countingOwner{}
	bs, _ := SendCodec{}.Marshal(NewMessage([]byte("h"), nil, [][]byte{codecBytes(5000), codecBytes(3)}, owner))
	if len(bs) != 3 {
		t.Fatalf("%d buffers, want head, one body piece and the tail", len(bs))
	}
	if _, ok := bs[len(bs)-1].(mem.SliceBuffer); ok {
		t.Fatal("the tail is an uncounted SliceBuffer: its free would never release the owner")
	}
	if n := bs[len(bs)-1].Len(); n != tailBytes {
		t.Errorf("tail holds %d bytes, want %d", n, tailBytes)
	}
	bs.Free()
	if owner.n.Load() != 1 {
		t.Errorf("owner released %d times", owner.n.Load())
	}
}
