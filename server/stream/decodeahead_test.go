package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
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

// scriptedEndpoint runs a packed endpoint of the files, decoded ahead.
func scriptedEndpoint(t *testing.T, mem memory.Allocator, adm *admission.Controller, task *scandv1.ScanTask, files map[string]*scriptedFile) error {
	t.Helper()
	objects := map[string][]byte{}
	for name := range files {
		objects[name] = make([]byte, 100)
	}
	sched := iosched.New(storagetest.NewMem(objects), iosched.Options{})
	cfg := &Config{
		Scheduler: sched, Admission: adm, Mem: mem, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DecodeAhead: 1, SendPath: wire.SendZeroCopy, StreamIdleTimeout: time.Minute,
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

// waitOrFail waits for ch; the time limit guards against a hang, it is
// not a timing assertion.
func waitOrFail(ctx context.Context, ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Second):
		return errors.New(what + " never happened")
	}
}

// File 1 starts decoding while the stream still reads file 0: file 0's
// Read does not return before file 1's has begun, which only the ahead
// decode lets happen (read in turn, the stream would wait forever).
func TestDecodeAheadOverlapsFiles(t *testing.T) {
	for _, filter := range []string{"", "id >= 0"} {
		t.Run("filter "+filter, func(t *testing.T) {
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
			if err := scriptedEndpoint(t, mem, adm, endpointTask(filter, 0, 3), files); err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
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
	mem.AssertSize(t, 0)
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
	mem.AssertSize(t, 0)
}
