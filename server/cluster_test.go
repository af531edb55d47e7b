package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server/cluster"
)

// TestEndpointLocations checks that each endpoint lists the ring's owner
// and runner-up of its split, and none without a ring.
func TestEndpointLocations(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"a.parquet", "b.parquet", "c.parquet"} {
		rec := sampleRecord(0, 400)
		writeParquet(t, root, name, rec, 100) // 4 row groups each
		rec.Release()
	}
	three := cluster.NewRing("grpc://10.0.0.1:8815", "grpc://10.0.0.2:8815", "grpc://10.0.0.3:8815")
	for name, tc := range map[string]struct {
		ring func() cluster.Ring
		want int
	}{
		"no ring":       {nil, 0},
		"empty ring":    {func() cluster.Ring { return cluster.Ring{} }, 0},
		"one member":    {func() cluster.Ring { return cluster.NewRing("grpc://10.0.0.1:8815") }, 1},
		"three members": {func() cluster.Ring { return three }, 2},
	} {
		t.Run(name, func(t *testing.T) {
			c := testServerWith(t, onRoot(t, root, iosched.Options{}, Config{Ring: tc.ring, Planning: Planning{SplitBytes: 1}}))
			cmd, _ := json.Marshal(map[string]any{"paths": []string{"*.parquet"}})
			info, err := c.GetFlightInfo(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Endpoint) != 12 {
				t.Fatalf("%d endpoints, want 12 (3 files x 4 row groups)", len(info.Endpoint))
			}
			owners := map[string]bool{}
			for _, ep := range info.Endpoint {
				var got []string
				for _, l := range ep.Location {
					got = append(got, l.Uri)
				}
				if len(got) != tc.want {
					t.Fatalf("locations %q, want %d", got, tc.want)
				}
				if tc.ring == nil || tc.want == 0 {
					continue
				}
				task := openTestTicket(t, ep.Ticket.Ticket)
				want := tc.ring().Place(cluster.Key{Path: task.Path, FirstGroup: int(task.RowGroups[0])})
				if !slices.Equal(got, want) {
					t.Errorf("%s groups %v: locations %q, want %q", task.Path, task.RowGroups, got, want)
				}
				owners[got[0]] = true
			}
			if tc.want == 2 && len(owners) < 2 {
				t.Errorf("12 splits all owned by %v", owners)
			}
		})
	}
}

// writeLongFile writes one int64 column of n rows: a stream of it at
// small batches outlasts the transport's buffers.
func writeLongFile(t *testing.T, dir, name string, n int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.NewGoAllocator())
	defer b.Release()
	for i := range n {
		b.Append(int64(i) * 7919)
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
	defer rec.Release()
	writeParquet(t, dir, name, rec, int64(n))
}

// startStream plans long.parquet and starts reading its one endpoint: it
// returns the reader after its first batch.
func startStream(t *testing.T, c flight.Client) (*flight.Reader, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd, _ := json.Marshal(map[string]any{"paths": []string{"long.parquet"}, "batch_rows": 1000})
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	return rdr, cancel
}

// readRest reads the stream to its end and returns the rows after the
// first batch.
func readRest(rdr *flight.Reader) (int64, error) {
	var n int64
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return n, err
	}
	return n, nil
}

func wantDraining(t *testing.T, what string, err error) {
	t.Helper()
	if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "draining") {
		t.Errorf("%s while draining: %v, want UNAVAILABLE saying it drains", what, err)
	}
}

// TestDrain: a running stream finishes, health turns NOT_SERVING, new
// work is refused with UNAVAILABLE, and Shutdown returns once the stream
// has ended, cutting nothing.
func TestDrain(t *testing.T) {
	root := t.TempDir()
	const rows = 3_000_000
	writeLongFile(t, root, "long.parquet", rows)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	srv, addr := serveForTest(t, onRoot(t, root, iosched.Options{}, Config{Mem: mem}))
	c := dialForTest(t, addr)
	rdr, cancel := startStream(t, c)
	defer cancel()
	first := rdr.RecordBatch().NumRows()

	srv.Drain()
	if n := srv.drain.streams.Load(); n != 1 {
		t.Fatalf("%d streams running at the drain, want the one (the test needs a stream that outlasts buffers)", n)
	}
	cut := make(chan int64, 1)
	go func() { cut <- srv.Shutdown(20 * time.Second) }()

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("health while draining: %v, %v; want NOT_SERVING", resp, err)
	}
	cmd, _ := json.Marshal(map[string]any{"paths": []string{"long.parquet"}})
	_, err = c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	wantDraining(t, "GetFlightInfo", err)
	if s, err := c.DoGet(ctx, &flight.Ticket{Ticket: []byte("x")}); err == nil {
		_, err = s.Recv()
		wantDraining(t, "DoGet", err)
	}
	if _, err := c.ListActions(ctx, &flight.Empty{}); err != nil {
		t.Errorf("ListActions while draining: %v; only calls that start work are refused", err)
	}

	rest, err := readRest(rdr)
	rdr.Release()
	if err != nil || first+rest != rows {
		t.Fatalf("the running stream: %d rows, %v; want all %d", first+rest, err, rows)
	}
	select {
	case n := <-cut:
		if n != 0 {
			t.Errorf("Shutdown cut %d streams; the one stream had ended", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return after the last stream ended")
	}
	assertReleased(t, mem)
}

// TestShutdownCutsStuckStreams: a stream its client stops reading is cut
// off when the grace period ends.
func TestShutdownCutsStuckStreams(t *testing.T) {
	root := t.TempDir()
	writeLongFile(t, root, "long.parquet", 3_000_000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	srv, addr := serveForTest(t, onRoot(t, root, iosched.Options{}, Config{Mem: mem}))
	rdr, cancel := startStream(t, dialForTest(t, addr))
	defer cancel()
	start := time.Now()
	if n := srv.Shutdown(300 * time.Millisecond); n != 1 {
		t.Errorf("Shutdown cut %d streams, want 1", n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Shutdown took %v with a 300ms grace", d)
	}
	if _, err := readRest(rdr); err == nil {
		t.Error("the cut stream ended cleanly")
	}
	rdr.Release()
	assertReleased(t, mem)
}
