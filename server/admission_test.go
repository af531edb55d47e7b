package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
//
// With packed endpoints whose next file decodes ahead, the second
// stream's next file must not take the first's place: had it waited for
// memory, it would be the one let in over the limit (every holder
// stuck), and, never blocked on a client itself, it would keep the
// first out until the second stream was cut.
func TestAdmissionClientReadingStreamsOutOfOrder(t *testing.T) {
	// Decode ahead is on by default with more than one core.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	for _, tc := range []struct {
		name  string
		files int // 1: one file's row groups make the endpoints
		split int64
	}{
		// Two streams of about 16 MB each: several batches, more than
		// gRPC queues for a stream nobody reads.
		{"row groups", 1, 16 << 20},
		// Endpoints of several files each.
		{"packed files", 8, 12 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) { testClientReadingStreamsOutOfOrder(t, tc.files, tc.split) })
	}
}

func testClientReadingStreamsOutOfOrder(t *testing.T, files int, split int64) {
	const rows = 128000
	dir := wideFile(t, rows)
	if files > 1 {
		dir = t.TempDir()
		rec := wideRecord(32, rows/files)
		for f := range files {
			writeParquet(t, dir, fmt.Sprintf("f/%02d.parquet", f), rec, int64(rows/files/4))
		}
		rec.Release()
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	// A fixed 64 KiB stream window (no BDP growth): an unread stream
	// blocks the server's Send quickly.
	srv, c := admissionServer(t, dir, mem, split, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := "wide.parquet"
	if files > 1 {
		path = "f/"
	}
	cmd, _ := json.Marshal(map[string]any{"paths": []string{path}})
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

// Packed endpoints that decode their next file ahead share a decode
// share that fits about one grant a stream, over gRPC with small flow
// control windows: clients that read nothing for a while block their
// streams in Send (they park and drop their next file), and every stream
// ends within the bound, with all its rows or RESOURCE_EXHAUSTED (cut),
// nothing held or waiting afterwards and no Arrow byte leaked. A lock-up
// over admission fails on the context's deadline rather than hanging.
func TestAdmissionPackedStreamsDecodingAheadEnd(t *testing.T) {
	// Decode ahead is on by default with more than one core.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	const streams, files, rows = 4, 6, 4000
	dir := t.TempDir()
	rec := wideRecord(16, rows) // 512 KB decoded a file, 128 KB a row group
	defer rec.Release()
	for s := range streams {
		for f := range files {
			writeParquet(t, dir, fmt.Sprintf("s%d/%02d.parquet", s, f), rec, rows/4)
		}
	}
	scan := func(s int) map[string]any {
		return map[string]any{"paths": []string{fmt.Sprintf("s%d/", s)}, "filter": "c000 >= 0"}
	}
	serve := func(mem memory.Allocator, capacity int64) (*Server, []flight.Client) {
		srv, addr := serveForTest(t, onRoot(t, dir, iosched.Options{Memory: 64 << 20}, Config{Mem: mem,
			Planning: Planning{SplitBytes: 1 << 30}, Admission: admission.New(capacity, 0)}))
		// A connection a client, each with a fixed 64 KiB window: a
		// stream nobody reads blocks the server's Send at its first batch.
		cs := make([]flight.Client, streams)
		for i := range cs {
			cs[i] = dialForTest(t, addr, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
		}
		return srv, cs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// What one stream holds at most, alone: its grant and its next
	// file's.
	probe, cs := serve(memory.NewGoAllocator(), 1<<30)
	res, err := scanJSON(ctx, cs[0], scan(0))
	if err != nil {
		t.Fatal(err)
	}
	res.release()
	if len(res.info.Endpoint) != 1 {
		t.Fatalf("%d endpoints, want one packed endpoint", len(res.info.Endpoint))
	}
	peak := probe.admit.Stats().Peak

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	srv, cs := serve(mem, int64(streams)*peak/2+peak/4)
	idle := []time.Duration{0, 300 * time.Millisecond, 800 * time.Millisecond, 1500 * time.Millisecond}
	errs := make([]error, streams)
	got := make([]int64, streams)
	var wg sync.WaitGroup
	for s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[s] = func() error {
				cmd, _ := json.Marshal(scan(s))
				info, err := cs[s].GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
				if err != nil {
					return err
				}
				st, err := cs[s].DoGet(ctx, info.Endpoint[0].Ticket)
				if err != nil {
					return err
				}
				time.Sleep(idle[s]) // reads nothing: the server's Send blocks
				r, err := flight.NewRecordReader(st)
				if err != nil {
					return err
				}
				defer r.Release()
				for r.Next() {
					got[s] += r.RecordBatch().NumRows()
					time.Sleep(2 * time.Millisecond) // a slow reader
				}
				return r.Err()
			}()
		}()
	}
	wg.Wait()
	var cut int
	for s, err := range errs {
		switch {
		case status.Code(err) == codes.ResourceExhausted:
			cut++
		case err != nil && !errors.Is(err, io.EOF):
			t.Errorf("stream %d: %v", s, err)
		case got[s] != files*rows:
			t.Errorf("stream %d: %d rows, want %d", s, got[s], files*rows)
		}
	}
	// DoGet handlers end just after their clients see the streams end.
	st := srv.admit.Stats()
	for deadline := time.Now().Add(10 * time.Second); (st.InUse != 0 || st.Streams != 0) && time.Now().Before(deadline); st = srv.admit.Stats() {
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("one stream alone held %d bytes; %d streams cut; admission %+v", peak, cut, st)
	if st.InUse != 0 || st.Streams != 0 || st.Waiting != 0 {
		t.Errorf("admission %+v after the streams: want nothing held or waiting", st)
	}
}
