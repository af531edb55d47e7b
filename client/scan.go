package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// Scan is a running scan: an [array.RecordReader] over the batches of all
// endpoints of a FlightInfo, in endpoint order.
//
// Endpoints are read by background goroutines, at most the configured
// concurrency at a time, always the next ones in order: while the reader is
// on endpoint i, endpoints i..i+concurrency-1 are streaming. Each buffers at
// most the configured number of batches, then waits for the reader.
//
// A Scan is not safe for concurrent use. The caller must call Release; it
// stops the streams, releases buffered batches and waits for the goroutines
// to exit.
type Scan struct {
	// ctx is the scan's own context, derived from the caller's. Keeping it
	// in the struct is deliberate: a Scan is a reader whose whole lifetime
	// runs under the ctx given to [Client.Scan], like an io.Reader over a
	// request body.
	ctx    context.Context
	cancel context.CancelFunc

	c      *Client
	info   *flight.FlightInfo
	schema *arrow.Schema
	opts   options

	streams []*stream
	next    int // next endpoint to start
	cur     int // endpoint being read
	rec     arrow.RecordBatch
	err     error
	stats   Stats
	paths   map[string]bool
	// limit caps the rows Next returns (0: no cap); returned counts them.
	// With a filter the server cannot know which endpoint's rows match,
	// so every ticket carries the request's whole limit and the client
	// stops once it has that many.
	limit, returned int64

	refs     atomic.Int64
	wg       sync.WaitGroup
	stopOnce sync.Once
}

var _ array.RecordReader = (*Scan)(nil)

// stream is one endpoint's DoGet. Its goroutine sends batches on ch and
// closes ch when done; err and stats are written before the close, so the
// reader may read them once it sees ch closed.
type stream struct {
	ch    chan arrow.RecordBatch
	err   error
	stats Stats
	// rows and batches are counted by the client, for servers that send no
	// stats.
	rows, batches int64
	hasStats      bool
	// failovers counts the moves to another replica (failover.go); the
	// stats are then the last stream's, and rows the whole endpoint's.
	failovers int64
}

// Scan plans req on the server and starts reading it. See [Scan] for how
// the endpoints are read, and [Client.ScanInfo] to read a FlightInfo already
// obtained with [Client.Info].
//
// ctx governs the whole scan, not just this call: cancelling it stops every
// stream, and Next then returns false with Err() == ctx's error.
func (c *Client) Scan(ctx context.Context, req *scandv1.ScanRequest, opts ...Option) (*Scan, error) {
	info, err := c.info(ctx, req, c.opts.with(opts))
	if err != nil {
		return nil, err
	}
	s, err := c.ScanInfo(ctx, info, opts...)
	if err == nil && req.GetLimit() > 0 {
		s.limit = req.GetLimit()
	}
	return s, err
}

// ScanInfo starts reading the endpoints of info, which must come from
// [Client.Info] on this server (or a replica sharing its ticket key). Each
// endpoint is read from its locations in order, then from this client's
// server; see "Failover and resume" in the package doc.
func (c *Client) ScanInfo(ctx context.Context, info *flight.FlightInfo, opts ...Option) (*Scan, error) {
	o := c.opts.with(opts)
	if len(info.GetSchema()) == 0 {
		return nil, fmt.Errorf("client: FlightInfo from %s has no schema", c.addr)
	}
	schema, err := flight.DeserializeSchema(info.GetSchema(), o.allocator())
	if err != nil {
		return nil, fmt.Errorf("client: decode scan schema from %s: %w", c.addr, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &Scan{
		ctx:     sctx,
		cancel:  cancel,
		c:       c,
		info:    info,
		schema:  schema,
		opts:    o,
		streams: make([]*stream, len(info.GetEndpoint())),
		paths:   make(map[string]bool),
		limit:   filteredLimit(info),
	}
	s.refs.Add(1)
	s.fill()
	return s, nil
}

// fill starts endpoints until concurrency streams run ahead of the reader.
// Starting strictly in order, and counting streams that finished but were
// not yet read, keeps buffered memory bounded and guarantees that the
// endpoint the reader waits for is always running.
func (s *Scan) fill() {
	for s.next < len(s.streams) && s.next < s.cur+s.opts.concurrency {
		st := &stream{ch: make(chan arrow.RecordBatch, s.opts.buffer)}
		s.streams[s.next] = st
		s.wg.Add(1)
		go s.fetch(s.next, st)
		s.next++
	}
}

// fetch reads endpoint i into st.ch. It owns the batches until the reader
// receives them: each batch is retained before the send and released if the
// send is abandoned because the scan stopped.
func (s *Scan) fetch(i int, st *stream) {
	defer s.wg.Done()
	defer close(st.ch)
	st.err = s.read(i, st)
}

func (s *Scan) read(i int, st *stream) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("client: endpoint %d: panic: %v", i, r)
		}
	}()
	return s.readEndpoint(i, st) // failover.go
}

