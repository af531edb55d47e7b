package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the fallback codec
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/encoding/protowire"
)

// The send path: how DoGet turns record batches into FlightData messages.
//
// The stock path (flight.NewRecordWriter) copies every body buffer into a
// bytes.Buffer, protobuf copies it again into a gRPC buffer, and the HTTP/2
// writer copies it a third time into its write buffer. The zero-copy path
// builds each message as a mem.BufferSlice: a small head (the protobuf
// field prefixes, data_header and app_metadata, copied), then the record's
// body buffers by reference with the IPC padding in between, then the last
// bytes of the body copied into a tail buffer whose free releases the
// record. gRPC's HTTP/2 writer consumes a message's buffers in order and
// frees each once written, so the tail is freed, and the record released,
// only after every byte before it went to the socket. The bytes on the
// wire are identical to proto.Marshal of the stock message.
//
// See docs/send-path.md for the copies that remain and measurements.

// Send paths (Config.SendPath).
const (
	SendPathZeroCopy = "zerocopy"
	SendPathStock    = "stock"
)

// FlightData field prefixes, as proto.Marshal writes them: fields in
// number order, empty bytes fields omitted.
const (
	fieldDataHeader  = 2
	fieldAppMetadata = 3
	fieldDataBody    = 1000
)

var (
	// copyBodyBelow: messages with a smaller body are copied whole into one
	// buffer; referencing a few KiB costs more than copying it. A variable
	// so that tests can send every body by reference.
	copyBodyBelow = 32 << 10
	// tailBytes is how much of the body end is copied into the tail buffer
	// that carries the release hook. The buffer must exceed gRPC's pooling
	// threshold (mem.BufferPoolingThreshold, 1 KiB) to be reference
	// counted at all, hence 2 KiB buffers holding up to 1 KiB.
	tailBytes = 1 << 10
	// orphanDelay is how long after its connection ended a message still
	// held by the transport is released (see connStates).
	orphanDelay = time.Second
)

// writerMem allocates what the IPC writer makes itself (realigned
// bitmaps of sliced arrays, shifted offsets, compressed buffers). Those
// buffers are released by the writer as soon as WritePayload returns but
// are still referenced by the message in flight, so they must come from
// the garbage collector rather than from an allocator that reuses memory.
var writerMem = memory.NewGoAllocator()

// batchWriter writes one DoGet stream: the schema, then batches. The last
// batch carries app_metadata. Both send paths implement it.
type batchWriter interface {
	Write(rec arrow.RecordBatch) error
	WriteWithAppMetadata(rec arrow.RecordBatch, meta []byte) error
	Close() error
}

// ipcOptions are the IPC writer options of a stream of schema, compressed
// as the request asked or, when it did not, as the server is configured.
func (s *Server) ipcOptions(schema *arrow.Schema, compression string, mem memory.Allocator) []ipc.Option {
	opts := []ipc.Option{ipc.WithSchema(schema), ipc.WithAllocator(mem)}
	if compression == "" {
		compression = s.cfg.Compression
	}
	switch compression {
	case "lz4":
		opts = append(opts, ipc.WithLZ4())
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	}
	return opts
}

// newBatchWriter returns the writer of the configured send path.
func (s *Server) newBatchWriter(stream flight.FlightService_DoGetServer, schema *arrow.Schema, compression string) batchWriter {
	if s.cfg.SendPath == SendPathStock {
		return flight.NewRecordWriter(stream, s.ipcOptions(schema, compression, s.mem)...)
	}
	return newZeroCopyWriter(stream, s.ipcOptions(schema, compression, writerMem)...)
}

// checkSendConfig validates Config.SendPath and Config.Compression.
func checkSendConfig(cfg Config) error {
	switch cfg.SendPath {
	case "", SendPathZeroCopy, SendPathStock:
	default:
		return fmt.Errorf("server: unknown send path %q; want %q or %q", cfg.SendPath, SendPathZeroCopy, SendPathStock)
	}
	if !validCompression(cfg.Compression) {
		return fmt.Errorf("server: unknown IPC compression %q; want \"\", \"lz4\" or \"zstd\"", cfg.Compression)
	}
	return nil
}

func validCompression(c string) bool {
	switch c {
	case "", "lz4", "zstd":
		return true
	}
	return false
}

