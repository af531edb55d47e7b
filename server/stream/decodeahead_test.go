package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/deletes"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
	"github.com/scand/scand/wire"
)

var idSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

// scriptedFile is a file of one int64 column whose Read runs read.
type scriptedFile struct {
	rows int64
	read func(ctx context.Context, mem memory.Allocator, emit func(arrow.RecordBatch) error) error
}

func (f *scriptedFile) Format() scanner.Format { return scanner.Format(0) }
func (f *scriptedFile) Schema() *arrow.Schema  { return idSchema }
func (f *scriptedFile) NumRows() int64         { return f.rows }
func (f *scriptedFile) Project([]string) (*scanner.Projection, error) {
	return &scanner.Projection{Schema: idSchema, Groups: []scanner.Group{{Rows: f.rows, MemBytes: 8 * f.rows, WorkBytes: 1024}}}, nil
}
func (f *scriptedFile) Read(ctx context.Context, _ *scanner.Projection, o scanner.ReadOptions, emit func(arrow.RecordBatch) error) error {
	return f.read(ctx, o.Mem, emit)
}

// ids is a batch of the ids from start, n of them.
func ids(mem memory.Allocator, start, n int64) arrow.RecordBatch {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range n {
		b.Append(start + i)
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(idSchema, []arrow.Array{col}, n)
}

// countingOut is a DoGet stream that counts the messages sent.
type countingOut struct {
	grpc.ServerStream
	ctx  context.Context
	mu   sync.Mutex
	sent int
}

func (o *countingOut) Context() context.Context { return o.ctx }
func (o *countingOut) Send(*flight.FlightData) error {
	return o.SendMsg(nil)
}
func (o *countingOut) SendMsg(any) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent++
	return nil
}

// scriptedConfig is a stream's configuration over the scripted files,
// decoding ahead, under adm.
func scriptedConfig(mem memory.Allocator, adm *admission.Controller, files map[string]*scriptedFile, idle time.Duration) *Config {
	objects := map[string][]byte{}
	for name := range files {
		objects[name] = make([]byte, 100)
	}
	sched := iosched.New(storagetest.NewMem(objects), iosched.Options{})
	return &Config{
		Scheduler: sched, Admission: adm, Mem: mem, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DecodeAhead: 1, SendPath: wire.SendZeroCopy, StreamIdleTimeout: idle,
		Open: func(ctx context.Context, info storage.Info) (*Opened, error) {
			f, err := sched.Open(ctx, info)
			if err != nil {
				return nil, err
			}
			return &Opened{IO: f, File: files[info.Name]}, nil
		},
		Audit:         func(context.Context, string, string, error, ...any) {},
		CountScan:     func(int64, int64, error) {},
		CountFiltered: func(int64) {},
	}
}

// scriptedEndpoint runs a packed endpoint of the files, decoded ahead.
func scriptedEndpoint(t *testing.T, mem memory.Allocator, adm *admission.Controller, task *scandv1.ScanTask, files map[string]*scriptedFile) error {
	t.Helper()
	cfg := scriptedConfig(mem, adm, files, time.Minute)
	out := &countingOut{ctx: context.Background()}
	return Run(context.Background(), cfg, task, wire.CompressNone, out, "test", "peer")
}

func endpointTask(filter string, limit int64, n int) *scandv1.ScanTask {
	head := &scandv1.ScanTask{Path: "f0", Size: 100, RowGroups: []int32{0}, Limit: limit}
	if filter != "" {
		head.RowFilter = &scandv1.ScanTask_Filter{Filter: filter}
	}
	for i := 1; i < n; i++ {
		head.More = append(head.More, &scandv1.ScanTask{Path: fmt.Sprintf("f%d", i), Size: 100, RowGroups: []int32{0}})
	}
	return head
}

// inlineVector is a deletion vector, inline in the ticket, of rows.
func inlineVector(t *testing.T, rows ...uint64) *scandv1.RowDeletes {
	t.Helper()
	blob, err := deletes.EncodeDeletionVector(roaring64.BitmapOf(rows...))
	if err != nil {
		t.Fatal(err)
	}
	return &scandv1.RowDeletes{Kind: scandv1.RowDeletes_DELETION_VECTOR, Inline: blob, Cardinality: int64(len(rows))}
}

// waitOrFail waits for ch; the time limit guards against a hang, it is
// not a timing assertion.
func waitOrFail(ctx context.Context, ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
		return errors.New(what + " never happened")
	}
}