// readFrom redeems ticket, of endpoint i, on r and sends its batches on
// st.ch, counting them in st.
func (s *Scan) readFrom(r *replica, ticket *flight.Ticket, i int, st *stream) error {
	ctx := s.ctx
	rdr, ms, err := s.doGet(r, ticket)
	if errors.Is(err, io.EOF) {
		// The stream ended without a schema: an empty endpoint.
		return s.finish(st, ms)
	}
	if err != nil {
		return wrapAt(ctx, "scan", r.addr, err)
	}
	defer rdr.Release()
	if err := sameColumns(s.schema, rdr.Schema()); err != nil {
		return fmt.Errorf("client: endpoint %d of %s: %w", i, r.addr, err)
	}
	// Every batch of a RecordReader has the reader's schema. A stream
	// whose schema differs only in metadata or nullability gets its
	// batches re-labelled, which shares the columns and copies nothing.
	relabel := !rdr.Schema().Equal(s.schema)
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if relabel {
			rec = array.NewRecordBatch(s.schema, rec.Columns(), rec.NumRows())
		} else {
			rec.Retain()
		}
		select {
		case st.ch <- rec:
			st.rows += rec.NumRows()
			st.batches++
		case <-ctx.Done():
			rec.Release()
			return context.Cause(ctx)
		}
	}
	if err := rdr.Err(); err != nil {
		return wrapAt(ctx, "scan", r.addr, err)
	}
	return s.finish(st, ms)
}

// doGetDesc and doGetMethod are Flight's DoGet, called on the connection
// directly so that its messages are received into wire.Received.
var doGetDesc = &grpc.StreamDesc{StreamName: "DoGet", ServerStreams: true}

const doGetMethod = "/arrow.flight.protocol.FlightService/DoGet"

// doGet starts the DoGet of ticket on r and returns a reader of its
// batches, and the stream's metadata as it is read. Unless the client
// uses the stock codec or asked for the gathering one, the batches are
// built from gRPC's receive buffers by wire.Reader (see "Receiving" in
// the package doc).
func (s *Scan) doGet(r *replica, ticket *flight.Ticket) (array.RecordReader, *metaStream, error) {
	ctx := s.ctx
	ms := &metaStream{}
	if s.opts.stockCodec || s.opts.gather {
		call, err := r.fc.DoGet(ctx, ticket)
		if err != nil {
			return nil, ms, err
		}
		ms.s = call
		rdr, err := flight.NewRecordReader(ms, ipc.WithAllocator(s.opts.allocator()))
		return rdr, ms, err
	}
	cs, err := r.conn.NewStream(ctx, doGetDesc, doGetMethod)
	if err != nil {
		return nil, ms, err
	}
	if err := cs.SendMsg(ticket); err != nil {
		return nil, ms, err
	}
	if err := cs.CloseSend(); err != nil {
		return nil, ms, err
	}
	ms.cs = cs
	rdr, err := wire.NewReader(ms.receive, s.opts.mem)
	return rdr, ms, err
}

