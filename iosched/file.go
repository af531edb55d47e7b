package iosched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/scand/scand/storage"
)

// DefaultTailSize is how much of a file's end the first footer read fetches
// speculatively. 64 KiB holds the footer of most Parquet and ORC files, so
// opening them costs one request instead of two (length, then footer).
const DefaultTailSize = 64 << 10

// Stats are the IO figures of one scan. Fields are JSON-encoded into the
// final message of every DoGet stream and printed by `scand scan --stats`.
type Stats struct {
	// Reads is the number of requests sent to storage (GETs on S3, preads
	// locally).
	Reads int64 `json:"reads"`
	// BytesFetched is what those requests transferred.
	BytesFetched int64 `json:"bytes_fetched"`
	// BytesUsed is what the decoder asked for; the difference to
	// BytesFetched is read-ahead that was not needed.
	BytesUsed int64 `json:"bytes_used"`
	// BytesPlanned is what the reader announced it would need (column
	// chunks, stripe streams) before reading.
	BytesPlanned int64 `json:"bytes_planned"`
	// BytesWasted is gap bytes read only to merge requests.
	BytesWasted int64 `json:"bytes_wasted"`
	// CacheHits counts metadata served from the cache instead of storage.
	CacheHits int64 `json:"cache_hits"`
	// Hole is the gap (bytes) below which planned ranges were merged.
	Hole int64 `json:"hole"`
	// IOSeconds is the time spent waiting on storage.
	IOSeconds float64 `json:"io_seconds"`
}

// Add accumulates o into s.
func (s *Stats) Add(o Stats) {
	s.Reads += o.Reads
	s.BytesFetched += o.BytesFetched
	s.BytesUsed += o.BytesUsed
	s.BytesPlanned += o.BytesPlanned
	s.BytesWasted += o.BytesWasted
	s.CacheHits += o.CacheHits
	s.Hole = max(s.Hole, o.Hole)
	s.IOSeconds += o.IOSeconds
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
	// TailSize is the speculative footer read.
	TailSize int64
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
	// Memory bounds what scans hold across the server: prefetched, not yet
	// consumed bytes, plus the working memory of the streams admitted to
	// decode (DecodeMemory of it; see Admission).
	Memory int64
	// DecodeMemory is the part of Memory set aside for decoding streams;
	// 0 means half of Memory; negative means no admission control (every
	// stream decodes at once, and Memory bounds prefetched bytes alone).
	DecodeMemory int64
	// StuckAfter: see Admission (0: DefaultStuckAfter).
	StuckAfter time.Duration
	// Window bounds one file's prefetched, unconsumed bytes.
	Window int64
	// NoCoalesce turns merging off: one request per announced range (for
	// benchmarks against the plain reader).
	NoCoalesce bool
	// MetaCacheBytes bounds the metadata cache.
	MetaCacheBytes int64
}

