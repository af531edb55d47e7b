package orc

import (
	"errors"
	"fmt"

	"github.com/anchore/go-lzo"
)

// LZO in ORC: each compressed chunk is one raw LZO1X block (no lzop or
// Hadoop framing, no checksum), ended by the end-of-stream instruction
// (M4 with distance 16384: 0x11 0x00 0x00), decompressing to at most the
// compression block size. The Java writer produces it with aircompressor,
// ORC C++ (and so pyarrow) reads it with a port of aircompressor's
// decoder; both follow LZO1X as liblzo decodes it.
//
// Decoding is github.com/anchore/go-lzo (pure Go, MIT; written from the
// Linux kernel's LZO1X description and lzokay; tested upstream against
// liblzo's output): its Decompress writes into a caller-sized buffer and
// bounds-checks every literal run, match and look-behind distance against
// both buffers, which is the contract this reader needs.

// lzoMaxExpansion bounds LZO1X output per input byte: the longest match
// per instruction byte comes from a length extension, where every zero
// byte adds 255 bytes of match (an M3 of 4+z bytes copies at most
// 288+255z <= 255(4+z)); literals are 1:1, M1 and M2 copy at most 8 bytes
// for 2. A chunk can therefore never need more than 255 times its own
// size, so that, not the block size, sizes the buffer for a small chunk:
// a 10-byte chunk of a file declaring 64 MiB blocks costs 2.5 KiB.
const lzoMaxExpansion = 255

// decompressLZO decodes one LZO1X block into dst (reusing its capacity)
// and fails if the result would exceed limit bytes. Nothing is written to
// dst past min(limit, lzoMaxExpansion*len(src)).
func decompressLZO(src, dst []byte, limit int) ([]byte, error) {
	if len(src) == 0 {
		// Nothing compresses to nothing (as ORC C++ reads it).
		return dst[:0], nil
	}
	n := limit
	if len(src) <= limit/lzoMaxExpansion {
		n = lzoMaxExpansion * len(src)
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	got, err := lzo.Decompress(src, dst[:n])
	switch {
	case errors.Is(err, lzo.ErrOutputOverrun) && n == limit:
		return nil, fmt.Errorf("lzo chunk inflates past the block size %d", limit)
	case err != nil:
		return nil, fmt.Errorf("lzo chunk of %d bytes: %w", len(src), err)
	}
	return dst[:got], nil
}
