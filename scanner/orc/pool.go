package orc

import (
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/internal/sizeclass"
)

// Value buffers of fixed-width columns (integers, floats and doubles)
// come from valueBuffers when the caller's allocator is Go's: a batch's
// buffers return to it when the caller releases the batch (for the
// server, once it is on the socket), and later batches reuse them. Go's
// allocator clears every buffer it hands out, which cost the decoder of an
// integer or double column about a sixth of its time; the pool hands out
// a reused buffer uncleared, which is sound because these columns write
// every byte of it before it is read: values go to the front, and
// spreadInts moves them to their rows and zeroes the null slots (and
// newValueBuffer zeroes the padding past the values). Bitmaps, offsets,
// string data and every other buffer keep the caller's allocator.
const (
	valuePoolMin   = 4 << 10
	valuePoolMax   = 64 << 20
	valuePoolAlign = 64 // Arrow's buffer alignment
)

var (
	valueClasses = sizeclass.New(valuePoolMin, valuePoolMax, 1)
	valueBuffers = &valuePool{classes: make([]sync.Pool, valueClasses.Len())}
)

// valuePool is a memory.Allocator that keeps freed buffers in one
// sync.Pool per size class and hands them out again without clearing
// them. The pool trusts Free: Arrow frees a buffer when its last
// reference is released. It holds nothing a quiet server keeps: sync.Pool
// empties as the garbage collector runs. It is safe for concurrent use.
type valuePool struct {
	classes []sync.Pool // entries are unsafe.Pointer to the first byte
}

var _ memory.Allocator = (*valuePool)(nil)

// Allocate returns a 64-byte aligned buffer of size bytes; a reused one
// holds old bytes, which its user must overwrite.
func (p *valuePool) Allocate(size int) []byte {
	capacity, c, ok := valueClasses.Class(size)
	if !ok {
		return alignedAlloc(size)
	}
	if ptr, ok := p.classes[c].Get().(unsafe.Pointer); ok {
		return unsafe.Slice((*byte)(ptr), capacity)[:size]
	}
	b := make([]byte, capacity)
	if uintptr(unsafe.Pointer(&b[0]))%valuePoolAlign != 0 {
		return alignedAlloc(size)
	}
	return b[:size]
}

// Reallocate grows or shrinks b to size bytes, keeping its contents and
// zeroing what it adds (value buffers are sized once; this is for Arrow's
// Resize contract).
func (p *valuePool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb := p.Allocate(size)
	n := copy(nb, b)
	clear(nb[n:])
	return nb
}

// Free keeps b for reuse when the pool handed it out; other buffers are
// left to the garbage collector.
func (p *valuePool) Free(b []byte) {
	c, ok := valueClasses.Exact(cap(b))
	if !ok {
		return
	}
	ptr := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(ptr)%valuePoolAlign != 0 {
		return
	}
	p.classes[c].Put(ptr)
}

// alignedAlloc allocates as memory.GoAllocator does: zeroed, 64-byte
// aligned, capacity trimmed to size so that Free never pools it.
func alignedAlloc(size int) []byte {
	buf := make([]byte, size+valuePoolAlign)
	shift := (valuePoolAlign - int(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%valuePoolAlign)) % valuePoolAlign
	return buf[shift : shift+size : shift+size]
}

// newValueBuffer is newBuffer for a value buffer its column overwrites
// whole (see valueBuffers): from the pool when mem is Go's allocator,
// with the padding past nbytes zeroed.
func newValueBuffer(mem memory.Allocator, nbytes int) *memory.Buffer {
	if _, ok := mem.(*memory.GoAllocator); !ok {
		return newBuffer(mem, nbytes)
	}
	b := newBuffer(valueBuffers, nbytes)
	clear(b.Buf()[nbytes:])
	return b
}
