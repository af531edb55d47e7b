package stream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/deletes"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

const vectorFile = "t/_vectors.bin"

// vectorReads records the reads of the shared vector file by offset, and
// can hold them until their context ends.
type vectorReads struct {
	hold bool
	fail error // every read of the vector file fails so
	mu   sync.Mutex
	seen map[int64]int // offset -> reads
	got  chan int64    // every offset read, as it is read
	open int           // reads held now
}

func (v *vectorReads) hook(ctx context.Context, name string, off int64, _ int) error {
	if name != vectorFile {
		return nil
	}
	v.mu.Lock()
	v.seen[off]++
	v.open++
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		v.open--
		v.mu.Unlock()
	}()
	v.got <- off
	if v.fail != nil {
		return v.fail
	}
	if v.hold {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (v *vectorReads) figures() (seen map[int64]int, open int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	seen = map[int64]int{}
	for k, n := range v.seen {
		seen[k] = n
	}
	return seen, v.open
}

// await waits until every offset of want was read (a guard against a hang,
// not a timing assertion).
func (v *vectorReads) await(t *testing.T, want ...int64) {
	t.Helper()
	missing := map[int64]bool{}
	for _, o := range want {
		missing[o] = true
	}
	timeout := time.After(20 * time.Second)
	for len(missing) > 0 {
		select {
		case o := <-v.got:
			delete(missing, o)
		case <-timeout:
			t.Fatalf("the vectors at %v were never read", missing)
		}
	}
}

// deletesAheadFixture is an endpoint of files, each with a deletion vector
// in one shared vector file, as Spark writes them, read through a
// scheduler whose vector-file reads are recorded.
func deletesAheadFixture(t *testing.T, files, ahead int, hold bool) (*Config, []*scandv1.ScanTask, *vectorReads) {
	t.Helper()
	objects := map[string][]byte{}
	vec := []byte{1} // the format version byte
	var dvs []*scandv1.RowDeletes
	for i := range files {
		framed, err := deletes.EncodeDeletionVector(roaring64.BitmapOf(uint64(i), uint64(i+10)))
		if err != nil {
			t.Fatal(err)
		}
		dvs = append(dvs, &scandv1.RowDeletes{Kind: scandv1.RowDeletes_DELETION_VECTOR, Path: vectorFile,
			Offset: int64(len(vec)), Length: int64(len(framed)), Cardinality: 2})
		vec = append(vec, framed...)
		objects[fmt.Sprintf("t/d%d.parquet", i)] = make([]byte, 100)
	}
	objects[vectorFile] = vec
	mem := storagetest.NewMem(objects)
	reads := &vectorReads{hold: hold, seen: map[int64]int{}, got: make(chan int64, 10*files)}
	b := storagetest.WithReadHook(mem, reads.hook)
	sched := iosched.New(b, iosched.Options{})
	cfg := &Config{
		Scheduler:  sched,
		FilesAhead: ahead,
		Open: func(ctx context.Context, info storage.Info) (*Opened, error) {
			f, err := sched.Open(ctx, info)
			if err != nil {
				return nil, err
			}
			return &Opened{IO: f}, nil
		},
		CheckFile: func(context.Context, storage.Info) error { return nil },
	}
	var tasks []*scandv1.ScanTask
	for i := range files {
		dvs[i].Size = int64(len(vec))
		tasks = append(tasks, &scandv1.ScanTask{Path: fmt.Sprintf("t/d%d.parquet", i), Size: 100, Deletes: []*scandv1.RowDeletes{dvs[i]}})
	}
	return cfg, tasks, reads
}

// While the stream is still on its first file, the vectors of the files
// opened ahead are requested (and no further ones: files ahead bound
// them); the stream then loads a later file's vector without a request
// of its own, and holds no prefetch memory once done.
func TestDeletesRequestedAhead(t *testing.T) {
	cfg, tasks, reads := deletesAheadFixture(t, 4, 2, false)
	ctx := context.Background()
	fa := cfg.newFilesAhead(tasks[1:], nil)
	defer fa.stop()
	fa.fill(ctx)
	// The stream has not taken file 1: its vector, and file 2's, are on
	// their way all the same.
	reads.await(t, tasks[1].Deletes[0].Offset, tasks[2].Deletes[0].Offset)
	if seen, _ := reads.figures(); seen[tasks[3].Deletes[0].Offset] != 0 {
		t.Fatalf("file 3's vector was read before file 1 was taken, beyond the %d files ahead", cfg.FilesAhead)
	}

	o, err := fa.take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := reads.figures()
	st := &stream{cfg: cfg, task: tasks[1], file: o}
	if err := st.loadDeletes(ctx); err != nil {
		t.Fatal(err)
	}
	if n := st.deletes.rows.Len(); n != 2 {
		t.Fatalf("file 1's vector holds %d rows, want 2", n)
	}
	after, _ := reads.figures()
	if off := tasks[1].Deletes[0].Offset; after[off] != before[off] || after[off] != 1 {
		t.Fatalf("file 1's vector was read %d times (%d before the load), want once, ahead", after[off], before[off])
	}
	st.releaseDeletes()
	o.Close()
	fa.stop()
	if n := cfg.Scheduler.MemoryInUse(); n != 0 {
		t.Fatalf("%d bytes of prefetch memory held after the stream", n)
	}
}

// The first file's vector, not opened ahead, is read while its data file
// opens, and the load takes it.
func TestDeletesOfCurrentFileOpenWithIt(t *testing.T) {
	cfg, tasks, reads := deletesAheadFixture(t, 1, 1, false)
	ctx := context.Background()
	st := &stream{cfg: cfg, task: tasks[0]}
	o, err := st.openCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.file = o
	if o.deletes == nil || o.deletes.vectors[0] == nil {
		t.Fatal("the first file's vector was not opened with it")
	}
	if err := st.loadDeletes(ctx); err != nil {
		t.Fatal(err)
	}
	if seen, _ := reads.figures(); seen[tasks[0].Deletes[0].Offset] != 1 {
		t.Fatalf("the vector was read %d times, want once", seen[tasks[0].Deletes[0].Offset])
	}
	st.releaseDeletes()
	o.Close()
	if n := cfg.Scheduler.MemoryInUse(); n != 0 {
		t.Fatalf("%d bytes of prefetch memory held after the stream", n)
	}
}

// Stopping the files ahead (a stream that ends, fails or spends its limit)
// cancels their vectors' reads in flight at once and frees their memory.
func TestDeletesAheadStopped(t *testing.T) {
	cfg, tasks, reads := deletesAheadFixture(t, 6, 4, true)
	ctx := context.Background()
	fa := cfg.newFilesAhead(tasks[1:], nil)
	fa.fill(ctx)
	reads.await(t, tasks[1].Deletes[0].Offset, tasks[4].Deletes[0].Offset)
	fa.stop()
	if _, open := reads.figures(); open != 0 {
		t.Fatalf("%d vector reads still held after stop", open)
	}
	if n := cfg.Scheduler.MemoryInUse(); n != 0 {
		t.Fatalf("%d bytes of prefetch memory held after stop", n)
	}
}

// A vector file that is gone fails the load ahead quietly, and the
// stream's load as it always did: DATA_LOSS (scanner.ErrCorrupt), never
// rows without their deletes.
func TestDeletesAheadMissingVectorFile(t *testing.T) {
	cfg, tasks, _ := deletesAheadFixture(t, 3, 2, false)
	cfg.Scheduler = iosched.New(storagetest.NewMem(map[string][]byte{"t/d1.parquet": make([]byte, 100)}), iosched.Options{})
	sched := cfg.Scheduler
	cfg.Open = func(ctx context.Context, info storage.Info) (*Opened, error) {
		f, err := sched.Open(ctx, info)
		if err != nil {
			return nil, err
		}
		return &Opened{IO: f}, nil
	}
	ctx := context.Background()
	fa := cfg.newFilesAhead(tasks[1:2], nil)
	defer fa.stop()
	fa.fill(ctx)
	o, err := fa.take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	st := &stream{cfg: cfg, task: tasks[1], file: o}
	defer st.releaseDeletes()
	err = st.loadDeletes(ctx)
	if !errors.Is(err, scanner.ErrCorrupt) || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("load of a missing vector file: %v, want its delete file missing (scanner.ErrCorrupt)", err)
	}
}