// sendServerOptions are the gRPC options the send path needs: the codec
// that marshals zero-copy messages, and the connection tracking that
// releases messages a dead connection never freed.
func sendServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(sendCodec{}),
		grpc.StatsHandler(&connStates{}),
	}
}

// zeroCopyWriter is an IPC stream writer whose messages reference the
// record's buffers. Not safe for concurrent use.
type zeroCopyWriter struct {
	*ipc.Writer
	pw *zeroCopyPayloadWriter
}

func newZeroCopyWriter(stream grpc.ServerStream, opts ...ipc.Option) *zeroCopyWriter {
	pw := &zeroCopyPayloadWriter{stream: stream}
	return &zeroCopyWriter{Writer: ipc.NewWriterWithPayloadWriter(pw, opts...), pw: pw}
}

// Write sends rec, and the dictionary batches it needs first. rec stays
// the caller's; each message referencing it holds its own reference until
// the transport has written it.
func (w *zeroCopyWriter) Write(rec arrow.RecordBatch) error {
	w.pw.rec = rec
	defer func() { w.pw.rec = nil }()
	return w.Writer.Write(rec)
}

// WriteWithAppMetadata writes rec with meta in app_metadata; as in the
// stock writer, dictionary batches written for rec carry it too.
func (w *zeroCopyWriter) WriteWithAppMetadata(rec arrow.RecordBatch, meta []byte) error {
	w.pw.appMeta = meta
	defer func() { w.pw.appMeta = nil }()
	return w.Write(rec)
}

// zeroCopyPayloadWriter turns IPC payloads into outMessages.
type zeroCopyPayloadWriter struct {
	stream  grpc.ServerStream
	rec     arrow.RecordBatch // being written; the payloads' buffers belong to it
	appMeta []byte
	body    bodyRecorder
}

func (*zeroCopyPayloadWriter) Start() error { return nil }
func (*zeroCopyPayloadWriter) Close() error { return nil }

func (w *zeroCopyPayloadWriter) WritePayload(p ipc.Payload) error {
	meta := p.Meta()
	w.body.reset()
	err := p.SerializeBody(&w.body)
	if err != nil {
		meta.Release()
		return err
	}
	m := newOutMessage(meta.Bytes(), w.appMeta, w.body.pieces, w.body.n, w.rec)
	meta.Release()
	if m.rec != nil {
		trackMessage(w.stream.Context(), m)
	}
	err = w.stream.SendMsg(m)
	if !m.taken.Load() {
		m.release() // the codec never saw it
	}
	return err
}

// bodyRecorder is the io.Writer given to Payload.SerializeBody: it keeps
// the slices it is given, by reference.
type bodyRecorder struct {
	pieces [][]byte
	n      int
}

func (r *bodyRecorder) reset() {
	clear(r.pieces)
	r.pieces, r.n = r.pieces[:0], 0
}

func (r *bodyRecorder) Write(p []byte) (int, error) {
	if len(p) > 0 {
		r.pieces = append(r.pieces, p)
		r.n += len(p)
	}
	return len(p), nil
}

// outMessage is a FlightData message ready for sendCodec.
type outMessage struct {
	head  *[]byte  // field prefixes, data_header, app_metadata; with the body when it is copied; from headPool
	body  [][]byte // the body by reference; nil when copied into head
	n     int      // bytes in body
	rec   arrow.RecordBatch
	taken atomic.Bool // sendCodec.Marshal owns head and the record reference
	done  atomic.Bool // released
	conn  *connState
}

var headPool = mem.DefaultBufferPool()

