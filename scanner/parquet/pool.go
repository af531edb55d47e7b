package parquet

import (
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/internal/sizeclass"
)

// Buffers handed out by poolAllocator: sizes below poolMinBytes come from
// Go's allocator as they would without the pool; sizes up to poolMaxBytes
// are rounded up to a power of two (poolClasses, one class per power of
// two: see internal/sizeclass for why page buffers take coarse classes)
// and kept for reuse when freed.
const (
	poolMinBytes = 4 << 10
	poolMaxBytes = 64 << 20
	poolAlign    = 64 // Arrow's buffer alignment
)

var poolClasses = sizeclass.New(poolMinBytes, poolMaxBytes, 1)

// The process's two pools: pageBuffers allocates every Parquet reader's
// page buffers and decoder scratch (ReaderProperties), and does not clear
// reused buffers (see poolAllocator.zero); arrayBuffers the decoded Arrow
// arrays when the caller's allocator is Go's (Open), cleared.
var (
	pageBuffers  = newPoolAllocator(false /* zero */)
	arrayBuffers = newPoolAllocator(true /* zero */)
)

// pageAllocator is ReaderProperties' allocator; tests replace it.
var pageAllocator memory.Allocator = pageBuffers

// poolAllocator is a memory.Allocator that keeps freed buffers in one
// sync.Pool per size class (poolClasses) and hands them out again.
//
// The Parquet reader uses two (see Open):
//
//   - pageBuffers, ReaderProperties' allocator. arrow-go makes a new page
//     reader for every column chunk, and each one allocates its page
//     buffers (decompressBuffer, dataPageBuffer, dictPageBuffer, about a
//     page each) and frees them when the reader moves to the next chunk.
//     With Go's allocator every chunk paid for fresh memory: zeroing it,
//     faulting its pages in, and collecting it.
//   - arrayBuffers, for the decoded Arrow arrays when the caller passes
//     Go's allocator (memory.DefaultAllocator, as the server does): a
//     batch's value and validity buffers come back here when the caller
//     releases the batch (for the server: once the batch is on the
//     socket), and the next batches reuse them.
//
// Every arrow-go allocator returns zeroed memory (the C one uses calloc),
// and arrow-go's users may rely on it: validity bitmaps are built bit by
// bit, and the values under null slots are never written (uncleared, they
// would show another scan's data to this scan's client). With zero set,
// as for arrayBuffers, a reused buffer is cleared before it is handed out,
// and Reallocate clears what it adds past the copied contents.
//
// pageBuffers does not clear: clearing the page buffers cost as much CPU
// as the pool saved, because every column chunk's page reader grows fresh
// buffers to a page. It is sound because every allocation arrow-go v18.8.0
// makes through ReaderProperties' allocator on the read path is written
// before it is read: the page buffers (filled by io.ReadFull and the
// codec, whose output length is checked against the page header), the
// dictionary of a BYTE_ARRAY column read as an Arrow dictionary (copied
// value by value), the delta decoder's miniblock widths (read byte by
// byte), and decryption output. The level buffers of PageStreamingEnabled,
// which is off, would be too. TestPageBuffersNeedNoZeroing decodes the
// test corpora with an allocator that fills every buffer with garbage and
// checks the result, so an arrow-go upgrade that starts to rely on zeroed
// memory there fails it.
//
// Buffers that are never freed (arrow-go does not free on every error
// path) are collected by the garbage collector like any Go memory, and the
// pool itself empties as the collector runs (sync.Pool), so it holds no
// memory a quiet server would keep.
//
// The pool trusts Free: a buffer freed while something still reads it
// would be handed to another scan, where Go's allocator would have kept it
// alive. arrow-go frees page buffers only when their page reader is
// closed, after the chunk is decoded into Arrow arrays (which never alias
// page memory), and Arrow arrays only when their last reference is
// released. It is safe for concurrent use.
type poolAllocator struct {
	classes []sync.Pool // by poolClasses' index; entries are unsafe.Pointer to the first byte
	zero    bool        // clear reused buffers and grown parts
}

func newPoolAllocator(zero bool) *poolAllocator {
	return &poolAllocator{classes: make([]sync.Pool, poolClasses.Len()), zero: zero}
}

var _ memory.Allocator = (*poolAllocator)(nil)

// Allocate returns a buffer of size bytes, 64-byte aligned, zeroed unless
// it is a reused buffer of a pool without zero.
func (a *poolAllocator) Allocate(size int) []byte {
	b, reused := a.get(size)
	if reused && a.zero {
		clear(b)
	}
	return b
}

// get returns a buffer of size bytes, and whether it was used before (and
// may hold old bytes).
func (a *poolAllocator) get(size int) (b []byte, reused bool) {
	capacity, c, ok := poolClasses.Class(size)
	if !ok {
		return goAlloc(size), false
	}
	if p, ok := a.classes[c].Get().(unsafe.Pointer); ok {
		return unsafe.Slice((*byte)(p), capacity)[:size], true
	}
	// Go's allocator places power-of-two objects of 4 KiB and more at
	// addresses aligned to at least their size's page or size class, so
	// make alone is 64-byte aligned; check anyway, and fall back to an
	// unpooled aligned buffer if a runtime ever does otherwise.
	b = make([]byte, capacity)
	if uintptr(unsafe.Pointer(&b[0]))%poolAlign != 0 {
		return goAlloc(size), false
	}
	return b[:size], false
}

// Reallocate grows or shrinks b to size bytes, keeping its contents. The
// bytes past len(b) are zero when the pool clears (zero), or when they
// are fresh memory.
func (a *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if size > len(b) && a.zero {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb, reused := a.get(size)
	n := copy(nb, b)
	if reused && a.zero {
		clear(nb[n:])
	}
	// The old buffer is left to the garbage collector rather than pooled:
	// memory.Buffer replaces its slice with the new one, but a caller may
	// still hold a slice of the old one (a page wrapping the bytes).
	return nb
}

// Free returns b to its pool when the pool handed it out; other buffers
// are left to the garbage collector.
func (a *poolAllocator) Free(b []byte) {
	c, ok := poolClasses.Exact(cap(b))
	if !ok {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%poolAlign != 0 {
		return
	}
	a.classes[c].Put(p)
}

// goAlloc allocates as memory.GoAllocator does: zeroed, 64-byte aligned,
// capacity trimmed to size so that Free never pools it.
func goAlloc(size int) []byte {
	buf := make([]byte, size+poolAlign)
	shift := (poolAlign - int(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%poolAlign)) % poolAlign
	return buf[shift : shift+size : shift+size]
}

// ArrayAllocator is the allocator for Arrow arrays that a caller holding
// mem builds from decoded batches (the server's copies of a batch's kept
// rows): the pool the reader's own arrays come from when mem is Go's
// allocator, so that those copies reuse the memory of released batches
// rather than fresh, collected memory; mem itself otherwise (checked and
// C allocators are used as given).
func ArrayAllocator(mem memory.Allocator) memory.Allocator {
	if _, ok := mem.(*memory.GoAllocator); ok {
		return arrayBuffers
	}
	return mem
}