func (o *Options) setDefaults() {
	if o.TailSize <= 0 {
		o.TailSize = DefaultTailSize
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
	if o.DecodeMemory == 0 {
		o.DecodeMemory = o.Memory / 2
	}
	o.DecodeMemory = min(o.DecodeMemory, o.Memory-o.Memory/8) // leave prefetch room
	if o.MetaCacheBytes <= 0 {
		o.MetaCacheBytes = DefaultMetaCacheBytes
	}
}

// Scheduler opens files for format readers. It is safe for concurrent use.
type Scheduler struct {
	bucket storage.Bucket
	opts   Options
	budget *budget
	admit  *Admission
	gets   *semaphore.Weighted
	cache  *metaCache

	modelsMu sync.Mutex
	models   map[string]*latencyModel // by backend (URI scheme)
}

// New returns a scheduler that reads from bucket.
func New(bucket storage.Bucket, opts Options) *Scheduler {
	opts.setDefaults()
	return &Scheduler{
		bucket: bucket,
		opts:   opts,
		budget: newBudget(opts.Memory - max(opts.DecodeMemory, 0)),
		admit:  NewAdmission(opts.DecodeMemory, opts.StuckAfter),
		gets:   semaphore.NewWeighted(int64(opts.Concurrency)),
		cache:  newMetaCache(opts.MetaCacheBytes),
		models: map[string]*latencyModel{},
	}
}

// Options returns the scheduler's options with defaults filled in.
func (s *Scheduler) Options() Options { return s.opts }

// Admit waits until the decode share of the memory budget has room for a
// stream that estimates it needs n bytes while decoding (see Admission).
func (s *Scheduler) Admit(ctx context.Context, n int64) (*Ticket, error) {
	return s.admit.Admit(ctx, n)
}

// Admission returns the figures of the decode share.
func (s *Scheduler) Admission() AdmissionStats { return s.admit.Stats() }

// PrefetchBudget is the part of Memory that bounds prefetched bytes.
func (s *Scheduler) PrefetchBudget() int64 { return s.budget.total }

// PeakMemory returns the most prefetch memory held at once so far.
func (s *Scheduler) PeakMemory() int64 { return s.budget.peak.Load() }

// model returns the latency model of the backend serving name.
func (s *Scheduler) model(name string) *latencyModel {
	backend := ""
	if i := strings.Index(name, "://"); i >= 0 {
		backend = name[:i]
	}
	s.modelsMu.Lock()
	defer s.modelsMu.Unlock()
	m, ok := s.models[backend]
	if !ok {
		m = &latencyModel{}
		s.models[backend] = m
	}
	return m
}

// Hole returns the gap the scheduler currently merges across for the
// backend serving name: the pinned Options.Hole or the learned one.
func (s *Scheduler) Hole(name string) int64 {
	if s.opts.Hole > 0 {
		return s.opts.Hole
	}
	return s.model(name).hole()
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
	fctx, cancel := context.WithCancel(ctx)
	return &File{ctx: fctx, cancel: cancel, sched: s, obj: obj, info: obj.Info(), tailSize: s.opts.TailSize, mapped: obj.Capabilities().Mapped}, nil
}

// File is one open object read through the scheduler. It implements
// io.ReaderAt and is safe for concurrent use.
type File struct {
	ctx      context.Context
	cancel   context.CancelFunc
	sched    *Scheduler
	obj      storage.Object
	info     storage.Info
	tailSize int64
	mapped   bool // storage.Capabilities.Mapped: reads copy from the mapping (mapped.go)

	tailOnce sync.Once
	tail     []byte // the last bytes of the file, fetched on first use
	tailOff  int64
	tailErr  error

	reads, fetched, used atomic.Int64
	ioNanos              atomic.Int64
	planned, wasted      atomic.Int64
	budgetMisses         atomic.Int64 // reads done directly for want of memory
	cacheHits            atomic.Int64

	// Prefetch state; see prefetch.go.
	mu    sync.Mutex
	pend  []*pending // planned requests, by offset
	ahead int64      // prefetched bytes not yet consumed
	// readahead fetches running; at most Options.Concurrency, so that
	// requests reach storage in file order (see readaheadLocked)
	inflight int
	hole     int64
	closed   bool
	wg       sync.WaitGroup

	errMu    sync.Mutex
	storeErr error // first storage failure, other than reading past the end
}

// Err returns the first error storage reported for this file, other than a
// read past its end. Decoders often hide the cause of a failed read behind
// their own message; the scanner asks here to tell "the file is corrupt"
// from "the store failed" (missing, changed, unreachable).
func (f *File) Err() error {
	f.errMu.Lock()
	defer f.errMu.Unlock()
	return f.storeErr
}

// Info returns the object's name, size and version.
func (f *File) Info() storage.Info { return f.info }

// Size returns the object's length in bytes.
func (f *File) Size() int64 { return f.info.Size }

// Stats returns the IO figures so far.
func (f *File) Stats() Stats {
	return Stats{
		Reads:        f.reads.Load(),
		BytesFetched: f.fetched.Load(),
		BytesUsed:    f.used.Load(),
		BytesPlanned: f.planned.Load(),
		BytesWasted:  f.wasted.Load(),
		CacheHits:    f.cacheHits.Load(),
		Hole:         f.holeUsed(),
		IOSeconds:    time.Duration(f.ioNanos.Load()).Seconds(),
	}
}

// Close stops the file's readahead, frees its buffers and budget, and
// releases the storage handle.
func (f *File) Close() error {
	if f.cancel != nil {
		f.closePrefetch()
	}
	return f.obj.Close()
}

func (f *File) holeUsed() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hole
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

func (f *File) setErr(err error) {
	f.errMu.Lock()
	if f.storeErr == nil {
		f.storeErr = err
	}
	f.errMu.Unlock()
}

func (f *File) loadTail() {
	n := min(f.tailSize, f.info.Size)
	f.tailOff = f.info.Size - n
	buf := make([]byte, n)
	if err := f.fetch(buf, f.tailOff); err != nil {
		f.tailErr = err
		return
	}
	f.tail = buf
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
	f.used.Add(int64(len(want)))
	if f.mapped {
		return f.readMapped(want, off, short)
	}
	// Planned (prefetched) ranges first: a column chunk near the end of
	// the file must not trigger a tail read once the footer came from the
	// metadata cache.
	ok, err := f.readPlanned(want, off)
	switch {
	case err != nil:
		f.noteErr(err)
		return 0, err
	case ok:
	case off >= f.info.Size-min(f.tailSize, f.info.Size):
		f.tailOnce.Do(f.loadTail)
		if f.tailErr != nil {
			return 0, f.tailErr
		}
		copy(want, f.tail[off-f.tailOff:])
	default:
		if err := f.fetch(want, off); err != nil {
			return 0, err
		}
	}
	if short {
		return len(want), io.EOF
	}
	return len(want), nil
}
