package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/endian"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// Received is a FlightData message as ReceiveCodec decodes it when asked
// to decode into one (RecvMsg(&Received{})): data_header, app_metadata and
// the descriptor are copied out (they are small), and data_body stays
// where gRPC received it, as pieces of gRPC's buffers, each holding a
// reference (mem.Buffer.Ref) on its buffer. Free drops the references a
// Reader did not take over.
type Received struct {
	Descriptor  *flight.FlightDescriptor
	Header      []byte
	AppMetadata []byte
	body        []piece
	bodyLen     int
}

// piece is a part of data_body in one of gRPC's buffers.
type piece struct {
	buf   mem.Buffer // one reference, owned by the message until taken
	bytes []byte     // the part of buf's data that is body
	off   int        // where bytes start in the body
}

// BodyLen is the length of data_body.
func (m *Received) BodyLen() int { return m.bodyLen }

// Free releases the body's buffers to gRPC. The message's Header and
// AppMetadata stay valid.
func (m *Received) Free() {
	for _, p := range m.body {
		if p.buf != nil {
			p.buf.Free()
		}
	}
	m.body, m.bodyLen = nil, 0
}

// load points m at the message in data, taking a reference on each of
// data's buffers that holds part of the body.
func (m *Received) load(data mem.BufferSlice) error {
	m.Free()
	*m = Received{}
	var l flightLayout
	if !l.scan(data) {
		// Anything the layout scan does not expect, protobuf decodes.
		fd := &flight.FlightData{}
		if err := protoCodec.Unmarshal(data, fd); err != nil {
			return err
		}
		m.Descriptor, m.Header, m.AppMetadata = fd.FlightDescriptor, fd.DataHeader, fd.AppMetadata
		if len(fd.DataBody) > 0 {
			m.body = []piece{{buf: mem.SliceBuffer(fd.DataBody), bytes: fd.DataBody}}
			m.bodyLen = len(fd.DataBody)
		}
		return nil
	}
	if l.hasDesc {
		m.Descriptor = &flight.FlightDescriptor{}
		if err := proto.Unmarshal(gather(data, l.desc), m.Descriptor); err != nil {
			return err
		}
	}
	m.Header = gather(data, l.header)
	m.AppMetadata = gather(data, l.appMeta)
	if l.body.n == 0 {
		return nil
	}
	end := l.body.off + l.body.n
	pos := 0
	for _, b := range data {
		d := b.ReadOnlyData()
		lo, hi := max(pos, l.body.off), min(pos+len(d), end)
		if lo < hi {
			b.Ref()
			m.body = append(m.body, piece{buf: b, bytes: d[lo-pos : hi-pos : hi-pos], off: lo - l.body.off})
		}
		pos += len(d)
		if pos >= end {
			break
		}
	}
	m.bodyLen = l.body.n
	return nil
}

// gather copies s's bytes out of data; nil when empty.
func gather(data mem.BufferSlice, s span) []byte {
	if s.n == 0 {
		return nil
	}
	out := make([]byte, s.n)
	pos := 0
	for _, b := range data {
		d := b.ReadOnlyData()
		lo, hi := max(pos, s.off), min(pos+len(d), s.off+s.n)
		if lo < hi {
			copy(out[lo-s.off:], d[lo-pos:hi-pos])
		}
		pos += len(d)
		if pos >= s.off+s.n {
			break
		}
	}
	return out
}

// unalignedOK is whether Arrow buffers may start at any address: the
// architectures where Go and the hardware load unaligned words (and
// checkptr allows pointer-free types at any address). Elsewhere a buffer
// is sliced in place only when 8-byte aligned, and copied otherwise.
var unalignedOK = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" || runtime.GOARCH == "386"

// grpcBuffer is the owner of an Arrow buffer that slices one of gRPC's
// receive buffers: memory.Buffer calls Free when the last array using it
// is released, and Free drops the gRPC reference, which returns the buffer
// to gRPC's pool once gRPC is done with it too. The buffer is never
// resized, so Allocate and Reallocate are never called.
type grpcBuffer struct{ b mem.Buffer }

