package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/gzip"
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
// into dst and check for more, LZ4_RAW decodes a block into dst). GZIP and
// BROTLI are replaced anyway, to reuse their readers (decodeGzip).

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

// gzipReaders and brotliReaders keep decompressors for reuse: arrow-go
// makes a new one for every page (gzip: 45 kB in 54 allocations; brotli:
// 1.1 MB in 14), where Reset restarts one with its tables and window.
var (
	gzipReaders   sync.Pool // *gzip.Reader
	brotliReaders sync.Pool // *brotli.Reader
)

// decodeGzip decodes a gzip page into dst, which it must fill exactly.
func decodeGzip(dst, src []byte) ([]byte, error) {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = zr.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	defer gzipReaders.Put(zr)
	return readExactly(zr, dst, "gzip")
}

// decodeBrotli decodes a Brotli page into dst, which it must fill exactly.
func decodeBrotli(dst, src []byte) ([]byte, error) {
	br, _ := brotliReaders.Get().(*brotli.Reader)
	if br == nil {
		br = brotli.NewReader(bytes.NewReader(src))
	} else if err := br.Reset(bytes.NewReader(src)); err != nil {
		return nil, fmt.Errorf("brotli: %w", err)
	}
	defer brotliReaders.Put(br)
	return readExactly(br, dst, "brotli")
}

// readExactly reads len(dst) bytes from r into dst and checks that r has
// no more, as arrow-go's codecs do.
func readExactly(r io.Reader, dst []byte, codec string) ([]byte, error) {
	n, err := io.ReadFull(r, dst)
	if err != nil {
		return nil, fmt.Errorf("%s page shorter than its header's %d bytes: %w", codec, len(dst), err)
	}
	var extra [1]byte
	if k, err := r.Read(extra[:]); k != 0 || err != io.EOF {
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: %w", codec, err)
		}
		return nil, fmt.Errorf("%s page into %d bytes: %w", codec, len(dst), errPageOverflow)
	}
	return dst[:n], nil
}

// passThrough decodes with the wrapped codec, which already writes only
// into dst.
func passThrough(c compress.Codec) func(dst, src []byte) ([]byte, error) {
	return func(dst, src []byte) ([]byte, error) { return compress.Decode(c, dst, src) }
}

// arrowGoCodecs are the codecs arrow-go registered before init replaced
// them, kept for BenchmarkPageDecode to compare against.
var arrowGoCodecs = map[compress.Compression]compress.Codec{}

func init() {
	for kind, decode := range map[compress.Compression]func(compress.Codec) func(dst, src []byte) ([]byte, error){
		compress.Codecs.Snappy: func(compress.Codec) func(dst, src []byte) ([]byte, error) { return decodeSnappy },
		compress.Codecs.Zstd:   func(compress.Codec) func(dst, src []byte) ([]byte, error) { return decodeZstd },
		compress.Codecs.Gzip:   func(compress.Codec) func(dst, src []byte) ([]byte, error) { return decodeGzip },
		compress.Codecs.Brotli: func(compress.Codec) func(dst, src []byte) ([]byte, error) { return decodeBrotli },
		compress.Codecs.Lz4Raw: passThrough,
	} {
		c, err := compress.GetCodec(kind)
		if err != nil {
			continue
		}
		if _, streaming := c.(compress.StreamingCodec); streaming {
			arrowGoCodecs[kind] = c
			compress.RegisterCodec(kind, boundedCodec{Codec: c, decode: decode(c)})
		}
	}
}
