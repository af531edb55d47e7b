package iosched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

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
	// IOSeconds is the time spent waiting on storage.
	IOSeconds float64 `json:"io_seconds"`
}

// Add accumulates o into s.
func (s *Stats) Add(o Stats) {
	s.Reads += o.Reads
	s.BytesFetched += o.BytesFetched
	s.BytesUsed += o.BytesUsed
	s.IOSeconds += o.IOSeconds
}

// Options tune how files are read.
type Options struct {
	// TailSize is the speculative footer read; 0 means DefaultTailSize.
	TailSize int64
}

// Scheduler opens files for format readers. It is safe for concurrent use.
type Scheduler struct {
	bucket storage.Bucket
	opts   Options
}

// New returns a scheduler that reads from bucket.
func New(bucket storage.Bucket, opts Options) *Scheduler {
	if opts.TailSize <= 0 {
		opts.TailSize = DefaultTailSize
	}
	return &Scheduler{bucket: bucket, opts: opts}
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
	return &File{ctx: ctx, obj: obj, info: obj.Info(), tailSize: s.opts.TailSize}, nil
}

// File is one open object read through the scheduler. It implements
// io.ReaderAt and is safe for concurrent use.
type File struct {
	ctx      context.Context
	obj      storage.Object
	info     storage.Info
	tailSize int64

	tailOnce sync.Once
	tail     []byte // the last bytes of the file, fetched on first use
	tailOff  int64
	tailErr  error

	reads, fetched, used atomic.Int64
	ioNanos              atomic.Int64

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
		IOSeconds:    time.Duration(f.ioNanos.Load()).Seconds(),
	}
}

// Close releases the storage handle.
func (f *File) Close() error { return f.obj.Close() }

func (f *File) fetch(p []byte, off int64) error {
	start := time.Now()
	err := f.obj.ReadAt(f.ctx, p, off)
	f.ioNanos.Add(int64(time.Since(start)))
	f.reads.Add(1)
	if err == nil {
		f.fetched.Add(int64(len(p)))
	} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		f.errMu.Lock()
		if f.storeErr == nil {
			f.storeErr = err
		}
		f.errMu.Unlock()
	}
	return err
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
	if off >= f.info.Size-min(f.tailSize, f.info.Size) {
		f.tailOnce.Do(f.loadTail)
		if f.tailErr != nil {
			return 0, f.tailErr
		}
		copy(want, f.tail[off-f.tailOff:])
	} else if err := f.fetch(want, off); err != nil {
		return 0, err
	}
	if short {
		return len(want), io.EOF
	}
	return len(want), nil
}