func (g *grpcBuffer) Allocate(int) []byte           { panic("wire: allocate on a received buffer") }
func (g *grpcBuffer) Reallocate(int, []byte) []byte { panic("wire: reallocate a received buffer") }
func (g *grpcBuffer) Free([]byte)                   { g.b.Free() }

// owned turns p into an Arrow buffer that owns p's gRPC reference.
func owned(p *piece) *memory.Buffer {
	b := memory.NewBufferWithAllocator(p.bytes, &grpcBuffer{p.buf})
	p.buf = nil
	return b
}

// inPlace is whether an Arrow buffer may start at b.
func inPlace(b []byte) bool {
	return unalignedOK || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0
}

func errorf(format string, args ...any) error { return fmt.Errorf("wire: "+format, args...) }

// Reader reads the record batches of a Flight stream whose messages
// ReceiveCodec decoded into Received: an array.RecordReader like
// flight.NewRecordReader's, without gathering each message's body into
// one buffer first.
//
// A record batch's Arrow buffers are slices of gRPC's receive buffers
// where one received buffer holds a whole Arrow buffer; a buffer that
// straddles two received buffers is copied into memory from the Reader's
// allocator. Either way the batch owns its memory explicitly: each
// received buffer it slices keeps a gRPC reference that is dropped when
// the last array slicing it is released, which returns the buffer to
// gRPC's pool, and each copy goes back to the allocator the same way.
// Received buffers no batch slices are freed as soon as the message is
// decoded.
//
// Schemas whose columns this loader does not build (dictionaries, views,
// unions, run-end encoding, another endianness), and messages it does not
// (compressed bodies, batch metadata), go to arrow-go's IPC reader, with
// the body in place when it arrived in one buffer and gathered into one
// allocation otherwise.
type Reader struct {
	recv    func() (*Received, error)
	mem     memory.Allocator // arrow-go's reader's
	copyMem memory.Allocator // the copies'
	schema  *arrow.Schema
	direct  bool // record batches load here; false: all go to arrow-go
	ipc     *ipc.Reader
	feed    *feeder
	rec     arrow.RecordBatch
	err     error
	refs    atomic.Int64
}

var _ array.RecordReader = (*Reader)(nil)

// NewReader reads the stream that recv returns message by message,
// starting with its schema; recv returns io.EOF at the end of the stream.
// The Reader frees each message once it has decoded it. alloc allocates
// the copies of straddling buffers and everything arrow-go's reader
// allocates; nil means a pool that recycles the copies' memory (and
// memory.DefaultAllocator for arrow-go).
func NewReader(recv func() (*Received, error), alloc memory.Allocator) (*Reader, error) {
	r := &Reader{recv: recv, mem: alloc, copyMem: alloc}
	if alloc == nil {
		r.mem, r.copyMem = memory.DefaultAllocator, &theCopyPool
	}
	r.feed = &feeder{r: r}
	m, err := recv()
	if err != nil {
		return nil, err
	}
	h, err := parseIPCHeader(m.Header)
	if err != nil {
		m.Free()
		return nil, err
	}
	if h.kind != headerSchema {
		m.Free()
		return nil, errorf("the stream starts with a message of type %d, not a schema", h.kind)
	}
	r.feed.queue(r.message(m))
	rdr, err := ipc.NewReaderFromMessageReader(r.feed, ipc.WithAllocator(r.mem))
	if err != nil {
		r.feed.Release()
		return nil, err
	}
	r.ipc, r.schema = rdr, rdr.Schema()
	r.refs.Add(1)
	r.direct = r.schema.Endianness() == endian.NativeEndian && loadable(r.schema)
	return r, nil
}

// Schema returns the stream's schema.
func (r *Reader) Schema() *arrow.Schema { return r.schema }

// RecordBatch returns the current batch, valid until the next call to
// Next; Retain it to keep it longer.
func (r *Reader) RecordBatch() arrow.RecordBatch { return r.rec }