// finish records the stream's stats from its last application metadata.
func (s *Scan) finish(st *stream, ms *metaStream) error {
	if len(ms.last) == 0 {
		return nil
	}
	stats, err := parseStats(ms.last)
	if err != nil {
		return err
	}
	st.stats, st.hasStats = stats, true
	return nil
}

// sameColumns checks that an endpoint's stream has the scan's columns:
// same names and types. Metadata and nullability may differ between files,
// so they are not compared.
func sameColumns(want, got *arrow.Schema) error {
	if want.NumFields() != got.NumFields() {
		return fmt.Errorf("stream has %d columns, the scan's schema %d", got.NumFields(), want.NumFields())
	}
	for i := range want.NumFields() {
		w, g := want.Field(i), got.Field(i)
		if w.Name != g.Name || !arrow.TypeEqual(w.Type, g.Type) {
			return fmt.Errorf("stream column %d is %s %s, the scan's schema has %s %s", i, g.Name, g.Type, w.Name, w.Type)
		}
	}
	return nil
}

// metaStream keeps the application metadata of a DoGet stream and hides
// metadata-only messages from the IPC reader. scand may send its stats as a
// message with no IPC payload (Writer.WriteMetadata), which the Go IPC
// reader cannot decode; other Flight clients (pyarrow) skip such messages,
// and so does this one. It reads either a flight.DataStreamReader (Recv)
// or a raw stream into wire.Received (receive).
type metaStream struct {
	s    flight.DataStreamReader
	cs   grpc.ClientStream
	last []byte
}

// Recv implements flight.DataStreamReader.
func (m *metaStream) Recv() (*flight.FlightData, error) {
	for {
		fd, err := m.s.Recv()
		if err != nil {
			return nil, err
		}
		if len(fd.GetAppMetadata()) > 0 {
			m.last = fd.GetAppMetadata()
		}
		if len(fd.GetDataHeader()) > 0 {
			return fd, nil
		}
	}
}

// receive returns the next message of the raw stream that has an IPC
// payload; the caller frees it.
func (m *metaStream) receive() (*wire.Received, error) {
	for {
		msg := &wire.Received{}
		if err := m.cs.RecvMsg(msg); err != nil {
			return nil, err
		}
		if len(msg.AppMetadata) > 0 {
			m.last = msg.AppMetadata
		}
		if len(msg.Header) > 0 {
			return msg, nil
		}
		msg.Free()
	}
}

// Schema returns the scan's schema, which every batch has.
func (s *Scan) Schema() *arrow.Schema { return s.schema }

// Info returns the FlightInfo the scan reads.
func (s *Scan) Info() *flight.FlightInfo { return s.info }

// Next advances to the next batch. It returns false at the end of the scan
// or on error; see Err.
func (s *Scan) Next() bool {
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
	for s.err == nil && s.cur < len(s.streams) {
		st := s.streams[s.cur]
		if rec, ok := <-st.ch; ok {
			return s.take(rec)
		}
		if st.err != nil {
			s.err = st.err
			if s.ctx.Err() != nil {
				// Cancelled by the caller: report that, not how each stream
				// noticed it.
				s.err = context.Cause(s.ctx)
			}
			s.stop()
			return false
		}
		s.add(st)
		s.streams[s.cur] = nil
		s.cur++
		s.fill()
	}
	if s.err == nil {
		s.cancel() // all streams are done; free the context
	}
	return false
}

// take makes rec the current batch, cut to what the limit leaves. Once
// the limit is reached the scan stops its streams and ends cleanly; see
// atLimit.
func (s *Scan) take(rec arrow.RecordBatch) bool {
	if s.limit > 0 && s.returned+rec.NumRows() > s.limit {
		cut := rec.NewSlice(0, s.limit-s.returned)
		rec.Release()
		rec = cut
	}
	s.returned += rec.NumRows()
	if s.limit > 0 && s.returned >= s.limit {
		s.atLimit()
	}
	s.rec = rec
	return true
}

