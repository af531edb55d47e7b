package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server/admission"
)

// readAheadServer serves dir with DecodeParallelism par and a decode
// share that admits every stream.
func readAheadServer(t *testing.T, dir string, mem memory.Allocator, par int, opts ...grpc.DialOption) (*Server, flight.Client) {
	t.Helper()
	srv, addr := serveForTest(t, onRoot(t, dir, iosched.Options{Memory: 64 << 20}, Config{Mem: mem, DecodeParallelism: par,
		Admission: admission.New(1<<30, 200*time.Millisecond)}))
	return srv, dialForTest(t, addr, opts...)
}

// TestReadAheadSendsTheSequentialBatches: with read-ahead on (0, the
// default) and off (1) a scan gets the same batches, in order, with the
// same figures, and gives every byte and all admission memory back.
func TestReadAheadSendsTheSequentialBatches(t *testing.T) {
	dir := wideFile(t, 64000)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	results := map[int]*scanResult{}
	for _, par := range []int{1, 0} {
		t.Run(fmt.Sprintf("decode-parallelism=%d", par), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer assertReleased(t, mem)
			srv, c := readAheadServer(t, dir, mem, par)
			res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"wide.parquet"}, "batch_rows": 1000})
			if err != nil {
				t.Fatal(err)
			}
			results[par] = res
			if st := srv.admit.Stats(); st.InUse != 0 || st.Streams != 0 {
				t.Errorf("admission %+v after the scan: want nothing held", st)
			}
		})
	}
	seq, ahead := results[1], results[0]
	if seq == nil || ahead == nil {
		t.Fatal("a scan failed")
	}
	defer seq.release()
	defer ahead.release()
	if len(seq.records) != len(ahead.records) || len(seq.records) < 10 {
		t.Fatalf("%d batches with read-ahead, %d without; want the same, and several", len(ahead.records), len(seq.records))
	}
	for i := range seq.records {
		if !array.RecordEqual(seq.records[i], ahead.records[i]) {
			t.Fatalf("batch %d differs with read-ahead", i)
		}
	}
	for i := range seq.stats {
		if seq.stats[i].Batches != ahead.stats[i].Batches || seq.stats[i].Rows != ahead.stats[i].Rows {
			t.Errorf("endpoint %d figures: %d batches %d rows with read-ahead, %d %d without", i,
				ahead.stats[i].Batches, ahead.stats[i].Rows, seq.stats[i].Batches, seq.stats[i].Rows)
		}
	}
}

// TestReadAheadCancelledMidStream: a client that stops reading and
// cancels leaves no goroutine, no Arrow byte and no admission memory
// behind, with a write in flight when it cancels.
func TestReadAheadCancelledMidStream(t *testing.T) {
	dir := wideFile(t, 128000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	// A small fixed window: the server's writes block on flow control.
	srv, c := readAheadServer(t, dir, mem, 0, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, _ := json.Marshal(map[string]any{"paths": []string{"wide.parquet"}, "batch_rows": 1000})
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine() // the connection's are up
	s, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	r, err := flight.NewRecordReader(s)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() {
		t.Fatalf("no first batch: %v", r.Err())
	}
	time.Sleep(100 * time.Millisecond) // the server decodes ahead and blocks
	cancel()
	for r.Next() {
	}
	if err := r.Err(); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("the stream ended cleanly (%v), before the cancel: make the file bigger", err)
	}
	r.Release()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st := srv.admit.Stats()
		if mem.CurrentAlloc() == 0 && st.InUse == 0 && st.Streams == 0 && runtime.NumGoroutine() <= before+2 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("after the cancel: %d bytes allocated, admission %+v, goroutines %d (before %d)",
		mem.CurrentAlloc(), srv.admit.Stats(), runtime.NumGoroutine(), before)
}
