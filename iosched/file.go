package iosched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/scand/scand/iosched/rangecache"
	"github.com/scand/scand/storage"
)

// DefaultTailSize is how much of a file's end the first footer read fetches
// speculatively. 64 KiB holds the footer of most Parquet and ORC files, so
// opening them costs one request instead of two (length, then footer).
const DefaultTailSize = 64 << 10

// DefaultLocalTailSize caps the speculative tail read of files on local
// disk (storage.Capabilities.Local), where a second read costs a system
// call, not a round trip: a plan of thousands of local files should not
// allocate, zero and copy 64 KiB for each footer of a few KiB.
const DefaultLocalTailSize = 16 << 10

// Stats are the IO figures of one scan, a plain Go value. The server copies
// them into the scandv1.StreamStats of a DoGet stream's last message, whose
// wire format package wire owns; `scand scan --stats` prints their sums.
type Stats struct {
	// Reads is the number of requests sent to storage (GETs on S3, preads
	// locally).
	Reads int64
	// BytesFetched is what those requests transferred, once each fetch
	// landed. Every fetched byte is used, wasted or unused
	// (accounting.go): BytesFetched = BytesUsed + BytesWasted +
	// BytesUnused.
	BytesFetched int64
	// BytesUsed is the fetched bytes handed to the decoder, each once
	// however often it was read.
	BytesUsed int64
	// BytesPlanned is what the reader announced it would need (column
	// chunks, stripe streams) before reading.
	BytesPlanned int64
	// BytesWasted is gap bytes read only to merge requests, and never
	// handed to the decoder.
	BytesWasted int64
	// BytesUnused is bytes fetched ahead of the decoder that it never
	// asked for: the tail read beyond the footer (all of a small file is
	// read), planned requests not reached or dropped to free memory, and
	// the bytes of failed fetches.
	BytesUnused int64
	// CacheHits counts metadata served from the cache instead of storage.
	CacheHits int64
	// BytesFromCache is the part of BytesFetched that the page cache
	// (Options.PageCache) served instead of storage; Reads counts only
	// the requests sent to storage.
	BytesFromCache int64
	// Hole is the gap (bytes) below which planned ranges were merged.
	Hole int64
	// IOSeconds is the time spent waiting on storage.
	IOSeconds float64
	// IndexReads and IndexBytesFetched are the part of Reads and
	// BytesFetched that fetched index ranges (ReadIndex).
	IndexReads, IndexBytesFetched int64
}

// Add accumulates o into s.
func (s *Stats) Add(o Stats) {
	s.Reads += o.Reads
	s.BytesFetched += o.BytesFetched
	s.BytesUsed += o.BytesUsed
	s.BytesPlanned += o.BytesPlanned
	s.BytesWasted += o.BytesWasted
	s.BytesUnused += o.BytesUnused
	s.CacheHits += o.CacheHits
	s.BytesFromCache += o.BytesFromCache
	s.Hole = max(s.Hole, o.Hole)
	s.IOSeconds += o.IOSeconds
	s.IndexReads += o.IndexReads
	s.IndexBytesFetched += o.IndexBytesFetched
}

// Defaults of Options.
const (
	DefaultMaxRequest  = 16 << 20 // AWS's advice: 8-16 MB ranged GETs
	DefaultTolerance   = 0.5
	DefaultConcurrency = 16
	DefaultMemory      = 1 << 30
	DefaultWindow      = 64 << 20
)

// Options tune how files are read. Zero values mean the defaults.
type Options struct {
	// TailSize is the speculative footer read; LocalTailSize the one of
	// local files (0 = the smaller of TailSize and DefaultLocalTailSize).
	TailSize, LocalTailSize int64
	// Hole is the largest gap read through to merge two ranges; 0 learns
	// it per store from measured latency and bandwidth (TTFB x bandwidth).
	Hole int64
	// MaxRequest caps a merged request; larger single ranges are fetched
	// as parallel parts of this size.
	MaxRequest int64
	// Tolerance: when a request's gap bytes exceed Tolerance x its needed
	// bytes, the gaps are dropped right after the fetch.
	Tolerance float64
	// Concurrency bounds storage requests in flight across all scans.
	Concurrency int
	// Memory bounds prefetched, not yet consumed bytes across the server.
	// (Decoders' working memory is bounded apart, by the server's
	// admission; cmd/scand splits --io-memory between the two.)
	Memory int64
	// Window bounds one file's prefetched, unconsumed bytes.
	Window int64
	// NoCoalesce turns merging off: one request per announced range (for
	// benchmarks against the plain reader).
	NoCoalesce bool
	// MetaCacheBytes bounds the metadata cache.
	MetaCacheBytes int64
	// PageCache, when set, caches object stores' pages in memory and on
	// local disk (pagecache.go); PageCacheStore names the store in its
	// keys (the S3 endpoint), so that two stores' objects of one name
	// never share pages.
	PageCache      *rangecache.Cache
	PageCacheStore string
}

