package flightsql

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// Backend is what the front door needs of scand: plan a scan, stream
// one of its endpoints, list files. Every call acts for the caller whose
// identity the context carries (the server's interceptors put it there),
// with that caller's scopes and limits. Methods are safe for concurrent
// use.
type Backend interface {
	// Plan plans req as GetFlightInfo does: the scan's schema, totals and
	// endpoints, whose tickets are scand's own. Errors are gRPC statuses.
	Plan(ctx context.Context, req *scandv1.ScanRequest) (*flight.FlightInfo, error)
	// Read streams the endpoint of ticket in the process, calling fn with
	// each record batch in order; a batch is valid only during its call.
	// fn's error ends the stream and is returned.
	Read(ctx context.Context, ticket []byte, fn func(arrow.RecordBatch) error) error
	// PlanCount plans req (which has a filter and no limit) for counting:
	// the rows the statistics prove match, and the plan of the rest,
	// whose endpoints return the rows still to count.
	PlanCount(ctx context.Context, req *scandv1.ScanRequest) (counted int64, rest *flight.FlightInfo, err error)
	// PlanExtremes plans req (which has no limit) for the least and
	// greatest values of columns: the bounds exact statistics give, by
	// column (absent: none), and the plan of the rest, whose endpoints
	// return the rows still to read.
	PlanExtremes(ctx context.Context, req *scandv1.ScanRequest, columns []string) (known map[string]Bounds, rest *flight.FlightInfo, err error)
	// Table reports whether location is a table read by its log (a
	// Delta table), which a request names as its table, not its paths.
	Table(ctx context.Context, location string) (bool, error)
	// List calls fn with the name of each file under prefix that the
	// caller may read, in lexical order, until fn returns ErrStopList
	// (which List then returns as nil) or another error.
	List(ctx context.Context, prefix string, fn func(name string) error) error
}

// Bounds are a column's least and greatest values over some rows.
type Bounds struct{ Min, Max scalar.Scalar }

// ErrStopList ends a listing early (Backend.List).
var ErrStopList = errors.New("stop listing")

// FlightBackend is a Backend over a scand Flight service in the same
// process (server.Server): Plan is its GetFlightInfo of a ScanRequest
// command, Read its DoGet into a stream that decodes the messages it is
// sent, List its ListFlights. The calls go through the service's own
// checks (scopes, signed tickets, limits, admission), so a Flight SQL
// statement is exactly a scand scan.
type FlightBackend struct {
	Service flight.FlightServer
	// Count is the service's counting plan (server.Server.PlanCount);
	// nil: PlanCount is Plan, every row read.
	Count func(ctx context.Context, req *scandv1.ScanRequest) (int64, *flight.FlightInfo, error)
	// Extremes is the service's plan of extremes
	// (server.Server.PlanExtremes); nil: PlanExtremes is Plan, every row
	// read.
	Extremes func(ctx context.Context, req *scandv1.ScanRequest, columns []string) (map[string]Bounds, *flight.FlightInfo, error)
	// IsTable is the service's table detection (server.Server.IsTable);
	// nil: every name is a path.
	IsTable func(ctx context.Context, location string) (bool, error)
	// Mem allocates the batches Read decodes; nil = memory.DefaultAllocator.
	Mem memory.Allocator
}

// Plan implements Backend.
func (b FlightBackend) Plan(ctx context.Context, req *scandv1.ScanRequest) (*flight.FlightInfo, error) {
	cmd, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the scan request: %w", err)
	}
	return b.Service.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
}

// PlanCount implements Backend.
func (b FlightBackend) PlanCount(ctx context.Context, req *scandv1.ScanRequest) (int64, *flight.FlightInfo, error) {
	if b.Count != nil {
		return b.Count(ctx, req)
	}
	info, err := b.Plan(ctx, req)
	return 0, info, err
}

// PlanExtremes implements Backend.
func (b FlightBackend) PlanExtremes(ctx context.Context, req *scandv1.ScanRequest, columns []string) (map[string]Bounds, *flight.FlightInfo, error) {
	if b.Extremes != nil {
		return b.Extremes(ctx, req, columns)
	}
	info, err := b.Plan(ctx, req)
	return nil, info, err
}

// Table implements Backend.
func (b FlightBackend) Table(ctx context.Context, location string) (bool, error) {
	if b.IsTable == nil {
		return false, nil
	}
	return b.IsTable(ctx, location)
}

