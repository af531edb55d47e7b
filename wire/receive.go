package wire

import (
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// ReceiveCodec is the gRPC codec of the receiving side
// (grpc.ForceCodecV2): it decodes FlightData messages without copying
// their body more than once.
//
// gRPC hands a received message over as the buffers its HTTP/2 frames
// arrived in. The standard proto codec copies them into one pooled buffer
// and protobuf then copies data_header and data_body out of it. This codec
// copies the frames once, into a buffer that the message keeps, placed so
// that data_body starts 64-byte aligned, and points data_header,
// app_metadata and data_body into it; the Arrow arrays decoded from the
// message are slices of that buffer. A message that arrived in a single,
// suitably aligned buffer is not copied at all: the codec keeps a
// reference to gRPC's buffer, which then goes to the garbage collector
// rather than back to gRPC's pool.
//
// Every other message, and any FlightData this parser does not expect
// (unknown or repeated fields), goes through the standard proto codec. The
// bytes on the wire are plain protobuf: any Flight server works. It is
// stateless and safe for concurrent use.
type ReceiveCodec struct{}

// bodyAlign is the alignment of data_body in a copied message: the IPC
// format's recommended buffer alignment.
const bodyAlign = 64

// Name is "proto", so that the content-type stays application/grpc+proto.
func (ReceiveCodec) Name() string { return "proto" }

func (ReceiveCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (ReceiveCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if m, ok := v.(*Received); ok {
		return m.load(data)
	}
	fd, ok := v.(*flight.FlightData)
	if !ok {
		return protoCodec.Unmarshal(data, v)
	}
	var l flightLayout
	if !l.scan(data) {
		return protoCodec.Unmarshal(data, v)
	}
	var buf []byte
	if len(data) == 1 && (l.body.n == 0 || addr(data[0].ReadOnlyData(), l.body.off)%8 == 0) {
		data[0].Ref() // never freed: the message keeps the buffer
		buf = data[0].ReadOnlyData()
	} else {
		n := data.Len()
		raw := uninitialized(n + bodyAlign - 1)
		shift := 0
		if l.body.n > 0 {
			shift = int((bodyAlign - addr(raw, l.body.off)%bodyAlign) % bodyAlign)
		}
		buf = raw[shift : shift+n : shift+n]
		data.CopyTo(buf)
	}
	fd.Reset()
	if l.hasDesc {
		fd.FlightDescriptor = &flight.FlightDescriptor{}
		if err := proto.Unmarshal(l.desc.of(buf), fd.FlightDescriptor); err != nil {
			return err
		}
	}
	fd.DataHeader = l.header.of(buf)
	fd.AppMetadata = l.appMeta.of(buf)
	fd.DataBody = l.body.of(buf)
	return nil
}

// uninitialized returns a garbage-collected byte slice of length n whose
// contents are not cleared: the codec overwrites every byte it exposes
// (CopyTo fills the message; the alignment slack before it is never
// read). make would clear it first, which was 12 % of the client's CPU
// receiving string batches. strings.Builder is the standard library's
// one way to such memory (its Grow does not clear); the builder is
// dropped at once, so the bytes are never seen as a string.
func uninitialized(n int) []byte {
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0)
	return unsafe.Slice(unsafe.StringData(sb.String()), n)
}

// addr is the address b[off] would have.
func addr(b []byte, off int) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(off)
}

// span is a field's value in the message.
type span struct{ off, n int }

// of returns the span's bytes in buf, nil when empty (as protobuf leaves
// an absent proto3 bytes field).
func (s span) of(buf []byte) []byte {
	if s.n == 0 {
		return nil
	}
	return buf[s.off : s.off+s.n : s.off+s.n]
}

// flightLayout is where a FlightData message's fields are.
type flightLayout struct {
	desc, header, appMeta, body span
	hasDesc                     bool
}

// scan finds the fields of the message in data, reading only the field
// prefixes. It reports false for anything the fast path leaves to
// protobuf: malformed input, unknown fields, a field given twice.
func (l *flightLayout) scan(data mem.BufferSlice) bool {
	c := cursor{data: data, left: data.Len()}
	seen := 0
	for c.left > 0 {
		tag, ok := c.varint()
		if !ok {
			return false
		}
		num, typ := protowire.DecodeTag(tag)
		if typ != protowire.BytesType {
			return false
		}
		n, ok := c.varint()
		if !ok || n > uint64(c.left) {
			return false
		}
		s := span{off: c.pos, n: int(n)}
		var bit int
		switch num {
		case fieldDescriptor:
			l.desc, l.hasDesc, bit = s, true, 1
		case fieldDataHeader:
			l.header, bit = s, 2
		case fieldAppMetadata:
			l.appMeta, bit = s, 4
		case fieldDataBody:
			l.body, bit = s, 8
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		c.skip(int(n))
	}
	return true
}

// cursor reads a BufferSlice front to back.
type cursor struct {
	data mem.BufferSlice
	i, j int // buffer, offset in it
	pos  int // offset in the message
	left int
}

func (c *cursor) byte() byte {
	for {
		b := c.data[c.i].ReadOnlyData()
		if c.j < len(b) {
			v := b[c.j]
			c.j++
			c.pos++
			c.left--
			return v
		}
		c.i, c.j = c.i+1, 0
	}
}

func (c *cursor) varint() (uint64, bool) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		if c.left == 0 {
			return 0, false
		}
		b := c.byte()
		if shift == 63 && b > 1 {
			return 0, false // overflows 64 bits
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, true
		}
	}
	return 0, false
}

func (c *cursor) skip(n int) {
	c.pos += n
	c.left -= n
	for n > 0 {
		b := c.data[c.i].ReadOnlyData()
		k := min(n, len(b)-c.j)
		n -= k
		c.j += k
		if c.j == len(b) && n > 0 {
			c.i, c.j = c.i+1, 0
		}
	}
}