func (o *Options) setDefaults() {
	if o.TailSize <= 0 {
		o.TailSize = DefaultTailSize
	}
	if o.LocalTailSize <= 0 {
		o.LocalTailSize = min(o.TailSize, DefaultLocalTailSize)
	}
	if o.MaxRequest <= 0 {
		o.MaxRequest = DefaultMaxRequest
	}
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Memory <= 0 {
		o.Memory = DefaultMemory
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.MetaCacheBytes <= 0 {
		o.MetaCacheBytes = DefaultMetaCacheBytes
	}
}

// Scheduler opens files for format readers. It is safe for concurrent use.
type Scheduler struct {
	bucket storage.Bucket
	opts   Options
	budget *budget
	gets   *semaphore.Weighted
	cache  *metaCache

	modelsMu sync.Mutex
	models   map[string]*latencyModel        // by backend (URI scheme)
	caps     map[string]storage.Capabilities // by backend: what its last opened object declared

	onShort atomic.Pointer[func(n int64)] // OnShort
}

// OnShort sets f to be called, from the reading goroutine, with the bytes
// of each read that finds the prefetch memory it needs held by other
// scans (it then waits a little, and reads directly if none comes back). The server uses it to end
// streams that hold memory while their clients read nothing. f must not
// block.
func (s *Scheduler) OnShort(f func(n int64)) { s.onShort.Store(&f) }

// New returns a scheduler that reads from bucket.
func New(bucket storage.Bucket, opts Options) *Scheduler {
	opts.setDefaults()
	return &Scheduler{
		bucket: bucket,
		opts:   opts,
		budget: newBudget(opts.Memory),
		gets:   semaphore.NewWeighted(int64(opts.Concurrency)),
		cache:  newMetaCache(opts.MetaCacheBytes),
		models: map[string]*latencyModel{},
		caps:   map[string]storage.Capabilities{},
	}
}

// Options returns the scheduler's options with defaults filled in.
func (s *Scheduler) Options() Options { return s.opts }

// PrefetchBudget is Memory: the bound on prefetched bytes.
func (s *Scheduler) PrefetchBudget() int64 { return s.budget.total }

// MemoryInUse returns the prefetch memory held now: fetched, not yet
// consumed bytes, and warmed files' tails (warm.go).
func (s *Scheduler) MemoryInUse() int64 { return s.budget.inUse.Load() }

// PeakMemory returns the most prefetch memory held at once so far.
func (s *Scheduler) PeakMemory() int64 { return s.budget.peak.Load() }

// model returns the latency model of the backend serving name.
func (s *Scheduler) model(name string) *latencyModel {
	backend := backendOf(name)
	s.modelsMu.Lock()
	defer s.modelsMu.Unlock()
	m, ok := s.models[backend]
	if !ok {
		m = &latencyModel{}
		s.models[backend] = m
	}
	return m
}

// Hole returns the gap the scheduler currently merges across for whole
// column chunks of the backend serving name: the pinned Options.Hole, or
// the hole policy's for the store (holepolicy.go: LocalHole for local
// files, the learned TTFB x bandwidth for remote ones). It is also what
// the store transfers in one round trip's time
// (scanner.ReadOptions.RoundTripBytes).
func (s *Scheduler) Hole(name string) int64 {
	if s.opts.Hole > 0 {
		return s.opts.Hole
	}
	s.modelsMu.Lock()
	caps, ok := s.caps[backendOf(name)]
	s.modelsMu.Unlock()
	if !ok && backendOf(name) == "local" {
		caps.Local = true // no local file opened yet: the local backend's
	}
	return holePolicy{caps: caps, learned: s.model(name).hole(), parallel: s.opts.Concurrency}.hole()
}

// Open opens the object described by info (its Version, when set, must still
// match). ctx bounds every read made through the returned File: it is
// captured here because io.ReaderAt, which the Parquet reader needs, has no
// context. The caller must Close the File.
func (s *Scheduler) Open(ctx context.Context, info storage.Info) (*File, error) {
	obj, err := s.bucket.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	obj = s.versioned(ctx, info, obj)
	fctx, cancel := context.WithCancel(ctx)
	caps := obj.Capabilities()
	s.modelsMu.Lock()
	s.caps[backendOf(info.Name)] = caps
	s.modelsMu.Unlock()
	tail := s.opts.TailSize
	if caps.Local {
		tail = s.opts.LocalTailSize
	}
	return &File{ctx: fctx, cancel: cancel, sched: s, obj: obj, info: obj.Info(), tailSize: tail, mapped: caps.Mapped, local: caps.Local}, nil
}

// versioned is obj, or the object reopened at a version when obj was
// opened without one (S3 opened by its size alone knows it only once read)
// and the metadata cache holds an entry of an object of that name and
// size: reopened at that entry's version, without asking the store, so
// that a plan of files it has planned before finds their footers with no
// round trip. Only a table's data files are opened by size alone, and a
// table never rewrites a file under the same name; were one rewritten
// with the same size, the store refuses the version at the first read
// (If-Match), and the stream fails as for any file changed since planning
// (FAILED_PRECONDITION) instead of reading another version. Any failure
// to reopen leaves obj as it was.
func (s *Scheduler) versioned(ctx context.Context, info storage.Info, obj storage.Object) storage.Object {
	got := obj.Info()
	if info.Version != "" || got.Version != "" || info.Size <= 0 {
		return obj
	}
	version, ok := s.cache.versionOf(got.Name, info.Size)
	if !ok || version == "" {
		return obj
	}
	info.Version = version
	again, err := s.bucket.Open(ctx, info)
	if err != nil {
		return obj
	}
	obj.Close()
	return again
}

// File is one open object read through the scheduler. It implements
// io.ReaderAt and is safe for concurrent use.
//
// File owns the locking, the goroutines and the IO of a file's reads; what
// to fetch, and when, is its planner's (plan.go), which it runs under mu.
type File struct {
	ctx      context.Context // the Open caller's, cancelled by Close
	cancel   context.CancelFunc
	sched    *Scheduler
	obj      storage.Object
	info     storage.Info
	tailSize int64
	mapped   bool // storage.Capabilities.Mapped: reads copy from the mapping (mapped.go)
	local    bool // storage.Capabilities.Local: no round trip worth saving (WarmData)

	tail   tailRead
	io     ioCounters
	ledger ledger // fetched bytes outside the plan (accounting.go)

	mu       sync.Mutex     // guards what follows
	plan     planner        // planned requests; see prefetch.go, read.go
	closed   bool           // no readahead starts any more
	paused   bool           // no readahead starts until Unpause (Pause)
	wg       sync.WaitGroup // readahead fetches running
	storeErr error          // first storage failure, other than reading past the end
	warmed   int64          // budget Warm charged for the tail (warm.go)
}

// tailRead is the last bytes of a file, fetched on first use.
type tailRead struct {
	once sync.Once
	buf  []byte
	off  int64
	err  error
	// loaded is set once buf and off are, for readers that use the tail
	// only if it was read (ReadIndex).
	loaded atomic.Bool
}

// ioCounters are the figures a File counts outside its mutex, from any
// of its goroutines; the bytes are the planner's and the ledger's
// (accounting.go).
type ioCounters struct {
	reads     atomic.Int64
	ioNanos   atomic.Int64
	cacheHits atomic.Int64
	fromCache atomic.Int64 // page cache (pagecache.go)
	// The index reads among reads and fetched (ReadIndex).
	indexReads, indexFetched atomic.Int64
}

// Err returns the first error storage reported for this file, other than a
// read past its end. Decoders often hide the cause of a failed read behind
// their own message; the scanner asks here to tell "the file is corrupt"
// from "the store failed" (missing, changed, unreachable).
func (f *File) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.storeErr
}