// atLimit ends the scan once the limit's rows are in hand. The stream
// being read is drained so that its figures reach Stats: its ticket
// carries the limit too, so the rest of it is at most that many rows (none
// without a filter, where the tickets' limits add up to the request's).
// The streams after it are cancelled and count nothing.
func (s *Scan) atLimit() {
	st := s.streams[s.cur]
	for r := range st.ch {
		r.Release()
	}
	if st.err == nil {
		s.add(st)
	}
	s.stop()
	s.cur = len(s.streams)
}

// filteredLimit is the limit of a filtered plan, from its tickets: each
// carries the request's whole limit, since the server cannot tell which
// endpoints hold the matching rows. An unfiltered plan needs no cap (its
// tickets' limits add up to the request's), nor does a ticket that does
// not decode.
func filteredLimit(info *flight.FlightInfo) int64 {
	for _, ep := range info.GetEndpoint() {
		task := &scandv1.ScanTask{}
		if err := proto.Unmarshal(ticketPayload(ep.GetTicket().GetTicket()), task); err != nil {
			continue
		}
		if task.GetRowFilter() != nil && task.GetLimit() > 0 {
			return task.GetLimit()
		}
	}
	return 0
}

// add sums a finished stream into the scan's stats.
func (s *Scan) add(st *stream) {
	one := st.stats
	if !st.hasStats {
		one = Stats{Rows: st.rows, Batches: st.batches}
	}
	if st.failovers > 0 {
		one.Rows, one.Failovers = st.rows, st.failovers
	}
	one.Endpoints = 1
	var fresh []string // distinct files: those no stream before read
	for _, p := range one.Paths {
		if !s.paths[p] {
			s.paths[p] = true
			fresh = append(fresh, p)
		}
	}
	one.Paths, one.Files = fresh, len(fresh)
	s.stats.Add(one)
}

// RecordBatch returns the current batch. It is valid until the next call to
// Next or Release; Retain it to keep it longer.
func (s *Scan) RecordBatch() arrow.RecordBatch { return s.rec }

// Record returns the current batch.
//
// Deprecated: Use [Scan.RecordBatch]; Record exists because
// array.RecordReader still requires it.
func (s *Scan) Record() arrow.RecordBatch { return s.rec }

// Err returns the error that ended the scan, or nil at a clean end. When
// the caller's ctx was cancelled it is the context's error.
func (s *Scan) Err() error { return s.err }

// Stats returns the IO figures summed over the endpoints read so far;
// after Next has returned false with a nil Err, over the whole scan, except
// that a filtered scan that reached its limit cancelled the endpoints
// after the one it was reading, which then count nothing.
// Endpoints whose server sent no figures count only their rows and batches.
func (s *Scan) Stats() Stats { return s.stats }

// Retain adds a reference to the scan.
func (s *Scan) Retain() { s.refs.Add(1) }

// Release drops a reference. The last Release stops the scan: it cancels
// all streams, releases buffered batches and the current batch, and waits
// for the background goroutines to exit.
func (s *Scan) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	s.stop()
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
}

// stop cancels the streams, drains what they buffered and waits for them.
// The goroutines close their channels on the way out, and every send
// selects on the scan's ctx, so the drain loops end.
func (s *Scan) stop() {
	s.stopOnce.Do(func() {
		s.cancel()
		for _, st := range s.streams {
			if st == nil {
				continue
			}
			for rec := range st.ch {
				rec.Release()
			}
		}
		s.wg.Wait()
	})
}

// ReadAll reads the rest of the scan into memory and returns its batches.
// The caller owns them and must Release each one. It is meant for small
// results and tests; prefer Next for anything large.
func ReadAll(s *Scan) ([]arrow.RecordBatch, error) {
	var recs []arrow.RecordBatch
	for s.Next() {
		rec := s.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := s.Err(); err != nil {
		for _, r := range recs {
			r.Release()
		}
		return nil, err
	}
	return recs, nil
}
