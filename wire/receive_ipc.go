package wire

import (
	"encoding/binary"
	"errors"
)

// The few parts of an Arrow IPC Message flatbuffer (format/Message.fbs)
// that loading a record batch from scattered body buffers needs, read with
// every offset checked against the header's length: the header comes from
// the network, and a flatbuffer reader that trusts its offsets turns a
// corrupt message into an out-of-range panic. arrow-go's own flatbuffer
// accessors are internal to it.

// errBadHeader is a data_header that is not a well-formed IPC message.
var errBadHeader = errors.New("wire: malformed IPC message header")

// IPC message header types (the MessageHeader union's tags).
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
)

// fbTable is a flatbuffer table: the buffer and the table's position.
type fbTable struct {
	b   []byte
	pos int
	vt  int // the vtable's position
	vtn int // the vtable's length in bytes
}

func fbU16(b []byte, at int) (int, bool) {
	if at < 0 || at+2 > len(b) {
		return 0, false
	}
	return int(binary.LittleEndian.Uint16(b[at:])), true
}

func fbU32(b []byte, at int) (int, bool) {
	if at < 0 || at+4 > len(b) {
		return 0, false
	}
	return int(binary.LittleEndian.Uint32(b[at:])), true
}

func fbI64(b []byte, at int) (int64, bool) {
	if at < 0 || at+8 > len(b) {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(b[at:])), true
}

// table reads the table at pos.
func fbTableAt(b []byte, pos int) (fbTable, bool) {
	so, ok := fbU32(b, pos)
	if !ok {
		return fbTable{}, false
	}
	vt := pos - int(int32(uint32(so)))
	vtn, ok := fbU16(b, vt)
	if !ok || vtn < 4 || vt+vtn > len(b) {
		return fbTable{}, false
	}
	return fbTable{b: b, pos: pos, vt: vt, vtn: vtn}, true
}

// field returns the position of field slot's value, or 0 when absent.
func (t fbTable) field(slot int) int {
	at := 4 + 2*slot
	if at+2 > t.vtn {
		return 0
	}
	off, _ := fbU16(t.b, t.vt+at)
	if off == 0 {
		return 0
	}
	return t.pos + off
}

// ref follows the offset stored in field slot (to a table or vector).
func (t fbTable) ref(slot int) (int, bool) {
	at := t.field(slot)
	if at == 0 {
		return 0, true
	}
	off, ok := fbU32(t.b, at)
	if !ok || off == 0 {
		return 0, false
	}
	return at + off, true
}

func (t fbTable) u8(slot int) (int, bool) {
	at := t.field(slot)
	if at == 0 {
		return 0, true
	}
	if at >= len(t.b) {
		return 0, false
	}
	return int(t.b[at]), true
}

func (t fbTable) i64(slot int) (int64, bool) {
	at := t.field(slot)
	if at == 0 {
		return 0, true
	}
	return fbI64(t.b, at)
}

// vector returns the position of the first element and the length of the
// vector in field slot, whose elements are size bytes each.
func (t fbTable) vector(slot, size int) (start, n int, ok bool) {
	at, ok := t.ref(slot)
	if !ok || at == 0 {
		return 0, 0, ok
	}
	n, ok = fbU32(t.b, at)
	if !ok || n > (len(t.b)-at-4)/size {
		return 0, 0, false
	}
	return at + 4, n, true
}

// ipcHeader is a parsed IPC Message.
type ipcHeader struct {
	kind       int // headerSchema, ...
	customMeta bool
	batch      fbTable // the RecordBatch, when kind is headerRecordBatch
}

func parseIPCHeader(b []byte) (ipcHeader, error) {
	root, ok := fbU32(b, 0)
	if !ok {
		return ipcHeader{}, errBadHeader
	}
	msg, ok := fbTableAt(b, root)
	if !ok {
		return ipcHeader{}, errBadHeader
	}
	var h ipcHeader
	if h.kind, ok = msg.u8(1); !ok {
		return ipcHeader{}, errBadHeader
	}
	h.customMeta = msg.field(4) != 0
	if h.kind != headerRecordBatch {
		return h, nil
	}
	at, ok := msg.ref(2)
	if !ok || at == 0 {
		return ipcHeader{}, errBadHeader
	}
	if h.batch, ok = fbTableAt(b, at); !ok {
		return ipcHeader{}, errBadHeader
	}
	return h, nil
}

// recordBatchMeta is what a RecordBatch header says about its body.
type recordBatchMeta struct {
	rows        int64
	nodes, bufs []int64 // pairs: (length, null_count), (offset, length)
	variadic    []int64
	compressed  bool
}

func parseRecordBatch(t fbTable) (recordBatchMeta, error) {
	var m recordBatchMeta
	var ok bool
	if m.rows, ok = t.i64(0); !ok || m.rows < 0 {
		return m, errBadHeader
	}
	pairs := func(slot int) ([]int64, bool) {
		start, n, ok := t.vector(slot, 16)
		if !ok {
			return nil, false
		}
		out := make([]int64, 2*n)
		for i := range out {
			out[i], _ = fbI64(t.b, start+8*i)
			if out[i] < 0 {
				return nil, false
			}
		}
		return out, true
	}
	if m.nodes, ok = pairs(1); !ok {
		return m, errBadHeader
	}
	if m.bufs, ok = pairs(2); !ok {
		return m, errBadHeader
	}
	m.compressed = t.field(3) != 0
	start, n, ok := t.vector(4, 8)
	if !ok {
		return m, errBadHeader
	}
	m.variadic = make([]int64, n)
	for i := range m.variadic {
		m.variadic[i], _ = fbI64(t.b, start+8*i)
	}
	return m, nil
}
