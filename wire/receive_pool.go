package wire

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/mem"
)

// frameSize is the largest HTTP/2 DATA frame gRPC sends, and so the
// largest buffer it reads a received frame into.
const frameSize = 16 << 10

// receivePool is the mem.BufferPool of ReceivePool.
type receivePool struct {
	frames      sync.Pool
	outstanding atomic.Int64 // frame buffers handed out and not returned
}

var theReceivePool receivePool

// ReceivePool returns a gRPC buffer pool (experimental.WithBufferPool) for
// clients that receive bulk data. gRPC reads each DATA frame into a buffer
// from its pool, and its default pool clears every buffer it hands out:
// about a tenth of the Go client's CPU when receiving scans. A frame's
// buffer is overwritten by the frame before anyone reads it, so this pool
// hands out buffers of up to frameSize as they were returned; larger sizes
// go to gRPC's default pool, which clears them.
func ReceivePool() mem.BufferPool { return &theReceivePool }

// OutstandingReceiveBuffers is the number of ReceivePool's frame buffers
// in use: held by gRPC or by record batches that slice them. Once every
// stream read through a Reader has ended and every batch been released it
// is back where it was (tests assert that). A FlightData that ReceiveCodec
// decodes in place (one received buffer) keeps its buffer until the
// garbage collector takes it, and stays counted.
func OutstandingReceiveBuffers() int64 { return theReceivePool.outstanding.Load() }

func (p *receivePool) Get(n int) *[]byte {
	if n > frameSize {
		return mem.DefaultBufferPool().Get(n)
	}
	p.outstanding.Add(1)
	if b, ok := p.frames.Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, frameSize)
	return &b
}

func (p *receivePool) Put(b *[]byte) {
	if cap(*b) != frameSize {
		mem.DefaultBufferPool().Put(b)
		return
	}
	p.outstanding.Add(-1)
	p.frames.Put(b)
}

// copyPool is the memory.Allocator of the Arrow buffers a Reader copies
// (those that straddle received buffers) when it is given none: buffers
// of at least minPooled bytes are recycled through size classes, a
// quarter of a power of two apart (at most 25 % unused), and handed out
// without clearing, since the Reader overwrites every byte it allocates.
// Recycling instead of allocating anew saves what fresh memory costs:
// the garbage collector's clearing and the kernel's page faults, which
// were most of the client's copying time. Smaller buffers come from Go's
// allocator.
type copyPool struct {
	classes     [4 * 64]sync.Pool
	outstanding atomic.Int64 // bytes of pooled-size buffers handed out
}

const minPooled = 4 << 10

var theCopyPool copyPool

// classOf returns the class index and size of the smallest class that
// holds n bytes (n >= minPooled).
func classOf(n int) (int, int) {
	k := bits.Len(uint(n)) - 1
	step := 1 << (k - 2)
	size := (n + step - 1) / step * step
	k = bits.Len(uint(size)) - 1
	step = 1 << (k - 2)
	return 4*k + size/step - 4, size
}

func (p *copyPool) Allocate(n int) []byte {
	if n < minPooled {
		return make([]byte, n)
	}
	c, size := classOf(n)
	p.outstanding.Add(int64(size))
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, size)
}

func (p *copyPool) Reallocate(n int, b []byte) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	nb := p.Allocate(n)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *copyPool) Free(b []byte) {
	if cap(b) < minPooled {
		return
	}
	c, size := classOf(cap(b))
	if size != cap(b) {
		return // not one of ours
	}
	p.outstanding.Add(-int64(size))
	b = b[:0]
	p.classes[c].Put(&b)
}
