package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// ErrChanged reports that an object is no longer the version a scan was
// planned against.
var ErrChanged = errors.New("object changed since the scan was planned")

// ErrUnsupported reports a name whose scheme no configured backend serves.
var ErrUnsupported = errors.New("storage backend not configured")

// Info describes one object.
type Info struct {
	// Name is the object's name as the bucket resolves it: a root-relative
	// slash path for local files, a full URI for object stores.
	Name string
	Size int64
	// Version identifies the object's content: an ETag, or the modification
	// time for local files. Empty when the backend cannot tell.
	Version string
	ModTime time.Time
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
	// ErrChanged. The caller must Close the handle.
	Open(ctx context.Context, info Info) (Object, error)
	// List calls fn, in lexical order of names, for every object whose name
	// starts with prefix ("" lists everything). Directories themselves are
	// not objects. List stops at fn's first error and returns it.
	List(ctx context.Context, prefix string, fn func(Info) error) error
}

// Object is an open object. ReadAt may be called concurrently.
type Object interface {
	// ReadAt fills p with the bytes at off. It returns nil only when all of
	// p was read; a range past the end fails with io.ErrUnexpectedEOF (or
	// io.EOF when off is at or past the end). It does not keep p.
	ReadAt(ctx context.Context, p []byte, off int64) error
	// Info returns what Open was given, completed with the object's size
	// and version.
	Info() Info
	Close() error
}

// Mapped is an optional interface of an Object whose bytes are mapped into
// memory (local.WithMmap): its ReadAt is a memory copy, not a request, so
// readers gain nothing by coalescing or prefetching its ranges into
// buffers of their own. Wrappers (WithMetrics) keep it visible.
type Mapped interface {
	Object
	// Mapped reports whether reads are served from memory.
	Mapped() bool
}

// IsMapped reports whether obj serves reads from a memory mapping.
func IsMapped(obj Object) bool {
	m, ok := obj.(Mapped)
	return ok && m.Mapped()
}

// Span is part of a ranged read that the caller keeps: len(Buf) bytes at
// Off.
type Span struct {
	Off int64
	Buf []byte
}

// SpanReader is an optional interface of an Object that can read a range
// in one request and keep only parts of it. ReadSpans reads from the
// first span's offset to the last span's end, fills every span, and drops
// the bytes between spans as they arrive, so a reader that merges nearby
// ranges to save requests (iosched) never buffers the gaps. Spans are in
// order and do not overlap. A wrapper whose inner Object has no ReadSpans
// returns an error wrapping errors.ErrUnsupported.
type SpanReader interface {
	ReadSpans(ctx context.Context, spans []Span) error
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