// Record returns the current batch.
//
// Deprecated: use RecordBatch.
func (r *Reader) Record() arrow.RecordBatch { return r.rec }

// Err returns the error that ended the stream, nil at its clean end.
func (r *Reader) Err() error { return r.err }

// Retain adds a reference to the reader.
func (r *Reader) Retain() { r.refs.Add(1) }

// Release drops a reference; the last one releases the current batch and
// the reader's state (batches the caller retained stay valid).
func (r *Reader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	if r.ipc != nil {
		r.ipc.Release()
		r.ipc = nil
	}
	r.feed.Release()
}

// Next decodes the next record batch.
func (r *Reader) Next() bool {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	if r.err != nil {
		return false
	}
	if !r.direct {
		return r.viaIPC()
	}
	m, err := r.recv()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = err
		}
		return false
	}
	defer m.Free()
	h, err := parseIPCHeader(m.Header)
	if err != nil {
		r.err = err
		return false
	}
	if h.kind != headerRecordBatch {
		r.err = errorf("unexpected IPC message of type %d in a stream without dictionaries", h.kind)
		return false
	}
	meta, err := parseRecordBatch(h.batch)
	if err != nil {
		r.err = err
		return false
	}
	if meta.compressed || h.customMeta {
		if meta.compressed {
			if err := checkCompressed(meta, m); err != nil {
				r.err = err
				return false
			}
		}
		r.feed.queue(r.message(m))
		return r.viaIPC()
	}
	r.rec, r.err = r.load(meta, m)
	return r.err == nil
}

// maxDecompressed bounds the bytes a compressed record batch may say its
// buffers decompress to (a variable so that the fuzz test can lower it).
var maxDecompressed int64 = 1 << 30

// checkCompressed checks what arrow-go's reader trusts in a compressed
// batch: that each buffer lies within the body and starts with its
// uncompressed length, and that those lengths add up to something
// allocatable.
func checkCompressed(meta recordBatchMeta, m *Received) error {
	var total int64
	for i := 0; i+1 < len(meta.bufs); i += 2 {
		off, n := meta.bufs[i], meta.bufs[i+1]
		if n == 0 {
			continue
		}
		if off > int64(m.bodyLen) || n > int64(m.bodyLen)-off || n < 8 {
			return errorf("compressed buffer at %d of %d bytes does not fit the %d-byte body", off, n, m.bodyLen)
		}
		var prefix [8]byte
		m.copyOut(prefix[:], int(off))
		size := int64(binary.LittleEndian.Uint64(prefix[:]))
		if size == -1 {
			continue // stored uncompressed
		}
		if size < 0 || size > maxDecompressed-total {
			return errorf("compressed buffers decompress to more than %d bytes", maxDecompressed)
		}
		total += size
	}
	return nil
}

// copyOut copies the body's bytes from off into dst.
func (m *Received) copyOut(dst []byte, off int) {
	for _, p := range m.body {
		if off >= p.off+len(p.bytes) || len(dst) == 0 {
			continue
		}
		n := copy(dst, p.bytes[off-p.off:])
		dst, off = dst[n:], off+n
	}
}

// viaIPC has arrow-go's reader decode the next batch.
func (r *Reader) viaIPC() bool {
	if !r.ipc.Next() {
		r.err = r.ipc.Err()
		return false
	}
	r.rec = r.ipc.RecordBatch()
	r.rec.Retain()
	return true
}

// message turns m into an arrow-go IPC message, taking its body: in place
// when it is one received buffer, otherwise gathered into one allocation.
func (r *Reader) message(m *Received) *ipc.Message {
	defer m.Free()
	meta := memory.NewBufferBytes(m.Header)
	var body *memory.Buffer
	switch {
	case len(m.body) == 1 && inPlace(m.body[0].bytes):
		body = owned(&m.body[0])
	default:
		body = memory.NewResizableBuffer(r.copyMem)
		body.Resize(m.bodyLen)
		for _, p := range m.body {
			copy(body.Bytes()[p.off:], p.bytes)
		}
	}
	defer body.Release()
	return ipc.NewMessage(meta, body)
}