// Info returns the object's name, size and version. A version Open was
// not given, and the store did not tell at Open (S3 opened by its size
// alone), is the one the object's first read pinned, once it has read.
func (f *File) Info() storage.Info {
	if f.info.Version != "" {
		return f.info
	}
	info := f.info
	info.Version = f.obj.Info().Version
	return info
}

// Size returns the object's length in bytes.
func (f *File) Size() int64 { return f.info.Size }

// HeldBytes is the prefetch memory the file's requests hold now, those
// lent to the decoder included.
func (f *File) HeldBytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for _, p := range f.plan.pend {
		n += p.charged
	}
	return n
}

// Stats returns the IO figures so far.
func (f *File) Stats() Stats {
	st := Stats{
		Reads:     f.io.reads.Load(),
		CacheHits: f.io.cacheHits.Load(),
		IOSeconds: time.Duration(f.io.ioNanos.Load()).Seconds(),

		BytesFromCache: f.io.fromCache.Load(),

		IndexReads:        f.io.indexReads.Load(),
		IndexBytesFetched: f.io.indexFetched.Load(),
	}
	f.mu.Lock()
	f.plan.addStats(&st)
	f.mu.Unlock()
	f.ledger.add(&st)
	return st
}

// Recheck reports, as an error wrapping storage.ErrChanged, whether the
// object changed since it was opened (storage.Object.Recheck); the server
// asks before it ends a stream with OK.
func (f *File) Recheck() error {
	if err := f.obj.Recheck(f.ctx); err != nil {
		f.setErr(err)
		return err
	}
	return nil
}