// File 1 starts decoding while the stream still reads file 0: file 0's
// Read does not return before file 1's has begun, which only the ahead
// decode lets happen (read in turn, the stream would wait forever).
//
// A file with deletes is decoded ahead too: its deletes load on the ahead
// goroutine, under its own grant.
func TestDecodeAheadOverlapsFiles(t *testing.T) {
	for _, tc := range []struct {
		filter  string
		deletes bool
	}{{"", false}, {"id >= 0", false}, {"", true}, {"id >= 0", true}} {
		filter := tc.filter
		t.Run(fmt.Sprintf("filter %q deletes %v", filter, tc.deletes), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			started := []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
			files := map[string]*scriptedFile{}
			for i := range 3 {
				files[fmt.Sprintf("f%d", i)] = &scriptedFile{rows: 20, read: func(ctx context.Context, m memory.Allocator, emit func(arrow.RecordBatch) error) error {
					close(started[i])
					for b := range 2 {
						if err := emit(ids(m, int64(20*i+10*b), 10)); err != nil {
							return err
						}
					}
					if i+1 < len(started) {
						return waitOrFail(ctx, started[i+1], fmt.Sprintf("file %d's decode while file %d is read", i+1, i))
					}
					return nil
				}}
			}
			adm := admission.New(1<<30, time.Minute)
			task := endpointTask(filter, 0, 3)
			if tc.deletes {
				for _, ft := range append([]*scandv1.ScanTask{task}, task.More...) {
					ft.Deletes = []*scandv1.RowDeletes{inlineVector(t, 3, 17)}
				}
			}
			if err := scriptedEndpoint(t, mem, adm, task, files); err != nil {
				t.Fatal(err)
			}
			assertReleased(t, mem)
			if n := adm.Stats().InUse; n != 0 {
				t.Errorf("%d bytes of admission held after the stream", n)
			}
		})
	}
}

// A limit spent in file 0 cancels file 1's decode at once: its batches
// are released, its goroutine has returned by the time the stream ends,
// and no Arrow byte or admission byte is held.
func TestDecodeAheadStopsAtLimit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	aheadStarted, aheadReturned := make(chan struct{}), make(chan struct{})
	var aheadErr error
	files := map[string]*scriptedFile{
		"f0": {rows: 10, read: func(ctx context.Context, m memory.Allocator, emit func(arrow.RecordBatch) error) error {
			if err := waitOrFail(ctx, aheadStarted, "file 1's decode"); err != nil {
				return err
			}
			return emit(ids(m, 0, 10))
		}},
		"f1": {rows: 1 << 20, read: func(ctx context.Context, m memory.Allocator, emit func(arrow.RecordBatch) error) (err error) {
			defer func() { aheadErr = err; close(aheadReturned) }()
			close(aheadStarted)
			for i := int64(0); ; i++ { // more than the stream ever takes
				if err := emit(ids(m, 10+10*i, 10)); err != nil {
					return err
				}
			}
		}},
		"f2": {rows: 10, read: func(context.Context, memory.Allocator, func(arrow.RecordBatch) error) error {
			return errors.New("file 2 is never read")
		}},
	}
	adm := admission.New(1<<30, time.Minute)
	if err := scriptedEndpoint(t, mem, adm, endpointTask("id >= 0", 5, 3), files); err != nil {
		t.Fatal(err)
	}
	select {
	case <-aheadReturned:
	default:
		t.Fatal("file 1's decode still runs after the stream ended")
	}
	if !errors.Is(aheadErr, context.Canceled) {
		t.Errorf("file 1's decode ended with %v, want context.Canceled", aheadErr)
	}
	assertReleased(t, mem)
	if n := adm.Stats().InUse; n != 0 {
		t.Errorf("%d bytes of admission held after the stream", n)
	}
}

// An error of the file decoded ahead is returned when the stream reaches
// it, after the batches of the files before.
func TestDecodeAheadErrorWhenReached(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	boom := errors.New("file 1 is corrupt")
	file0Done := false
	files := map[string]*scriptedFile{
		"f0": {rows: 10, read: func(_ context.Context, m memory.Allocator, emit func(arrow.RecordBatch) error) error {
			err := emit(ids(m, 0, 10))
			file0Done = true
			return err
		}},
		"f1": {rows: 10, read: func(context.Context, memory.Allocator, func(arrow.RecordBatch) error) error {
			return boom
		}},
	}
	err := scriptedEndpoint(t, mem, admission.New(1<<30, time.Minute), endpointTask("", 0, 2), files)
	if !errors.Is(err, boom) || !file0Done {
		t.Fatalf("got %v (file 0 read: %v), want file 1's error after file 0", err, file0Done)
	}
	assertReleased(t, mem)
}