// feeder is the MessageReader of arrow-go's reader: the message queued
// for it, or else, when the reader decodes the whole stream, the next
// message received. It releases each message when asked for the next,
// as arrow-go's own message readers do.
type feeder struct {
	r      *Reader
	next   *ipc.Message
	served *ipc.Message
}

func (f *feeder) queue(m *ipc.Message) {
	if f.next != nil {
		f.next.Release()
	}
	f.next = m
}

func (f *feeder) Message() (*ipc.Message, error) {
	if f.served != nil {
		f.served.Release()
		f.served = nil
	}
	if f.next != nil {
		f.served, f.next = f.next, nil
		return f.served, nil
	}
	if f.r.direct {
		return nil, io.EOF
	}
	m, err := f.r.recv()
	if err != nil {
		return nil, err
	}
	f.served = f.r.message(m)
	return f.served, nil
}

func (f *feeder) Retain() {}

func (f *feeder) Release() {
	f.queue(nil)
	if f.served != nil {
		f.served.Release()
		f.served = nil
	}
}

// loadable reports whether every column of s is a type load builds.
func loadable(s *arrow.Schema) bool {
	for _, f := range s.Fields() {
		if !loadableType(f.Type, 0) {
			return false
		}
	}
	return true
}

// maxDepth bounds the nesting of loaded types, as arrow-go's reader does.
const maxDepth = 64

func loadableType(dt arrow.DataType, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch dt := dt.(type) {
	case *arrow.NullType, *arrow.BooleanType,
		*arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type,
		*arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type,
		arrow.DecimalType,
		*arrow.Time32Type, *arrow.Time64Type,
		*arrow.TimestampType,
		*arrow.Date32Type, *arrow.Date64Type,
		*arrow.MonthIntervalType, *arrow.DayTimeIntervalType, *arrow.MonthDayNanoIntervalType,
		*arrow.DurationType,
		*arrow.BinaryType, *arrow.StringType, *arrow.LargeStringType, *arrow.LargeBinaryType,
		*arrow.FixedSizeBinaryType:
		return true
	case *arrow.ListType:
		return loadableType(dt.Elem(), depth+1)
	case *arrow.LargeListType:
		return loadableType(dt.Elem(), depth+1)
	case *arrow.FixedSizeListType:
		return loadableType(dt.Elem(), depth+1)
	case *arrow.MapType:
		return loadableType(dt.Elem(), depth+1)
	case *arrow.StructType:
		for _, f := range dt.Fields() {
			if !loadableType(f.Type, depth+1) {
				return false
			}
		}
		return true
	case arrow.ExtensionType:
		return loadableType(dt.StorageType(), depth+1)
	}
	return false
}

// loader builds one record batch's arrays from its header and body.
type loader struct {
	meta    recordBatchMeta
	node    int // next node
	buf     int // next buffer
	body    []piece
	bodyLen int
	parents []*memory.Buffer // per piece: the owned buffer, once sliced
	mem     memory.Allocator
}

// load builds the batch m carries. Arrays that cannot be built from what
// the header says (a buffer outside the body, one too short for its
// array) are errors, never panics.
func (r *Reader) load(meta recordBatchMeta, m *Received) (rec arrow.RecordBatch, err error) {
	l := &loader{meta: meta, body: m.body, bodyLen: m.bodyLen, parents: make([]*memory.Buffer, len(m.body)), mem: r.copyMem}
	cols := make([]arrow.Array, 0, r.schema.NumFields())
	defer func() {
		if p := recover(); p != nil {
			err = errorf("record batch does not match its header: %v", p)
		}
		for _, c := range cols {
			c.Release()
		}
		for _, p := range l.parents {
			if p != nil {
				p.Release() // the batch's arrays hold their own references
			}
		}
	}()
	for _, f := range r.schema.Fields() {
		d, err := l.array(f.Type)
		if err != nil {
			return nil, err
		}
		a := array.MakeFromData(d)
		d.Release()
		cols = append(cols, a)
		if int64(a.Len()) != meta.rows {
			return nil, errorf("column %s has %d rows, the batch %d", f.Name, a.Len(), meta.rows)
		}
	}
	return array.NewRecordBatch(r.schema, cols, meta.rows), nil
}

