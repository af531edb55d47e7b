// Package sizeclass owns the size-class maths of scand's buffer pools: how
// a requested length is rounded up to the capacity of a pooled buffer, and
// which pool (class index) holds buffers of that capacity.
//
// A pool keeps one sync.Pool per class, so a buffer given back is handed
// out again only for a request that fits it, and how finely classes are cut
// trades memory for reuse: with one class per power of two a buffer wastes
// up to half of itself, but requests of similar sizes (pages, column
// chunks) share a class and so find each other's buffers; with eight per
// power of two a buffer wastes at most an eighth, and fewer requests share
// a class. The fetch buffers of iosched, as large as a merged request and
// held until it is consumed, take eighths; the Parquet decoder's page
// buffers, short-lived and grown page by page, take powers of two. Both
// pools used to do this sum each in their own way; one Classes type keeps
// the rounding, the class indexes and the "is this one of ours" check
// (Exact) the same for both.
//
// The package holds no pools and no memory: it is arithmetic, free of
// locks, and safe for concurrent use.
package sizeclass
