package orc

import (
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/scand/scand/scanner"
)

const (
	// defaultBlockSize is the compression block size readers assume when
	// the postscript omits it (ORC-1357).
	defaultBlockSize = 256 << 10
	// maxBlockSize caps the postscript's compressionBlockSize: a chunk
	// header holds 23 bits of compressed length, and writers use 256 KiB
	// to a few MiB. A larger claim is treated as corrupt rather than
	// trusted with an allocation.
	maxBlockSize = 64 << 20
	// maxMetadataSize caps the decompressed size of a footer, metadata
	// section or stripe footer (a zip bomb would otherwise expand
	// without bound).
	maxMetadataSize = 256 << 20
	// decompressSlack is the capacity every decompression buffer has past
	// the block size. The zstd decoder uses its fast sequence copies,
	// which write up to 16 bytes past a match, only when the destination
	// has that much spare capacity beyond the frame's content size; with
	// an exact-size buffer it falls back to byte-exact copies. Output
	// past the block size is still refused.
	decompressSlack = 16
)

var errStreamEnd = errors.New("stream ended before the data it promised")

// codec decompresses ORC compression chunks. It is not safe for
// concurrent use (it holds a reusable decompressor).
type codec struct {
	kind      compressionKind
	blockSize int
	inf       *inflater // reused deflate decoder and tables
	free      [][]byte  // decompression buffers of finished stripes
}

// getBuf returns a decompression buffer a finished stripe gave back, or
// nil (decompress then allocates one).
func (c *codec) getBuf() []byte {
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		return b
	}
	return nil
}

// putBuf keeps a stream's decompression buffer for the next stripe.
func (c *codec) putBuf(b []byte) {
	if cap(b) > 0 {
		c.free = append(c.free, b[:0])
	}
}

func newCodec(kind compressionKind, blockSize int) *codec {
	return &codec{kind: kind, blockSize: blockSize}
}

var (
	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdErr  error
)

func zstdDecoder() (*zstd.Decoder, error) {
	zstdOnce.Do(func() {
		// DecodeAll is safe for concurrent use; WithDecodeAllCapLimit
		// keeps its output within the capacity of the destination (the
		// block size), so a chunk that declares or expands to more fails
		// without allocating it.
		zstdDec, zstdErr = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxBlockSize), zstd.WithDecoderConcurrency(0),
			zstd.WithDecodeAllCapLimit(true))
	})
	return zstdDec, zstdErr
}

// decompress decodes one compressed chunk into dst (reusing its capacity)
// and fails if the result would exceed limit bytes.
func (c *codec) decompress(src, dst []byte, limit int) ([]byte, error) {
	switch c.kind {
	case compZlib:
		return c.inflate(src, dst, limit)
	case compSnappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n > limit {
			return nil, fmt.Errorf("snappy chunk claims %d bytes, more than the block size %d", n, limit)
		}
		if cap(dst) < n {
			dst = make([]byte, n)
		}
		out, err := snappy.Decode(dst[:cap(dst)], src)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		return out, nil
	case compLZ4:
		if cap(dst) < limit {
			dst = make([]byte, limit)
		}
		n, err := lz4.UncompressBlock(src, dst[:limit])
		if err != nil {
			return nil, fmt.Errorf("lz4: %w", err)
		}
		return dst[:n], nil
	case compZstd:
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		if cap(dst) < limit+decompressSlack {
			dst = make([]byte, 0, limit+decompressSlack)
		}
		out, err := d.DecodeAll(src, dst[:0:limit+decompressSlack])
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, fmt.Errorf("zstd chunk inflates past the block size %d", limit)
		}
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		if len(out) > limit {
			return nil, fmt.Errorf("zstd chunk inflates past the block size %d", limit)
		}
		return out, nil
	case compLZO:
		return decompressLZO(src, dst, limit)
	}
	return nil, fmt.Errorf("unknown %v: %w", c.kind, scanner.ErrUnsupported)
}

// inflate decodes a ZLIB (raw deflate) chunk into dst, reusing its
// capacity. A buffer smaller than the limit (the first chunk of a stream
// starts near its likely size) is replaced by one of the limit, and the
// chunk decoded again, when the chunk does not fit.
func (c *codec) inflate(src, dst []byte, limit int) ([]byte, error) {
	if c.inf == nil {
		c.inf = new(inflater)
	}
	out := dst[:cap(dst)]
	if len(out) == 0 {
		out = make([]byte, min(limit, max(64<<10, 4*len(src)))+decompressSlack)
	}
	for {
		n, err := c.inf.inflate(src, out, min(limit, len(out)))
		if err == nil {
			return out[:n], nil
		}
		if !errors.Is(err, errInflateFull) {
			return nil, err
		}
		if len(out) >= limit {
			return nil, fmt.Errorf("zlib chunk inflates past the block size %d", limit)
		}
		out = make([]byte, limit+decompressSlack)
	}
}