// newOutMessage lays out a FlightData of header, appMeta and the body
// pieces. Small bodies are copied; otherwise the message retains rec
// until it is released.
func newOutMessage(header, appMeta []byte, pieces [][]byte, n int, rec arrow.RecordBatch) *outMessage {
	size := 0
	if len(header) > 0 {
		size += protowire.SizeTag(fieldDataHeader) + protowire.SizeBytes(len(header))
	}
	if len(appMeta) > 0 {
		size += protowire.SizeTag(fieldAppMetadata) + protowire.SizeBytes(len(appMeta))
	}
	if n > 0 {
		size += protowire.SizeTag(fieldDataBody) + protowire.SizeVarint(uint64(n))
	}
	m := &outMessage{}
	byRef := n > 0 && n >= copyBodyBelow && rec != nil
	if !byRef {
		size += n
	}
	hp := headPool.Get(size)
	head := (*hp)[:0]
	if len(header) > 0 {
		head = protowire.AppendTag(head, fieldDataHeader, protowire.BytesType)
		head = protowire.AppendBytes(head, header)
	}
	if len(appMeta) > 0 {
		head = protowire.AppendTag(head, fieldAppMetadata, protowire.BytesType)
		head = protowire.AppendBytes(head, appMeta)
	}
	if n > 0 {
		head = protowire.AppendTag(head, fieldDataBody, protowire.BytesType)
		head = protowire.AppendVarint(head, uint64(n))
	}
	if !byRef {
		for _, p := range pieces {
			head = append(head, p...)
		}
		*hp = head
		m.head = hp
		return m
	}
	*hp = head
	m.head = hp
	m.body = append(make([][]byte, 0, len(pieces)), pieces...)
	m.n = n
	rec.Retain()
	m.rec = rec
	return m
}

// release drops the message's reference to its record, once, whoever
// calls it first: the transport freeing the tail, a send that never
// reached the codec, or the sweep of a dead connection.
func (m *outMessage) release() {
	if !m.done.CompareAndSwap(false, true) {
		return
	}
	if !m.taken.Load() {
		headPool.Put(m.head)
	}
	if m.conn != nil {
		m.conn.remove(m)
	}
	if m.rec != nil {
		m.rec.Release()
		m.rec = nil
	}
}

// buffers builds the message for the transport. Ownership of head and of
// the record reference passes to the returned buffers.
func (m *outMessage) buffers() mem.BufferSlice {
	m.taken.Store(true)
	if m.rec == nil {
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
type tailReleaser outMessage

func (r *tailReleaser) Get(int) *[]byte { panic("server: tailReleaser.Get") }

func (r *tailReleaser) Put(b *[]byte) {
	*b = (*b)[:0]
	tailPool.Put(b)
	(*outMessage)(r).release()
}

// sendCodec is the server's gRPC codec: outMessages are laid out by
// reference, everything else goes through the standard proto codec.
type sendCodec struct{}

var protoCodec = encoding.GetCodecV2("proto")

func (sendCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*outMessage); ok {
		return m.buffers(), nil
	}
	return protoCodec.Marshal(v)
}

func (sendCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return protoCodec.Unmarshal(data, v)
}

// Name is "proto": the bytes on the wire are protobuf.
func (sendCodec) Name() string { return "proto" }

// connStates is a stats.Handler that tracks the messages each connection
// holds. gRPC frees a message's buffers when it writes them, when the
// stream is cancelled, or when the connection closes before the message
// reached the HTTP/2 writer; but messages already queued on a stream when
// the connection dies are dropped without being freed. When a connection
// ends, connStates releases its messages still outstanding after
// orphanDelay, by which time the writer has stopped touching them.
type connStates struct{}

type connKey struct{}

// connState is the set of messages in flight on one connection.
type connState struct {
	mu     sync.Mutex
	live   map[*outMessage]struct{}
	closed bool
}

func (*connStates) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, &connState{live: make(map[*outMessage]struct{})})
}

func (*connStates) HandleConn(ctx context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnEnd); !ok {
		return
	}
	if c, ok := ctx.Value(connKey{}).(*connState); ok {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		time.AfterFunc(orphanDelay, c.sweep)
	}
}

func (*connStates) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (*connStates) HandleRPC(context.Context, stats.RPCStats)                       {}

// trackMessage registers m as held by the transport of ctx's connection.
func trackMessage(ctx context.Context, m *outMessage) {
	c, ok := ctx.Value(connKey{}).(*connState)
	if !ok {
		return
	}
	c.mu.Lock()
	m.conn = c
	c.live[m] = struct{}{}
	closed := c.closed
	c.mu.Unlock()
	if closed {
		time.AfterFunc(orphanDelay, c.sweep)
	}
}

func (c *connState) remove(m *outMessage) {
	c.mu.Lock()
	delete(c.live, m)
	c.mu.Unlock()
}

func (c *connState) sweep() {
	c.mu.Lock()
	live := make([]*outMessage, 0, len(c.live))
	for m := range c.live {
		live = append(live, m)
	}
	c.mu.Unlock()
	for _, m := range live {
		m.release()
	}
}
