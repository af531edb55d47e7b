package wire

import (
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the fallback codec
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// FlightData field numbers (arrow/format/Flight.proto). proto.Marshal
// writes the fields in number order and omits empty bytes fields; so does
// NewMessage, and the receive codec expects nothing else on its fast path.
const (
	fieldDescriptor  = 1
	fieldDataHeader  = 2
	fieldAppMetadata = 3
	fieldDataBody    = 1000
)

const (
	// CopyBodyBelow is the body size below which copying a body into the
	// message costs less than referencing it (the tail copy, the buffer
	// list and the owner's reference): senders pass a nil owner for
	// smaller bodies.
	CopyBodyBelow = 32 << 10
	// tailBytes is how much of the body end is copied into the tail buffer
	// that carries the release hook. The buffer must exceed gRPC's pooling
	// threshold (mem.BufferPoolingThreshold, 1 KiB) to be reference
	// counted at all, hence 2 KiB buffers holding up to 1 KiB.
	tailBytes = 1 << 10
)

// A Releaser drops one reference to what a message's body belongs to;
// arrow.RecordBatch is one.
type Releaser interface{ Release() }

// Message is a FlightData message laid out for SendCodec: a head (the field
// prefixes, data_header and app_metadata, copied), then either the body
// copied into the head or the body's pieces by reference followed by a
// tail buffer holding the body's last bytes. gRPC's HTTP/2 writer consumes
// a message's buffers in order and frees each once written, so the tail
// is freed, and the owner released, only after every byte before it went
// to the socket.
type Message struct {
	head  *[]byte  // from headPool; with the body when it is copied
	body  [][]byte // the body by reference; nil when copied into head
	n     int      // bytes in body
	owner Releaser // keeps body valid; nil when the body is copied
	taken atomic.Bool
	done  atomic.Bool
}

var headPool = mem.DefaultBufferPool()

// NewMessage lays out a FlightData message of header, appMeta and body, the
// concatenation of its pieces. With a nil owner the body is copied into
// the message. Otherwise the message references the pieces and takes over
// owner, a reference that keeps them valid, and releases it exactly once:
// when the transport has written the body, or on ReleaseUnsent.
func NewMessage(header, appMeta []byte, body [][]byte, owner Releaser) *Message {
	n := 0
	for _, p := range body {
		n += len(p)
	}
	if owner != nil && n == 0 {
		owner.Release() // nothing to keep alive
		owner = nil
	}
	size := prefixedSize(fieldDataHeader, len(header)) + prefixedSize(fieldAppMetadata, len(appMeta))
	if n > 0 {
		size += protowire.SizeTag(fieldDataBody) + protowire.SizeVarint(uint64(n))
	}
	if owner == nil {
		size += n
	}
	hp := headPool.Get(size)
	head := appendField((*hp)[:0], fieldDataHeader, header)
	head = appendField(head, fieldAppMetadata, appMeta)
	if n > 0 {
		head = protowire.AppendTag(head, fieldDataBody, protowire.BytesType)
		head = protowire.AppendVarint(head, uint64(n))
	}
	m := &Message{head: hp}
	if owner == nil {
		for _, p := range body {
			head = append(head, p...)
		}
		*hp = head
		return m
	}
	*hp = head
	m.body = append(make([][]byte, 0, len(body)), body...)
	m.n, m.owner = n, owner
	return m
}

func prefixedSize(num protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func appendField(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// ReleaseUnsent frees a message SendCodec never marshalled, as when
// SendMsg failed before encoding it. Once marshalled, the message belongs
// to the transport and ReleaseUnsent does nothing.
func (m *Message) ReleaseUnsent() {
	if !m.taken.Load() {
		m.release()
	}
}

// release frees the head, unless the transport owns it, and releases the
// owner, once, whoever calls first: the transport freeing the tail or
// ReleaseUnsent.
func (m *Message) release() {
	if !m.done.CompareAndSwap(false, true) {
		return
	}
	if !m.taken.Load() {
		headPool.Put(m.head)
	}
	if m.owner != nil {
		m.owner.Release()
		m.owner = nil
	}
}

// buffers builds the message for the transport. Ownership of head and of
// the owner reference passes to the returned buffers.
func (m *Message) buffers() mem.BufferSlice {
	m.taken.Store(true)
	if m.owner == nil {
		m.done.Store(true)
		return mem.BufferSlice{mem.NewBuffer(m.head, headPool)}
	}
	// Cut the last tailBytes of the body off the pieces.
	pieces := m.body
	t := min(tailBytes, m.n)
	tp := tailPool.Get().(*[]byte)
	tail := (*tp)[:t]
	for k := t; k > 0; {
		last := pieces[len(pieces)-1]
		c := min(k, len(last))
		copy(tail[k-c:k], last[len(last)-c:])
		k -= c
		if c == len(last) {
			pieces = pieces[:len(pieces)-1]
		} else {
			pieces[len(pieces)-1] = last[:len(last)-c]
		}
	}
	*tp = tail
	out := make(mem.BufferSlice, 0, len(pieces)+2)
	out = append(out, mem.NewBuffer(m.head, headPool))
	for _, p := range pieces {
		out = append(out, mem.SliceBuffer(p))
	}
	m.body = nil
	return append(out, mem.NewBuffer(tp, (*tailReleaser)(m)))
}

var tailPool = sync.Pool{New: func() any { b := make([]byte, 0, 2*tailBytes); return &b }}

// tailReleaser is the mem.BufferPool of a message's tail buffer: putting
// the tail back releases the message.
type tailReleaser Message

func (r *tailReleaser) Get(int) *[]byte { panic("wire: tailReleaser.Get") }

func (r *tailReleaser) Put(b *[]byte) {
	*b = (*b)[:0]
	tailPool.Put(b)
	(*Message)(r).release()
}

// SendCodec is the gRPC codec of the sending side
// (grpc.ForceServerCodecV2): a *Message goes out as its buffers, the body
// by reference; everything else goes through the standard proto codec.
// It is stateless and safe for concurrent use.
type SendCodec struct{}

var protoCodec = encoding.GetCodecV2("proto")

func (SendCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*Message); ok {
		return m.buffers(), nil
	}
	return protoCodec.Marshal(v)
}

func (SendCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return protoCodec.Unmarshal(data, v)
}

// Name is "proto": the bytes on the wire are protobuf.
func (SendCodec) Name() string { return "proto" }
