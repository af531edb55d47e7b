package iosched

import (
	"math/bits"
	"sync"
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
const (
	// minPooled: smaller buffers are cheap to make, and not worth a pool.
	minPooledShift = 16
	minPooled      = 1 << minPooledShift // 64 KiB
	// maxPooled: larger buffers are rare (a single range over
	// Options.MaxRequest) and would sit in the pool, outside the budget,
	// until the next garbage collections; they are made and dropped.
	maxPooledShift = 26
	maxPooled      = 1 << maxPooledShift // 64 MiB
)

// bufPools holds one pool per size class from minPooled to maxPooled:
// eight per power of two, and maxPooled itself.
var bufPools [(maxPooledShift-minPooledShift)*8 + 1]sync.Pool

// bufClass rounds n (minPooled <= n <= maxPooled) up to its size class: a
// multiple of an eighth of the largest power of two not above n, so a
// buffer wastes at most 1/8 of n.
func bufClass(n int64) (size int64, index int) {
	e := bits.Len64(uint64(n)) - 1 // 2^e <= n < 2^(e+1)
	step := int64(1) << (e - 3)
	k := (n + step - 1) / step // 8..16; 16 is the next power's first class
	return k * step, (e-minPooledShift)*8 + int(k-8)
}

// getBuf returns an n-byte buffer whose contents are undefined.
func getBuf(n int64) []byte {
	if n < minPooled || n > maxPooled {
		return make([]byte, n)
	}
	size, i := bufClass(n)
	if b, ok := bufPools[i].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, size)
}

// putBuf gives a buffer from getBuf back for reuse. The caller must not
// use it, or any slice of it, afterwards; nobody else may either.
func putBuf(b []byte) {
	c := int64(cap(b))
	if c < minPooled || c > maxPooled {
		return
	}
	size, i := bufClass(c)
	if size != c {
		return // not one of ours
	}
	b = b[:c]
	bufPools[i].Put(&b)
}
