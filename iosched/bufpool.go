package iosched

import (
	"sync"

	"github.com/scand/scand/internal/sizeclass"
)

// Fetch buffers are pooled: a scan fetches request after request of
// similar sizes, and a fresh buffer for each costs zeroing and page faults
// for memory the fetch overwrites at once. Pooled buffers are not zeroed,
// which is safe because a buffer is exposed (as a segment) only after a
// fetch succeeded, and a successful fetch writes every byte it exposes: a
// storage ReadAt or ReadSpans returns nil only when all of its buffers were
// filled, parts cover a request without holes, and needed segments are cut
// back to back from one buffer. A failed fetch's buffer is never exposed.
//
// The pool is not counted in the memory budget: idle buffers in it are
// freed by the garbage collector (sync.Pool), while the budget counts what
// scans hold.
//
// Size classes (internal/sizeclass): eight per power of two, so a buffer
// wastes at most 1/8 of its request, from minPooled to maxPooled.
const (
	// minPooled: smaller buffers are cheap to make, and not worth a pool.
	minPooled = 64 << 10
	// maxPooled: larger buffers are rare (a single range over
	// Options.MaxRequest) and would sit in the pool, outside the budget,
	// until the next garbage collections; they are made and dropped.
	maxPooled = 64 << 20
)

var (
	bufClasses = sizeclass.New(minPooled, maxPooled, 8)
	bufPools   = make([]sync.Pool, bufClasses.Len()) // by class index
)

// getBuf returns an n-byte buffer whose contents are undefined.
func getBuf(n int64) []byte {
	size, i, ok := bufClasses.Class(int(min(n, maxPooled+1)))
	if !ok {
		return make([]byte, n)
	}
	if b, ok := bufPools[i].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, size)
}

// putBuf gives a buffer from getBuf back for reuse. The caller must not
// use it, or any slice of it, afterwards; nobody else may either.
func putBuf(b []byte) {
	i, ok := bufClasses.Exact(cap(b))
	if !ok {
		return // not one of ours
	}
	b = b[:cap(b)]
	bufPools[i].Put(&b)
}