// A file whose decode memory is not free at once is not decoded ahead
// (admission.TryAdmitFor): with a share of one grant, every file is
// admitted and read in turn on the stream's goroutine, after the one
// before, and all rows arrive with no over-commit.
func TestDecodeAheadNotAdmittedReadsInTurn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var reading atomic.Int64 // the file being read, +1
	files := map[string]*scriptedFile{}
	for i := range 3 {
		files[fmt.Sprintf("f%d", i)] = &scriptedFile{rows: 10, read: func(ctx context.Context, m memory.Allocator, emit func(arrow.RecordBatch) error) error {
			if !reading.CompareAndSwap(0, int64(i+1)) {
				return fmt.Errorf("file %d read while file %d was", i, reading.Load()-1)
			}
			defer reading.Store(0)
			return emit(ids(m, int64(10*i), 10))
		}}
	}
	work := streamWorkBytes(&scanner.Projection{Groups: []scanner.Group{{Rows: 10, MemBytes: 80, WorkBytes: 1024}}}, []int{0}, 10, true)
	adm := admission.NewWithOptions(work, admission.Options{SmallShare: -1})
	task := endpointTask("id >= 0", 0, 3)
	task.BatchRows = 10
	if err := scriptedEndpoint(t, mem, adm, task, files); err != nil {
		t.Fatal(err)
	}
	assertReleased(t, mem)
	if st := adm.Stats(); st.Peak != work || st.Overcommits != 0 || st.InUse != 0 {
		t.Errorf("admission %+v: want one grant of %d bytes at a time, no over-commit, nothing held", st, work)
	}
}

// blockingOut is a DoGet stream whose sends block until unblock is
// closed.
type blockingOut struct {
	countingOut
	unblock <-chan struct{}
}

func (o *blockingOut) Send(*flight.FlightData) error { return o.SendMsg(nil) }
func (o *blockingOut) SendMsg(m any) error {
	if err := waitOrFail(o.ctx, o.unblock, "the test's unblocking of the client"); err != nil {
		return err
	}
	return o.countingOut.SendMsg(m)
}

// A stream whose client stops reading parks; it then gives back the next
// file decoded ahead (its read cancelled, its grant closed), and reads
// that file in turn once the client reads again: every row arrives.
//
// A send blocks, and so parks, only once a batch goes out while the
// client reads nothing: with read-ahead the stream holds its last batch
// back and writes the one before it on a goroutine (readahead.go), so
// file 0 emits three batches (batch_rows keeps them from being gathered
// into one, gather.go) and the third waits for the blocked write. The
// file decoded ahead must be running by then: file 0 waits for it.
func TestDecodeAheadDroppedWhenParked(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	aheadStarted, aheadDropped := make(chan struct{}), make(chan struct{})
	var reads1 int
	var firstErr error
	files := map[string]*scriptedFile{
		"f0": {rows: 30, read: func(ctx context.Context, m memory.Allocator, emit func(arrow.RecordBatch) error) error {
			if err := waitOrFail(ctx, aheadStarted, "file 1's decode"); err != nil {
				return err
			}
			for b := range int64(3) {
				if err := emit(ids(m, 10*b, 10)); err != nil {
					return err
				}
			}
			return nil
		}},
		"f1": {rows: 10, read: func(ctx context.Context, m memory.Allocator, emit func(arrow.RecordBatch) error) (err error) {
			if reads1++; reads1 > 1 {
				return emit(ids(m, 30, 10)) // read in turn, after the drop
			}
			defer func() { firstErr = err; close(aheadDropped) }()
			close(aheadStarted)
			return waitOrFail(ctx, nil, "the drop of file 1's ahead read") // ctx's error once dropped
		}},
	}
	adm := admission.New(1<<30, time.Minute)
	cfg := scriptedConfig(mem, adm, files, time.Minute)
	// The client reads nothing until file 1's ahead read was dropped,
	// which only parking (after parkAfter blocked in a send) does.
	out := &blockingOut{countingOut: countingOut{ctx: context.Background()}, unblock: aheadDropped}
	task := endpointTask("id >= 0", 0, 2)
	task.BatchRows = 10
	if err := Run(context.Background(), cfg, task, wire.CompressNone, out, "test", "peer"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-aheadStarted:
	default:
		t.Fatal("file 1 was never decoded ahead")
	}
	if !errors.Is(firstErr, context.Canceled) || reads1 != 2 {
		t.Errorf("file 1: ahead read ended with %v, %d reads; want context.Canceled, then a read in turn", firstErr, reads1)
	}
	// Four data messages and the schema: every batch went out.
	if out.sent != 5 {
		t.Errorf("%d messages sent, want 5", out.sent)
	}
	assertReleased(t, mem)
	if n := adm.Stats().InUse; n != 0 {
		t.Errorf("%d bytes of admission held after the stream", n)
	}
}

// pacedOut is a DoGet stream whose client reads nothing until from, then
// takes pace per message.
type pacedOut struct {
	countingOut
	from time.Time
	pace time.Duration
}

