package parquet

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// Decompressors that never produce more than the page header declares.
//
// Both readers (the native one and arrow-go's page reader) size the
// destination of a page's decompression by the header's uncompressed size
// and hand it to the codec. arrow-go's ZSTD and Snappy codecs treat it as a
// hint: ZSTD's DecodeAll appends to dst[:0] and grows it to whatever the
// frame expands to, and Snappy allocates a new buffer of the length the
// input claims when dst is shorter. A 33 KB page of zeros then takes 1 GiB
// before its length is compared with the header. The codecs registered here
// decode into dst and nothing else, and fail once the output would be
// longer; the other codecs arrow-go ships already do (GZIP and BROTLI read
// into dst and check for more, LZ4_RAW decodes a block into dst).

// errPageOverflow: the page decompresses to more than its header declares.
var errPageOverflow = errors.New("page decompresses to more bytes than its header declares")

// boundedCodec wraps a codec so that Decode writes only into dst (whose
// length is the declared size) and fails if the page holds more. It also
// decodes an empty payload to nothing instead of failing: parquet-mr
// writes data page V2 pages whose values section is empty (all values
// null) but still marks them compressed, and a Snappy decoder handed zero
// bytes reports corrupt input (parquet-testing
// datapage_v2_empty_datapage.snappy); Arrow C++ skips the decompressor for
// an empty payload, and so does this.
type boundedCodec struct {
	compress.Codec
	decode func(dst, src []byte) ([]byte, error)
}

func (c boundedCodec) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

func (c boundedCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst[:0], nil
	}
	return c.decode(dst, src)
}

// The streaming methods pass through, so page writers keep working.

func (c boundedCodec) NewReader(r io.Reader) io.ReadCloser {
	return c.Codec.(compress.StreamingCodec).NewReader(r)
}

func (c boundedCodec) NewWriter(w io.Writer) io.WriteCloser {
	return c.Codec.(compress.StreamingCodec).NewWriter(w)
}

func (c boundedCodec) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.Codec.(compress.StreamingCodec).NewWriterLevel(w, level)
}

// decodeSnappy decodes a Snappy block into dst, refusing a block whose
// declared length exceeds len(dst) before decoding anything.
func decodeSnappy(dst, src []byte) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if n > len(dst) {
		return nil, fmt.Errorf("snappy block of %d bytes into a page of %d: %w", n, len(dst), errPageOverflow)
	}
	return snappy.Decode(dst[:n], src)
}

// zstdDecoders are synchronous decoders limited to the capacity of the
// destination (zstd.WithDecodeAllCapLimit): a frame that declares, or
// expands to, more fails without growing it.
var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(err) // only bad options fail
	}
	return d
}}

func decodeZstd(dst, src []byte) ([]byte, error) {
	d := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(d)
	out, err := d.DecodeAll(src, dst[:0:len(dst)])
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return nil, fmt.Errorf("zstd frame into a page of %d bytes: %w", len(dst), errPageOverflow)
	}
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return out, nil
}

// passThrough decodes with the wrapped codec, which already writes only
// into dst.
func passThrough(c compress.Codec) func(dst, src []byte) ([]byte, error) {
	return func(dst, src []byte) ([]byte, error) { return compress.Decode(c, dst, src) }
}

func init() {
	for kind, decode := range map[compress.Compression]func(compress.Codec) func(dst, src []byte) ([]byte, error){
		compress.Codecs.Snappy: func(compress.Codec) func(dst, src []byte) ([]byte, error) { return decodeSnappy },
		compress.Codecs.Zstd:   func(compress.Codec) func(dst, src []byte) ([]byte, error) { return decodeZstd },
		compress.Codecs.Gzip:   passThrough,
		compress.Codecs.Brotli: passThrough,
		compress.Codecs.Lz4Raw: passThrough,
	} {
		c, err := compress.GetCodec(kind)
		if err != nil {
			continue
		}
		if _, streaming := c.(compress.StreamingCodec); streaming {
			compress.RegisterCodec(kind, boundedCodec{Codec: c, decode: decode(c)})
		}
	}
}
