package stream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/scand/scand/wire"
)

// The send path: how DoGet turns record batches into FlightData messages.
//
// The stock path (flight.NewRecordWriter) copies every body buffer into a
// bytes.Buffer, protobuf copies it again into a gRPC buffer, and the HTTP/2
// writer copies it a third time into its write buffer. The zero-copy path
// hands each IPC payload's body buffers to wire.NewMessage by reference,
// with a reference on the record they belong to, and sends the message
// through wire.SendCodec, which lays it out as a mem.BufferSlice and
// releases the record once the transport has written the last byte. The
// bytes on the wire are identical to proto.Marshal of the stock message.
//
// What stays here is about the server's streams: which record a payload
// belongs to, when a body is worth referencing, and the connection
// tracking that releases messages a dead connection never freed.
//
// See docs/send-path.md for the copies that remain and measurements.

var (
	// CopyBodyBelow: messages with a smaller body are copied whole into one
	// buffer (wire.CopyBodyBelow). A variable so that tests (the server's
	// too, which drive the send path through DoGet) can send every body by
	// reference; nothing else sets it.
	CopyBodyBelow = wire.CopyBodyBelow
	// OrphanDelay is how long after its connection ended a message still
	// held by the transport is released (see connStates). Tests shorten it.
	OrphanDelay = time.Second
)

// writerMem allocates what the IPC writer makes itself (realigned
// bitmaps of sliced arrays, shifted offsets, compressed buffers). Those
// buffers are released by the writer as soon as WritePayload returns but
// are still referenced by the message in flight, so they must come from
// the garbage collector rather than from an allocator that reuses memory.
var writerMem = memory.NewGoAllocator()

// BatchWriter writes one DoGet stream: the schema, then batches. The last
// batch carries app_metadata. Both send paths implement it.
type BatchWriter interface {
	Write(rec arrow.RecordBatch) error
	WriteWithAppMetadata(rec arrow.RecordBatch, meta []byte) error
	Close() error
}

// ipcOptions are the IPC writer options of a stream of schema, compressed
// as the request asked or, when it did not, as the server is configured.
func (s *Config) ipcOptions(schema *arrow.Schema, c wire.Compression, mem memory.Allocator) []ipc.Option {
	if c == wire.CompressNone {
		c = s.Compression
	}
	return append([]ipc.Option{ipc.WithSchema(schema), ipc.WithAllocator(mem)}, c.IPCOptions()...)
}

// NewBatchWriter returns the writer of the configured send path for a
// stream of schema.
func (s *Config) NewBatchWriter(stream flight.FlightService_DoGetServer, schema *arrow.Schema, c wire.Compression) BatchWriter {
	if s.SendPath == wire.SendStock {
		return flight.NewRecordWriter(stream, s.ipcOptions(schema, c, s.Mem)...)
	}
	return newZeroCopyWriter(stream, s.ipcOptions(schema, c, writerMem)...)
}

// SendServerOptions are the gRPC options the send path needs: the codec
// that marshals zero-copy messages, and the connection tracking that
// releases messages a dead connection never freed.
func SendServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(wire.SendCodec{}),
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

// zeroCopyPayloadWriter turns IPC payloads into wire.Messages.
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
	var owner wire.Releaser // nil: the body is copied
	if w.rec != nil && w.body.n > 0 && w.body.n >= CopyBodyBelow {
		owner = holdRecord(w.stream.Context(), w.rec)
	}
	m := wire.NewMessage(meta.Bytes(), w.appMeta, w.body.pieces, owner)
	meta.Release()
	err = w.stream.SendMsg(m)
	m.ReleaseUnsent() // the codec never saw it; otherwise a no-op
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

// heldRecord is a message's reference to the record its body belongs to,
// registered with the connection the message goes out on. It is released
// once, by whichever comes first: the message (written, or never sent) or
// the sweep of a dead connection.
type heldRecord struct {
	rec  arrow.RecordBatch
	conn *connState // nil outside a tracked connection (tests)
	done atomic.Bool
}

// holdRecord retains rec for one message sent on ctx's stream.
func holdRecord(ctx context.Context, rec arrow.RecordBatch) *heldRecord {
	rec.Retain()
	h := &heldRecord{rec: rec}
	if c, ok := ctx.Value(connKey{}).(*connState); ok {
		h.conn = c
		c.add(h)
	}
	return h
}

func (h *heldRecord) Release() {
	if !h.done.CompareAndSwap(false, true) {
		return
	}
	if h.conn != nil {
		h.conn.remove(h)
	}
	h.rec.Release()
}

// connStates is a stats.Handler that tracks the records the messages on
// each connection hold. gRPC frees a message's buffers when it writes them, when the
// stream is cancelled, or when the connection closes before the message
// reached the HTTP/2 writer; but messages already queued on a stream when
// the connection dies are dropped without being freed. When a connection
// ends, connStates releases its messages still outstanding after
// OrphanDelay, by which time the writer has stopped touching them.
type connStates struct{}

type connKey struct{}

// connState is the set of message references in flight on one connection.
type connState struct {
	mu     sync.Mutex
	live   map[*heldRecord]struct{}
	closed bool
}

func (*connStates) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, &connState{live: make(map[*heldRecord]struct{})})
}

func (*connStates) HandleConn(ctx context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnEnd); !ok {
		return
	}
	if c, ok := ctx.Value(connKey{}).(*connState); ok {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		time.AfterFunc(OrphanDelay, c.sweep)
	}
}

func (*connStates) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (*connStates) HandleRPC(context.Context, stats.RPCStats)                       {}

// add registers h as held by the transport of c.
func (c *connState) add(h *heldRecord) {
	c.mu.Lock()
	c.live[h] = struct{}{}
	closed := c.closed
	c.mu.Unlock()
	if closed {
		time.AfterFunc(OrphanDelay, c.sweep)
	}
}

func (c *connState) remove(h *heldRecord) {
	c.mu.Lock()
	delete(c.live, h)
	c.mu.Unlock()
}

func (c *connState) sweep() {
	c.mu.Lock()
	live := make([]*heldRecord, 0, len(c.live))
	for h := range c.live {
		live = append(live, h)
	}
	c.mu.Unlock()
	for _, h := range live {
		h.Release()
	}
}