func (l *loader) nextNode() (length, nulls int64, err error) {
	if 2*l.node+1 >= len(l.meta.nodes) {
		return 0, 0, errorf("record batch header has %d field nodes, the schema needs more", len(l.meta.nodes)/2)
	}
	length, nulls = l.meta.nodes[2*l.node], l.meta.nodes[2*l.node+1]
	l.node++
	if nulls > length || length > math.MaxInt32 {
		return 0, 0, errorf("field node of %d values with %d nulls", length, nulls)
	}
	return length, nulls, nil
}

// nextBuffer returns the next Arrow buffer of the body: nil when empty, a
// slice of the received buffer that holds all of it, or a copy.
func (l *loader) nextBuffer() (*memory.Buffer, error) {
	if 2*l.buf+1 >= len(l.meta.bufs) {
		return nil, errorf("record batch header has %d buffers, the schema needs more", len(l.meta.bufs)/2)
	}
	off, n := l.meta.bufs[2*l.buf], l.meta.bufs[2*l.buf+1]
	l.buf++
	if n == 0 {
		return nil, nil
	}
	if off > int64(l.bodyLen) || n > int64(l.bodyLen)-off {
		return nil, errorf("buffer at %d of %d bytes is outside the %d-byte body", off, n, l.bodyLen)
	}
	start, end := int(off), int(off+n)
	k := sort.Search(len(l.body), func(i int) bool { return l.body[i].off+len(l.body[i].bytes) > start })
	p := &l.body[k]
	if end <= p.off+len(p.bytes) && inPlace(p.bytes[start-p.off:]) {
		if l.parents[k] == nil {
			l.parents[k] = owned(p)
		}
		return memory.SliceBuffer(l.parents[k], start-p.off, int(n)), nil
	}
	b := memory.NewResizableBuffer(l.mem)
	b.Resize(int(n))
	dst := b.Bytes()
	for at := start; at < end; k++ {
		p := &l.body[k]
		at += copy(dst[at-start:], p.bytes[at-p.off:])
	}
	return b, nil
}

// validity returns the validity buffer of a node: the next buffer, or
// nil when the node has no nulls (then the buffer is skipped).
func (l *loader) validity(nulls int64) (*memory.Buffer, error) {
	if nulls == 0 {
		if 2*l.buf+1 >= len(l.meta.bufs) {
			return nil, errorf("record batch header has %d buffers, the schema needs more", len(l.meta.bufs)/2)
		}
		l.buf++
		return nil, nil
	}
	return l.nextBuffer()
}

