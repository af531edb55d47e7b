package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// ErrChanged reports that an object is no longer the version a scan was
// planned against, or changed while it was read.
var ErrChanged = errors.New("object changed since the scan was planned")

// ErrUnsupported reports a name whose scheme no configured backend serves.
var ErrUnsupported = errors.New("storage backend not configured")

// NoBackendError is a name whose URI scheme no configured backend serves;
// it wraps ErrUnsupported. Scheme is "" for a plain path on a server
// without a local root.
type NoBackendError struct {
	Name, Scheme string
}

func (e *NoBackendError) Error() string {
	if e.Scheme == "" {
		return fmt.Sprintf("%q: no local root configured: %v", e.Name, ErrUnsupported)
	}
	return fmt.Sprintf("%q: this server has no %s:// backend: %v", e.Name, e.Scheme, ErrUnsupported)
}

func (e *NoBackendError) Unwrap() error { return ErrUnsupported }

// ErrUnavailable reports a store that could not be reached: connections
// refused, reset or timed out after the backend's retries. The request may
// succeed later; clients and engines should retry.
var ErrUnavailable = errors.New("storage unavailable")

// Info describes one object.
type Info struct {
	// Name is the object's name as the bucket resolves it: a root-relative
	// slash path for local files, a full URI for object stores.
	Name string
	Size int64
	// Version identifies the object's content: an ETag, or for local
	// files what the file system tells cheaply (size, modification and
	// change times, inode). Empty when the backend cannot tell.
	Version string
	ModTime time.Time
	// Target is the name of what a read of Name actually reads, when the
	// two differ: for a local symlink, where it leads, as a root-relative
	// slash path without links. Empty when Name is read as itself (a
	// regular file, an S3 object). Whoever decides who may read a name
	// must check Target too (see FileName): a link can lead anywhere.
	Target string
}

// FileName is the name of what a read of the object reads: Target when
// it is set, else Name.
func (i Info) FileName() string {
	if i.Target != "" {
		return i.Target
	}
	return i.Name
}

// Bucket is read access to a tree of objects. Implementations are safe for
// concurrent use.
type Bucket interface {
	// Stat returns the object's size and version.
	Stat(ctx context.Context, name string) (Info, error)
	// Open returns a handle for ranged reads of the object. When
	// info.Version is not empty and the object's version differs, Open, or
	// the handle's first ReadAt when Open trusts a known size and version
	// without asking the store (S3), fails with an error wrapping
	// ErrChanged. Given the size alone, a store may also open without
	// asking (S3): the handle's Info then has no version until its first
	// read pins one, and a read fails with ErrChanged if the object's size
	// is not the one given. The caller must Close the handle.
	Open(ctx context.Context, info Info) (Object, error)
	// List calls fn, in lexical order of names, for every object whose name
	// starts with prefix ("" lists everything). Directories themselves are
	// not objects. List stops at fn's first error and returns it.
	List(ctx context.Context, prefix string, fn func(Info) error) error
	// ListPruned is List restricted by p: fn sees only the objects p
	// wants, and the bucket never looks at (stats) an object whose name p
	// refuses, nor lists a directory p refuses where it lists directory
	// by directory. List(ctx, prefix, fn) is ListPruned with a zero
	// Pruning.
	ListPruned(ctx context.Context, prefix string, p Pruning, fn func(Info) error) error
	// Canonical returns the spelling of name that List reports, so that
	// patterns match listed names: a local root accepts "./a", "a//b" and
	// absolute paths inside the root, an object store has one spelling
	// and returns name. A name outside the bucket fails as Stat would
	// fail for it (fs.ErrPermission).
	Canonical(name string) (string, error)
}

// Pruning tells a listing, from names alone, which parts of the tree it
// may skip. A nil func wants everything.
type Pruning struct {
	// Dir reports whether objects below dir (a name ending in "/", below
	// the directory that holds the listed prefix) may be wanted. Objects
	// below a refused directory are never reported.
	Dir func(dir string) bool
	// Object reports whether the object name is wanted.
	Object func(name string) bool
}