// Read implements Backend. The service's DoGet runs in a goroutine of its
// own and hands each message over a channel; Read decodes them with
// arrow-go's Flight reader. When Read returns, DoGet has returned.
func (b FlightBackend) Read(ctx context.Context, ticket []byte, fn func(arrow.RecordBatch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &captureStream{ctx: ctx, msgs: make(chan *flight.FlightData, 2)}
	done := make(chan error, 1)
	go func() {
		defer close(out.msgs)
		done <- b.Service.DoGet(&flight.Ticket{Ticket: ticket}, out)
	}()
	err := b.decode(out, done, fn)
	cancel()
	for range out.msgs { // let DoGet return
	}
	serr := <-done
	if err == errStreamEnded || err == nil {
		return serr
	}
	return err
}

// errStreamEnded: the message channel closed; DoGet's own result says how.
var errStreamEnded = errors.New("stream ended")

func (b FlightBackend) decode(out *captureStream, done chan error, fn func(arrow.RecordBatch) error) error {
	mem := b.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rdr, err := flight.NewRecordReader(chanReader(out.msgs), ipc.WithAllocator(mem))
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, errStreamEnded) {
			return errStreamEnded
		}
		return err
	}
	defer rdr.Release()
	for rdr.Next() {
		if err := fn(rdr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errStreamEnded) {
		return err
	}
	return errStreamEnded
}

// chanReader feeds the Flight reader from the capture stream's channel.
type chanReader chan *flight.FlightData

func (c chanReader) Recv() (*flight.FlightData, error) {
	fd, ok := <-c
	if !ok {
		return nil, errStreamEnded
	}
	return fd, nil
}

// captureStream is the DoGet stream Read hands the service: what it
// sends is decoded to FlightData and passed on.
type captureStream struct {
	ctx  context.Context
	msgs chan *flight.FlightData
}

func (s *captureStream) Context() context.Context     { return s.ctx }
func (s *captureStream) SetHeader(metadata.MD) error  { return nil }
func (s *captureStream) SendHeader(metadata.MD) error { return nil }
func (s *captureStream) SetTrailer(metadata.MD)       {}
func (s *captureStream) RecvMsg(any) error            { return io.EOF }

func (s *captureStream) Send(fd *flight.FlightData) error { return s.SendMsg(fd) }

func (s *captureStream) pass(fd *flight.FlightData) error {
	select {
	case s.msgs <- fd:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// SendMsg takes what the zero-copy send path sends (a *wire.Message,
// whose bytes are those of a FlightData) as well as FlightData.
func (s *captureStream) SendMsg(m any) error {
	switch m := m.(type) {
	case *flight.FlightData:
		// The stock writer reuses its message and buffers: the reader
		// gets a copy.
		return s.pass(&flight.FlightData{FlightDescriptor: m.FlightDescriptor, DataHeader: bytes.Clone(m.DataHeader),
			AppMetadata: bytes.Clone(m.AppMetadata), DataBody: bytes.Clone(m.DataBody)})
	case *wire.Message:
		bufs, err := wire.SendCodec{}.Marshal(m)
		if err != nil {
			return err
		}
		data := bufs.Materialize()
		bufs.Free() // releases the message's record
		fd := new(flight.FlightData)
		if err := proto.Unmarshal(data, fd); err != nil {
			return fmt.Errorf("decoding a message of the stream: %w", err)
		}
		return s.pass(fd)
	}
	return fmt.Errorf("flightsql: unexpected message type %T on a DoGet stream", m)
}

// List implements Backend with the service's ListFlights.
func (b FlightBackend) List(ctx context.Context, prefix string, fn func(name string) error) error {
	ls := &listStream{ctx: ctx, fn: fn}
	err := b.Service.ListFlights(&flight.Criteria{Expression: []byte(prefix)}, ls)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.stopped {
		return nil
	}
	if ls.err != nil {
		return ls.err
	}
	return err
}

type listStream struct {
	captureStream
	ctx     context.Context
	fn      func(string) error
	mu      sync.Mutex
	stopped bool
	err     error
}

func (s *listStream) Context() context.Context { return s.ctx }

func (s *listStream) Send(info *flight.FlightInfo) error {
	path := info.GetFlightDescriptor().GetPath()
	if len(path) != 1 {
		return nil
	}
	err := s.fn(path[0])
	if err != nil {
		s.mu.Lock()
		if errors.Is(err, ErrStopList) {
			s.stopped = true
		} else {
			s.err = err
		}
		s.mu.Unlock()
	}
	return err
}

func (s *listStream) SendMsg(m any) error {
	if info, ok := m.(*flight.FlightInfo); ok {
		return s.Send(info)
	}
	return fmt.Errorf("flightsql: unexpected message type %T on a ListFlights stream", m)
}