// array loads the next column (or child) of type dt, in the IPC format's
// order: a node, then the type's buffers, then its children; and checks
// that the buffers are large enough for the node, so that a corrupt
// message is an error here rather than a panic where the arrays are read.
func (l *loader) array(dt arrow.DataType) (arrow.ArrayData, error) {
	length, nulls, err := l.nextNode()
	if err != nil {
		return nil, err
	}
	if _, ok := dt.(*arrow.NullType); ok {
		return array.NewData(dt, int(length), nil, nil, int(nulls), 0), nil
	}
	if ext, ok := dt.(arrow.ExtensionType); ok {
		l.node-- // the storage's node is the extension's
		st, err := l.array(ext.StorageType())
		if err != nil {
			return nil, err
		}
		defer st.Release()
		return array.NewData(dt, st.Len(), st.Buffers(), st.Children(), st.NullN(), 0), nil
	}
	nbufs := 2 // validity and values (or offsets)
	switch dt.(type) {
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		nbufs = 3
	case *arrow.StructType, *arrow.FixedSizeListType:
		nbufs = 1
	}
	bufs := make([]*memory.Buffer, 0, nbufs)
	defer func() { memory.ReleaseBuffers(bufs) }()
	v, err := l.validity(nulls)
	if err != nil {
		return nil, err
	}
	bufs = append(bufs, v)
	for len(bufs) < nbufs {
		b, err := l.nextBuffer()
		if err != nil {
			return nil, err
		}
		bufs = append(bufs, b)
	}
	var elems []arrow.DataType
	switch dt := dt.(type) {
	case *arrow.ListType:
		elems = []arrow.DataType{dt.Elem()}
	case *arrow.LargeListType:
		elems = []arrow.DataType{dt.Elem()}
	case *arrow.FixedSizeListType:
		elems = []arrow.DataType{dt.Elem()}
	case *arrow.MapType:
		elems = []arrow.DataType{dt.Elem()}
	case *arrow.StructType:
		for _, f := range dt.Fields() {
			elems = append(elems, f.Type)
		}
	}
	children := make([]arrow.ArrayData, 0, len(elems))
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	for _, e := range elems {
		c, err := l.array(e)
		if err != nil {
			return nil, err
		}
		children = append(children, c)
	}
	if err := checkSizes(dt, length, bufs, children); err != nil {
		return nil, err
	}
	return array.NewData(dt, int(length), bufs, children, int(nulls), 0), nil
}

// checkSizes checks that a node's buffers and children hold its length
// values: the validity bitmap and fixed-width values by size, offsets by
// size and by their entries, which must not decrease and must lie within
// the data or child they index, so that reading any value of the arrays
// stays inside their buffers.
func checkSizes(dt arrow.DataType, length int64, bufs []*memory.Buffer, children []arrow.ArrayData) error {
	need := func(b *memory.Buffer, n int64, what string) error {
		if n > 0 && (b == nil || int64(b.Len()) < n) {
			got := 0
			if b != nil {
				got = b.Len()
			}
			return errorf("%s buffer of a %s node of %d values has %d bytes, needs %d", what, dt, length, got, n)
		}
		return nil
	}
	if bufs[0] != nil {
		if err := need(bufs[0], (length+7)/8, "validity"); err != nil {
			return err
		}
	}
	offsets := func(width int64, limit int64) error {
		if length == 0 {
			return nil
		}
		if err := need(bufs[1], (length+1)*width, "offsets"); err != nil {
			return err
		}
		b := bufs[1].Bytes()
		at := func(i int64) int64 {
			if width == 4 {
				return int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
			}
			return int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		prev := at(0)
		if prev < 0 {
			return errorf("%s node's first offset is %d", dt, prev)
		}
		for i := int64(1); i <= length; i++ {
			o := at(i)
			if o < prev {
				return errorf("%s node's offsets decrease at %d", dt, i)
			}
			prev = o
		}
		if prev > limit {
			return errorf("%s node's offsets end at %d, past the %d values they index", dt, prev, limit)
		}
		return nil
	}
	dataLen := func() int64 {
		if bufs[2] == nil {
			return 0
		}
		return int64(bufs[2].Len())
	}
	switch dt := dt.(type) {
	case *arrow.BinaryType, *arrow.StringType:
		return offsets(4, dataLen())
	case *arrow.LargeBinaryType, *arrow.LargeStringType:
		return offsets(8, dataLen())
	case *arrow.ListType, *arrow.MapType:
		return offsets(4, int64(children[0].Len()))
	case *arrow.LargeListType:
		return offsets(8, int64(children[0].Len()))
	case *arrow.FixedSizeListType:
		if n := int64(dt.Len()); n < 0 || int64(children[0].Len()) < length*n {
			return errorf("%s node of %d values has %d child values", dt, length, children[0].Len())
		}
	case *arrow.StructType:
		for i, c := range children {
			if int64(c.Len()) < length {
				return errorf("%s node of %d values has %d values in field %d", dt, length, c.Len(), i)
			}
		}
	case arrow.FixedWidthDataType:
		return need(bufs[1], (length*int64(dt.BitWidth())+7)/8, "values")
	}
	return nil
}