// Wants reports whether p wants the object name listed under prefix: p
// wants it, and every directory between prefix's directory and name. It is
// for buckets that list flat and apply p to each name.
func (p Pruning) Wants(prefix, name string) bool {
	for i := strings.LastIndexByte(prefix, '/') + 1; p.Dir != nil; i++ {
		j := strings.IndexByte(name[i:], '/')
		if j < 0 {
			break
		}
		i += j
		if !p.Dir(name[:i+1]) {
			return false
		}
	}
	return p.Object == nil || p.Object(name)
}

// Object is an open object. ReadAt, ReadSpans and Recheck may be called
// concurrently.
type Object interface {
	// ReadAt fills p with the bytes at off. It returns nil only when all of
	// p was read; a range past the end fails with io.ErrUnexpectedEOF (or
	// io.EOF when off is at or past the end). It does not keep p.
	ReadAt(ctx context.Context, p []byte, off int64) error
	// ReadSpans fills every span (in order, not overlapping) or fails, as
	// ReadAt would for each. With Capabilities().SpanReads it is one
	// request from the first span's offset to the last span's end that
	// drops the bytes between spans as they arrive, so a reader that
	// merges nearby ranges to save requests (iosched) never buffers the
	// gaps; without, it reads span by span (ReadSpansAt).
	ReadSpans(ctx context.Context, spans []Span) error
	// Capabilities says what the object can do beyond ReadAt. It is
	// fixed when the object is opened.
	Capabilities() Capabilities
	// Recheck reports whether the object is still the version Open saw:
	// nil, or an error wrapping ErrChanged that names the object. Call it
	// after the last read of a scan (and after a prefetch) to catch a
	// file rewritten in place while it was read. Stores that check the
	// version on every request (S3's If-Match) return nil.
	Recheck(ctx context.Context) error
	// Info returns what Open was given, completed with the object's size
	// and version (the version, for an object opened by its size alone,
	// once a read has pinned it).
	Info() Info
	Close() error
}

// Capabilities is what an Object declares it can do. Wrappers report
// their inner object's capabilities exactly (storagetest checks it).
type Capabilities struct {
	// Mapped: the bytes are mapped into memory (local.WithMmap), so ReadAt
	// is a memory copy, not a request, and readers gain nothing by
	// coalescing or prefetching its ranges into buffers of their own.
	Mapped bool
	// SpanReads: ReadSpans is one request that drops the gaps between
	// spans as they arrive (S3's ranged GET).
	SpanReads bool
	// Local: reads are served by this machine's kernel (pread, or a
	// mapping), with no network round trip to save: a reader gains
	// nothing by reading through the gaps between the ranges it needs.
	Local bool
}

// ReadSpansAt is ReadSpans for objects without span reads: it reads each
// span with ReadAt.
func ReadSpansAt(ctx context.Context, o Object, spans []Span) error {
	if _, err := SpanRange(spans); err != nil {
		return fmt.Errorf("read %q: %w", o.Info().Name, err)
	}
	for _, s := range spans {
		if err := o.ReadAt(ctx, s.Buf, s.Off); err != nil {
			return err
		}
	}
	return nil
}

// Span is part of a ranged read that the caller keeps: len(Buf) bytes at
// Off.
type Span struct {
	Off int64
	Buf []byte
}

// SpanBounds is the range [Off, End) that a list of spans covers.
type SpanBounds struct{ Off, End int64 }

// SpanRange checks that spans are in order, without overlap and at
// non-negative offsets, and returns the range they cover.
func SpanRange(spans []Span) (SpanBounds, error) {
	if len(spans) == 0 {
		return SpanBounds{}, nil
	}
	r := SpanBounds{Off: spans[0].Off, End: spans[0].Off}
	for _, s := range spans {
		if s.Off < r.End || s.Off < 0 {
			return SpanBounds{}, fmt.Errorf("spans out of order or overlapping at offset %d: %w", s.Off, fs.ErrInvalid)
		}
		r.End = s.Off + int64(len(s.Buf))
	}
	return r, nil
}

// Range is a byte range [Off, Off+Len) of an object: what a reader needs
// (scanner), and what the IO scheduler plans requests from.
type Range struct {
	Off, Len int64
}

// End is the offset just past the range.
func (r Range) End() int64 { return r.Off + r.Len }