// StopReadahead ends the reading of a file whose scan has read all it
// will: readahead in flight is cancelled and waited for, so that Stats then
// counts every byte that arrived (what no read took as unused), and the
// prefetched buffers are freed (lent ones when their borrows end). Reads,
// Recheck included, fail afterwards with the cancelled context. Close is
// still needed; it does this too.
func (f *File) StopReadahead() { f.closePrefetch() }

// Close stops the file's readahead, frees its buffers and budget, and
// releases the storage handle.
func (f *File) Close() error {
	f.closePrefetch()
	f.releaseWarm()
	return f.obj.Close()
}

func (f *File) fetch(p []byte, off int64) error {
	return f.fetchCtx(f.ctx, p, off)
}

// noteErr records a storage failure for Err; reads past the end are the
// decoder's business, not a store failure.
func (f *File) noteErr(err error) {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		f.setErr(err)
	}
}

// setErr records err for Err unless an earlier one was. Callers do not
// hold f.mu.
func (f *File) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.storeErr == nil {
		f.storeErr = err
	}
}

func (f *File) loadTail() {
	n := min(f.tailSize, f.info.Size)
	f.tail.off = f.info.Size - n
	buf := make([]byte, n)
	if err := f.fetch(buf, f.tail.off); err != nil {
		f.tail.err = err
		return
	}
	f.tail.buf = buf
	f.ledger.tailLoaded(n)
	f.tail.loaded.Store(true)
}

// ReadAt implements io.ReaderAt. Reads that fall inside the file's last
// TailSize bytes are served from one speculative tail read.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %q at negative offset %d", f.info.Name, off)
	}
	// Reads served from the tail never reach storage, so check the
	// captured ctx here: a cancelled scan must stop on its next read.
	if err := f.ctx.Err(); err != nil {
		f.setErr(err)
		return 0, err
	}
	if off >= f.info.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := p
	short := false
	if end := off + int64(len(p)); end > f.info.Size {
		want = p[:f.info.Size-off]
		short = true
	}
	if f.mapped {
		return f.readMapped(want, off, short)
	}
	// Planned (prefetched) ranges first: a column chunk near the end of
	// the file must not trigger a tail read once the footer came from the
	// metadata cache.
	ok, err := f.readPlanned(off, int64(len(want)), func(_ *pending, b []byte) { copy(want, b) })
	switch {
	case err != nil:
		f.noteErr(err)
		return 0, err
	case ok:
	case off >= f.info.Size-min(f.tailSize, f.info.Size):
		f.tail.once.Do(f.loadTail)
		if f.tail.err != nil {
			return 0, f.tail.err
		}
		copy(want, f.tail.buf[off-f.tail.off:])
		f.ledger.tailRead(off, int64(len(want)))
	default:
		if err := f.fetch(want, off); err != nil {
			return 0, err
		}
		f.ledger.direct(int64(len(want)))
	}
	if short {
		return len(want), io.EOF
	}
	return len(want), nil
}