// The vectors of an endpoint's files in one shared vector file are
// announced together when the stream starts: the file is read in one
// request (its ranges touch), not once per data file, and every file's
// load takes its vector from it.
func TestSharedVectorFileReadOnce(t *testing.T) {
	cfg, tasks, reads := deletesAheadFixture(t, 5, 2, false)
	ctx := context.Background()
	sv := cfg.openSharedVectors(ctx, tasks)
	defer sv.close()
	if len(sv) != 1 {
		t.Fatalf("%d shared vector files, want 1", len(sv))
	}
	fa := cfg.newFilesAhead(tasks[1:], sv)
	defer fa.stop()
	fa.fill(ctx)
	st := &stream{cfg: cfg, task: tasks[0], vectors: sv}
	for i := range tasks {
		if i > 0 {
			st.task = tasks[i]
		}
		o, err := st.openCurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st.file = o
		if o.deletes != nil && o.deletes.vectors[0] != nil {
			t.Fatalf("file %d opened the shared vector file for itself", i)
		}
		if err := st.loadDeletes(ctx); err != nil {
			t.Fatal(err)
		}
		if n := st.deletes.rows.Len(); n != 2 {
			t.Fatalf("file %d: %d deleted rows, want 2", i, n)
		}
		st.releaseDeletes()
		o.Close()
	}
	if seen, _ := reads.figures(); len(seen) != 1 || seen[1] != 1 {
		t.Fatalf("vector file reads by offset %v, want one read at 1", seen)
	}
	fa.stop()
	if n := cfg.Scheduler.MemoryInUse(); n != 0 {
		t.Fatalf("%d bytes of prefetch memory held after the stream", n)
	}
}

// A shared vector file that opened but cannot be read (on an object store
// the open costs no request, so a missing file shows at its first read)
// fails each file's load as it always did: DATA_LOSS, its delete file
// missing, never rows without their deletes.
func TestSharedVectorFileGone(t *testing.T) {
	cfg, tasks, reads := deletesAheadFixture(t, 3, 2, false)
	reads.fail = fmt.Errorf("vector file: %w", fs.ErrNotExist)
	ctx := context.Background()
	sv := cfg.openSharedVectors(ctx, tasks)
	defer sv.close()
	if len(sv) != 1 {
		t.Fatalf("%d shared vector files, want 1", len(sv))
	}
	st := &stream{cfg: cfg, task: tasks[0], vectors: sv}
	o, err := st.openCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	st.file = o
	defer st.releaseDeletes()
	err = st.loadDeletes(ctx)
	if !errors.Is(err, scanner.ErrCorrupt) || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("load from a vector file gone: %v, want its delete file missing (scanner.ErrCorrupt)", err)
	}
}
