package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/storagetest"
)

// slowFiles counts, for a bucket whose every read takes delay, how many
// distinct files have reads in flight at once, once armed (planning's
// footer reads are not counted).
type slowFiles struct {
	delay    time.Duration
	mu       sync.Mutex
	armed    bool
	inflight map[string]int
	maxFiles int
	reads    int
}

func (s *slowFiles) hook(ctx context.Context, name string, _ int64, _ int) error {
	s.mu.Lock()
	if !s.armed {
		s.mu.Unlock()
		return nil
	}
	s.reads++
	s.inflight[name]++
	s.maxFiles = max(s.maxFiles, len(s.inflight))
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.inflight[name]--; s.inflight[name] == 0 {
			delete(s.inflight, name)
		}
		s.mu.Unlock()
	}()
	select {
	case <-time.After(s.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// arm starts counting.
func (s *slowFiles) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed, s.inflight, s.maxFiles, s.reads = true, map[string]int{}, 0, 0
}

func (s *slowFiles) figures() (maxFiles, reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxFiles, s.reads
}

// aheadServer serves dir through a bucket whose reads take delay, with
// files ahead set to ahead, and a checked allocator.
func aheadServer(t *testing.T, dir string, ahead int, delay time.Duration) (*Server, flight.Client, *slowFiles, *memory.CheckedAllocator) {
	t.Helper()
	lb, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowFiles{delay: delay}
	b := &storage.Mux{Default: storagetest.WithReadHook(lb, slow.hook)}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	cfg := Config{Mem: mem, Bucket: b, Scheduler: iosched.New(b, iosched.Options{}), Planning: Planning{FilesAhead: ahead}}
	srv, addr := serveForTest(t, cfg)
	return srv, dialForTest(t, addr), slow, mem
}

// While a packed stream reads one file, the next files' fetches are in
// flight: the reads of up to FilesAhead+1 files overlap, never more, and
// the rows are those of reading in turn. Without files ahead, one file's
// reads at a time.
func TestFilesAheadOverlapFetches(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 12, 10)
	for _, tc := range []struct {
		ahead              int
		minFiles, maxFiles int
	}{
		{-1, 1, 1},
		{1, 2, 2},
		{4, 3, 5},
	} {
		t.Run(fmt.Sprint("ahead ", tc.ahead), func(t *testing.T) {
			_, c, slow, mem := aheadServer(t, dir, tc.ahead, 30*time.Millisecond)
			ctx := context.Background()
			ticket := planTicket(ctx, t, c, map[string]any{"paths": []string{"f/"}})
			slow.arm()
			start := time.Now()
			ids, _ := streamIDs(ctx, t, c, ticket)
			elapsed := time.Since(start)
			if !slices.Equal(ids, seq(0, 120)) {
				t.Fatalf("ids %v, want 0..119", ids)
			}
			files, reads := slow.figures()
			t.Logf("files ahead %d: %d reads, at most %d files' reads at once, %v", tc.ahead, reads, files, elapsed)
			if files < tc.minFiles || files > tc.maxFiles {
				t.Errorf("at most %d files had reads in flight at once, want %d to %d", files, tc.minFiles, tc.maxFiles)
			}
			assertReleased(t, mem)
		})
	}
}

// A limit spent in the first file stops the files ahead: their reads are
// cancelled (or finished) and nothing more is opened.
func TestFilesAheadStopAtLimit(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 12, 10)
	srv, c, slow, mem := aheadServer(t, dir, 4, 30*time.Millisecond)
	ctx := context.Background()
	// A filtered limit: every file is planned, as the rows that pass are
	// not known.
	ticket := planTicket(ctx, t, c, map[string]any{"paths": []string{"f/"}, "filter": "id >= 0", "limit": 5})
	if task := decodeForTest(t, ticket); len(task.More) != 11 {
		t.Fatalf("the ticket has %d further files, want 11", len(task.More))
	}
	slow.arm()
	ids, _ := streamIDs(ctx, t, c, ticket)
	if !slices.Equal(ids, seq(0, 5)) {
		t.Fatalf("ids %v, want 0..4", ids)
	}
	if _, reads := slow.figures(); reads > 5 {
		t.Errorf("%d reads for a limit within the first file, want at most the first file's and 4 ahead", reads)
	}
	assertReleased(t, mem)
	if n := srv.sched.MemoryInUse(); n != 0 {
		t.Errorf("%d bytes of prefetch memory held after the stream", n)
	}
}

// A client that cancels mid-stream leaves no goroutine, Arrow byte or
// prefetch memory behind, with files ahead being fetched.
func TestFilesAheadCancelled(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 24, 10)
	srv, c, slow, mem := aheadServer(t, dir, 4, 200*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, _ := json.Marshal(map[string]any{"paths": []string{"f/"}, "batch_rows": 5})
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	slow.arm()
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
	cancel()
	for r.Next() {
	}
	if err := r.Err(); err == nil || err == io.EOF {
		t.Fatalf("the stream ended cleanly (%v), before the cancel", err)
	}
	r.Release()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if mem.CurrentAlloc() == 0 && srv.sched.MemoryInUse() == 0 && runtime.NumGoroutine() <= before+2 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("after the cancel: %d bytes allocated, %d bytes of prefetch memory, goroutines %d (before %d)",
		mem.CurrentAlloc(), srv.sched.MemoryInUse(), runtime.NumGoroutine(), before)
}

// A later file rewritten between planning and reading fails the stream
// with FailedPrecondition naming it, though it was opened ahead.
func TestFilesAheadChangedAfterPlanning(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 6, 10)
	_, c, _, _ := aheadServer(t, dir, 4, 0)
	ctx := context.Background()
	ticket := planTicket(ctx, t, c, map[string]any{"paths": []string{"f/"}})
	time.Sleep(10 * time.Millisecond)
	rec := sampleRecord(0, 30)
	writeParquet(t, dir, "f/003.parquet", rec, 4)
	rec.Release()
	stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err == nil {
		for err == nil {
			_, err = stream.Recv()
		}
	}
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "003.parquet") {
		t.Errorf("got %v, want FailedPrecondition naming f/003.parquet", err)
	}
}