// stream reads the decompressed bytes of one ORC stream chunk by chunk.
// Decoders read through it; it never holds more than one decompressed
// chunk (at most the block size) at a time.
type stream struct {
	codec *codec // nil: uncompressed
	raw   []byte // compressed bytes not yet decoded
	buf   []byte // current decompressed chunk
	pos   int
	out   []byte // decompression buffer, reused
}

func newStream(c *codec, raw []byte) *stream {
	s := &stream{codec: c}
	s.reset(raw)
	return s
}

func (s *stream) reset(raw []byte) {
	s.raw, s.buf, s.pos = raw, nil, 0
	if s.codec == nil {
		s.buf, s.raw = raw, nil
	}
}

// fill makes at least one unread byte available.
func (s *stream) fill() error {
	for s.pos >= len(s.buf) {
		if len(s.raw) == 0 {
			return errStreamEnd
		}
		if s.codec == nil {
			s.buf, s.raw, s.pos = s.raw, nil, 0
			continue
		}
		if len(s.raw) < 3 {
			return fmt.Errorf("compression chunk header truncated")
		}
		h := int(s.raw[0]) | int(s.raw[1])<<8 | int(s.raw[2])<<16
		n := h >> 1
		if n > len(s.raw)-3 {
			return fmt.Errorf("compression chunk of %d bytes runs past its stream (%d bytes left)", n, len(s.raw)-3)
		}
		chunk := s.raw[3 : 3+n]
		s.raw = s.raw[3+n:]
		s.pos = 0
		if h&1 == 1 {
			s.buf = chunk
			continue
		}
		if s.out == nil {
			s.out = s.codec.getBuf()
		}
		out, err := s.codec.decompress(chunk, s.out, s.codec.blockSize)
		if err != nil {
			return err
		}
		s.out, s.buf = out, out
	}
	return nil
}

// release gives the stream's decompression buffer back to its codec; the
// stream must not be read afterwards.
func (s *stream) release() {
	if s.codec != nil && s.out != nil {
		s.codec.putBuf(s.out)
	}
	s.out, s.buf, s.raw = nil, nil, nil
}

func (s *stream) readByte() (byte, error) {
	if s.pos < len(s.buf) {
		b := s.buf[s.pos]
		s.pos++
		return b, nil
	}
	if err := s.fill(); err != nil {
		return 0, err
	}
	b := s.buf[s.pos]
	s.pos++
	return b, nil
}

// next returns up to n bytes from the current chunk (at least one).
func (s *stream) next(n int) ([]byte, error) {
	if s.pos >= len(s.buf) {
		if err := s.fill(); err != nil {
			return nil, err
		}
	}
	avail := len(s.buf) - s.pos
	if n > avail {
		n = avail
	}
	b := s.buf[s.pos : s.pos+n]
	s.pos += n
	return b, nil
}

// readFull fills p. (Decompressing whole chunks straight into p, saving
// the copy, measured slower with zstd: matches then read back from cold
// destination memory instead of the cache-resident chunk buffer.)
func (s *stream) readFull(p []byte) error {
	for len(p) > 0 {
		b, err := s.next(len(p))
		if err != nil {
			return err
		}
		n := copy(p, b)
		p = p[n:]
	}
	return nil
}

// maxRemaining bounds the bytes the stream can still produce: what is
// left of the current chunk, plus each remaining chunk's stored size if it
// is an original chunk and the block size if it is compressed (a chunk
// may not inflate past it). It walks the 3-byte chunk headers only.
func (s *stream) maxRemaining() int {
	n := len(s.buf) - s.pos
	if s.codec == nil {
		return n + len(s.raw)
	}
	for raw := s.raw; len(raw) >= 3; {
		h := int(raw[0]) | int(raw[1])<<8 | int(raw[2])<<16
		size := h >> 1
		if size > len(raw)-3 {
			break // the reader reports the damage when it gets there
		}
		if h&1 == 1 {
			n += size
		} else {
			n += s.codec.blockSize
		}
		raw = raw[3+size:]
	}
	return n
}

// atEnd tells whether the stream has no bytes left.
func (s *stream) atEnd() bool {
	if s.pos < len(s.buf) {
		return false
	}
	return s.fill() != nil
}

// readAll decompresses a whole metadata section (footer, metadata, stripe
// footer) of at most limit bytes.
func readAll(c *codec, raw []byte, limit int) ([]byte, error) {
	if c == nil {
		return raw, nil
	}
	s := newStream(c, raw)
	var out []byte
	for {
		if err := s.fill(); err != nil {
			if errors.Is(err, errStreamEnd) {
				return out, nil
			}
			return nil, err
		}
		if len(out)+len(s.buf)-s.pos > limit {
			return nil, fmt.Errorf("metadata section decompresses to more than %d bytes", limit)
		}
		if out == nil && len(s.raw) == 0 && s.pos == 0 {
			// Single chunk: copy once (s.buf may be reused later).
			return append([]byte(nil), s.buf...), nil
		}
		out = append(out, s.buf[s.pos:]...)
		s.pos = len(s.buf)
	}
}