func (o *pacedOut) Send(*flight.FlightData) error { return o.SendMsg(nil) }
func (o *pacedOut) SendMsg(m any) error {
	time.Sleep(time.Until(o.from) + o.pace)
	return o.countingOut.SendMsg(m)
}

// Streams that decode ahead cannot lock each other up over admission:
// four packed endpoints share a decode share that fits about one grant
// each, their clients read slowly, some nothing for a while (their
// streams park), and every stream ends within the bound, with all its
// rows or cut (admission.ErrCut, what the server maps to
// RESOURCE_EXHAUSTED), no stream waiting, and every Arrow and admission
// byte given back. A stream that waited for a second grant while holding
// one would lock up here; the context's deadline turns that into a
// failure rather than a hang.
func TestDecodeAheadStreamsDoNotLockUp(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stuckAfter time.Duration
	}{
		// The default: a blocked stream parks, and drops its next file,
		// before admission may over-commit or cut for a waiter.
		{"stuck after parking", admission.DefaultStuckAfter},
		// Stalled streams are cut before they park.
		{"stuck before parking", parkAfter / 5},
	} {
		t.Run(tc.name, func(t *testing.T) { testStreamsDoNotLockUp(t, tc.stuckAfter) })
	}
}

func testStreamsDoNotLockUp(t *testing.T, stuckAfter time.Duration) {
	const streams, filesPer, batches = 4, 4, 3
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	var overlaps atomic.Int64 // a file's read began while its stream's previous one ran
	files := map[string]*scriptedFile{}
	running := make([]atomic.Int64, streams)
	for s := range streams {
		for f := range filesPer {
			files[fmt.Sprintf("s%d-f%d", s, f)] = &scriptedFile{rows: 10 * batches, read: func(ctx context.Context, m memory.Allocator, emit func(arrow.RecordBatch) error) error {
				if running[s].Add(1) > 1 {
					overlaps.Add(1)
				}
				defer running[s].Add(-1)
				for b := range int64(batches) {
					if err := emit(ids(m, int64(f*10*batches)+10*b, 10)); err != nil {
						return err
					}
				}
				return nil
			}}
		}
	}
	// A grant as the stream asks it: batches of batch_rows, read-ahead on.
	work := streamWorkBytes(&scanner.Projection{Groups: []scanner.Group{{Rows: 10 * batches, MemBytes: 80 * batches, WorkBytes: 1024}}}, []int{0}, 10, true)
	adm := admission.NewWithOptions(streams*work+work/2, admission.Options{StuckAfter: stuckAfter, SmallShare: -1})
	cfg := scriptedConfig(mem, adm, files, 5*time.Second)
	// The bound: far more than the slowest client needs (1.2 s of reading
	// nothing, then 24 messages at 5 ms), far less than a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	idle := []time.Duration{0, 300 * time.Millisecond, 800 * time.Millisecond, 1200 * time.Millisecond}
	outs := make([]*pacedOut, streams)
	errs := make([]error, streams)
	var wg sync.WaitGroup
	for s := range streams {
		head := &scandv1.ScanTask{Path: fmt.Sprintf("s%d-f0", s), Size: 100, RowGroups: []int32{0}, BatchRows: 10,
			RowFilter: &scandv1.ScanTask_Filter{Filter: "id >= 0"}}
		for f := 1; f < filesPer; f++ {
			head.More = append(head.More, &scandv1.ScanTask{Path: fmt.Sprintf("s%d-f%d", s, f), Size: 100, RowGroups: []int32{0}})
		}
		outs[s] = &pacedOut{countingOut: countingOut{ctx: ctx}, from: start.Add(idle[s]), pace: 5 * time.Millisecond}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[s] = Run(ctx, cfg, head, wire.CompressNone, outs[s], fmt.Sprintf("client%d", s), "peer")
		}()
	}
	wg.Wait()
	var cuts int
	for s, err := range errs {
		switch {
		case errors.Is(err, admission.ErrCut):
			cuts++
		case err != nil:
			t.Errorf("stream %d: %v", s, err)
		case outs[s].sent != 1+filesPer*batches: // the schema, then every batch
			t.Errorf("stream %d: %d messages, want %d", s, outs[s].sent, 1+filesPer*batches)
		}
	}
	t.Logf("%v, %d streams cut, %d files read while the one before still was, admission %+v", time.Since(start).Round(time.Millisecond), cuts, overlaps.Load(), adm.Stats())
	assertReleased(t, mem)
	if st := adm.Stats(); st.InUse != 0 || st.Streams != 0 || st.Waiting != 0 {
		t.Errorf("admission %+v after the streams: want nothing held or waiting", st)
	}
}
