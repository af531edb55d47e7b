package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// fakeSchema is the schema of every fake scan: id = endpoint*1000 + row.
var fakeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// fakeEndpoint describes what DoGet sends for one endpoint.
type fakeEndpoint struct {
	path    string
	batches []int // rows per batch
	// stats is sent as the stream's last application metadata; nil sends
	// none.
	stats *scandv1.StreamStats
	// metaOnly sends the stats in a message of its own (as
	// Writer.WriteMetadata does) instead of on the last batch.
	metaOnly bool
	// delay is slept before the first batch, so later endpoints can finish
	// before earlier ones.
	delay time.Duration
	// endless keeps sending batches of one row until the client goes away.
	endless bool
	// schema, if set, replaces fakeSchema on the stream; it must have the
	// same column types.
	schema *arrow.Schema
	// failAfter, if set, fails the stream after that many batches.
	failAfter int
	failErr   error
}

// fakeServer is a Flight server for tests: GetFlightInfo answers any
// ScanRequest with the configured endpoints, whose tickets are their index.
type fakeServer struct {
	flight.BaseFlightServer
	endpoints []fakeEndpoint
	infoErr   error
	version   string
	// appMetadata is the FlightInfo's app_metadata (scand's PlanStats).
	appMetadata []byte
	// lastReq is the last ScanRequest GetFlightInfo decoded.
	lastReq chan *scandv1.ScanRequest
	// inFlight counts running DoGet calls; maxInFlight is its peak.
	inFlight, maxInFlight atomic.Int64
}

func (f *fakeServer) GetFlightInfo(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if desc.GetType() != flight.DescriptorCMD {
		return nil, status.Error(codes.InvalidArgument, "want a CMD descriptor")
	}
	var req scandv1.ScanRequest
	if err := proto.Unmarshal(desc.GetCmd(), &req); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "bad ScanRequest: %v", err)
	}
	select {
	case f.lastReq <- &req:
	default:
	}
	if f.infoErr != nil {
		return nil, f.infoErr
	}
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(fakeSchema, memory.DefaultAllocator),
		FlightDescriptor: desc,
		TotalBytes:       -1,
		AppMetadata:      f.appMetadata,
	}
	for i, ep := range f.endpoints {
		for _, n := range ep.batches {
			info.TotalRecords += int64(n)
		}
		info.Endpoint = append(info.Endpoint, &flight.FlightEndpoint{
			Ticket: &flight.Ticket{Ticket: []byte(strconv.Itoa(i))},
		})
	}
	return info, nil
}

func (f *fakeServer) GetSchema(ctx context.Context, desc *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	if f.infoErr != nil {
		return nil, f.infoErr
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(fakeSchema, memory.DefaultAllocator)}, nil
}

func (f *fakeServer) DoGet(tkt *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	i, err := strconv.Atoi(string(tkt.GetTicket()))
	if err != nil || i < 0 || i >= len(f.endpoints) {
		return status.Errorf(codes.InvalidArgument, "bad ticket %q", tkt.GetTicket())
	}
	ep := f.endpoints[i]
	ctx := stream.Context()
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for peak := f.maxInFlight.Load(); n > peak && !f.maxInFlight.CompareAndSwap(peak, n); peak = f.maxInFlight.Load() {
	}
	select {
	case <-time.After(ep.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	schema := fakeSchema
	if ep.schema != nil {
		schema = ep.schema
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	defer w.Close()
	var meta []byte
	if ep.stats != nil {
		meta = wire.MarshalStats(ep.stats)
	}
	row := 0
	for b := 0; ep.endless || b < len(ep.batches); b++ {
		if ep.failErr != nil && b == ep.failAfter {
			return ep.failErr
		}
		n := 1
		if !ep.endless {
			n = ep.batches[b]
		}
		rec := fakeBatch(memory.DefaultAllocator, i, row, n)
		if ep.schema != nil {
			relabelled := array.NewRecordBatch(ep.schema, rec.Columns(), rec.NumRows())
			rec.Release()
			rec = relabelled
		}
		row += n
		if last := !ep.endless && b == len(ep.batches)-1; last && !ep.metaOnly && meta != nil {
			err = w.WriteWithAppMetadata(rec, meta)
		} else {
			err = w.Write(rec)
		}
		rec.Release()
		if err != nil {
			return err
		}
	}
	if ep.metaOnly && meta != nil {
		return w.WriteMetadata(meta)
	}
	return nil
}

func (f *fakeServer) DoAction(act *flight.Action, stream flight.FlightService_DoActionServer) error {
	if act.GetType() != "version" {
		return status.Errorf(codes.Unimplemented, "unknown action %q", act.GetType())
	}
	body, _ := json.Marshal(map[string]string{"version": f.version})
	return stream.Send(&flight.Result{Body: body})
}

func (f *fakeServer) ListFlights(c *flight.Criteria, stream flight.FlightService_ListFlightsServer) error {
	for _, ep := range f.endpoints {
		if !strings.HasPrefix(ep.path, string(c.GetExpression())) {
			continue
		}
		err := stream.Send(&flight.FlightInfo{
			FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{ep.path}},
			TotalRecords:     -1,
			TotalBytes:       -1,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// fakeBatch builds n rows of endpoint ep starting at row first.
func fakeBatch(mem memory.Allocator, ep, first, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, fakeSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	names := b.Field(1).(*array.StringBuilder)
	for r := first; r < first+n; r++ {
		ids.Append(int64(ep*1000 + r))
		names.Append(fmt.Sprintf("e%d-r%d", ep, r))
	}
	return b.NewRecordBatch()
}

// startFake serves f on 127.0.0.1:0 until the test ends and returns a
// client of it.
func startFake(t *testing.T, f *fakeServer, opts ...Option) *Client {
	t.Helper()
	if f.lastReq == nil {
		f.lastReq = make(chan *scandv1.ScanRequest, 1)
	}
	srv := flight.NewServerWithMiddleware(nil)
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	srv.RegisterFlightService(f)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve()
	}()
	c, err := Dial(context.Background(), "grpc://"+srv.Addr().String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		srv.Shutdown()
		<-done
	})
	return c
}
