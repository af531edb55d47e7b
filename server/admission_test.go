package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server/admission"
)

// admissionServer starts a server whose decode share admits one stream at
// a time (every stream asks for more than the share, so it runs alone).
func admissionServer(t *testing.T, dir string, mem memory.Allocator, split int64, opts ...grpc.DialOption) (*Server, flight.Client) {
	t.Helper()
	srv, addr := serveForTest(t, onRoot(t, dir, iosched.Options{Memory: 64 << 20}, Config{Mem: mem, Planning: Planning{SplitBytes: split},
		Admission: admission.New(1<<10, 200*time.Millisecond)}))
	return srv, dialForTest(t, addr, opts...)
}

func wideFile(t *testing.T, rows int) string {
	t.Helper()
	dir := t.TempDir()
	rec := wideRecord(32, rows)
	defer rec.Release()
	writeParquet(t, dir, "wide.parquet", rec, int64(rows/8))
	return dir
}

// Streams decode one at a time when the decode share holds one, every
// scan gets its rows, and the memory is all given back.
func TestAdmissionLimitsDecodingStreams(t *testing.T) {
	dir := wideFile(t, 64000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	srv, c := admissionServer(t, dir, mem, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"wide.parquet"}})
			if err != nil {
				errs <- err
				return
			}
			defer res.release()
			if len(res.info.Endpoint) < 2 {
				errs <- fmt.Errorf("%d endpoints, want several", len(res.info.Endpoint))
			} else if res.rows() != 64000 {
				errs <- fmt.Errorf("%d rows", res.rows())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := srv.admit.Stats()
	if st.Peak == 0 {
		t.Fatal("no stream went through admission")
	}
	if st.Peak > st.Capacity || st.InUse != 0 || st.Streams != 0 || st.Waiting != 0 {
		t.Fatalf("admission %+v: want peak <= capacity and nothing held after the scans", st)
	}
}

// A client that opens a scan's second stream, reads a little of it, and
// then reads the first stream to its end before going back: the second
// stream holds the only admission, blocked in Send by flow control, while
// the first waits for it. The server must notice and let the first in.
func TestAdmissionClientReadingStreamsOutOfOrder(t *testing.T) {
	// Two streams of about 16 MB each: several batches, more than gRPC
	// queues for a stream nobody reads.
	const rows = 128000
	dir := wideFile(t, rows)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	// A fixed 64 KiB stream window (no BDP growth): an unread stream
	// blocks the server's Send quickly.
	srv, c := admissionServer(t, dir, mem, 16<<20, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, _ := json.Marshal(map[string]any{"paths": []string{"wide.parquet"}})
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) < 2 {
		t.Fatalf("%d endpoints, want 2 or more", len(info.Endpoint))
	}
	open := func(i int) *flight.Reader {
		s, err := c.DoGet(ctx, info.Endpoint[i].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		r, err := flight.NewRecordReader(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	count := func(r *flight.Reader) int64 {
		var n int64
		for r.Next() {
			n += r.RecordBatch().NumRows()
		}
		if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		return n
	}
	second := open(1)
	defer second.Release()
	if !second.Next() {
		t.Fatalf("second stream: %v", second.Err())
	}
	n := second.RecordBatch().NumRows()
	t.Logf("endpoints %d, admission before first: %+v", len(info.Endpoint), srv.admit.Stats())
	start := time.Now()
	first := open(0)
	n += count(first)
	t.Logf("first read in %v", time.Since(start))
	first.Release()
	n += count(second)
	for _, ep := range info.Endpoint[2:] {
		s, err := c.DoGet(ctx, ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		r, err := flight.NewRecordReader(s)
		if err != nil {
			t.Fatal(err)
		}
		n += count(r)
		r.Release()
	}
	if n != rows {
		t.Fatalf("%d rows, want %d", n, rows)
	}
	// The second stream, blocked on its client, parked its estimate, so the
	// first got in; the second took its estimate back past the share when
	// it was read (one over-commit), rather than wait for memory it holds.
	if st := srv.admit.Stats(); st.Overcommits == 0 {
		t.Fatalf("admission %+v: the second stream should have resumed over the limit", st)
	}
}
