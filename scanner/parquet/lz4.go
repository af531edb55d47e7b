package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/pierrec/lz4/v4"
)

// lz4Codec decodes Parquet's deprecated LZ4 codec (id 5), which arrow-go
// v18.8.0 does not implement. Writers disagree on what it means: parquet-mr
// (through Hadoop) writes Hadoop's framing, a sequence of blocks each
// preceded by its big-endian decompressed and compressed lengths; older
// parquet-cpp wrote a bare LZ4 block. Like Arrow C++'s Lz4HadoopCodec, we
// try the Hadoop framing first and fall back to a bare block. Writing is
// not supported: scand only reads, and LZ4_RAW (id 7) is the codec to
// write.
type lz4Codec struct{}

func init() {
	compress.RegisterCodec(compress.Codecs.Lz4, lz4Codec{})
}

var errLZ4Write = errors.New("writing the deprecated LZ4 codec is not supported; use LZ4_RAW")

func (lz4Codec) Encode(dst, src []byte) []byte                 { panic(errLZ4Write) }
func (lz4Codec) EncodeLevel(dst, src []byte, level int) []byte { panic(errLZ4Write) }
func (lz4Codec) CompressBound(n int64) int64                   { return int64(lz4.CompressBlockBound(int(n))) }

func (c lz4Codec) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

// DecodeWithError decodes src into dst, which the page reader sizes to the
// page's decompressed length.
func (lz4Codec) DecodeWithError(dst, src []byte) ([]byte, error) {
	if out, ok := decodeHadoopLZ4(dst, src); ok {
		return out, nil
	}
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return nil, fmt.Errorf("LZ4 page is neither Hadoop-framed nor a bare LZ4 block: %w", err)
	}
	return dst[:n], nil
}

// decodeHadoopLZ4 decodes Hadoop-framed LZ4; ok is false when src is not
// in that framing (or does not decode to exactly len(dst) bytes).
func decodeHadoopLZ4(dst, src []byte) (_ []byte, ok bool) {
	const prefix = 8
	written := 0
	for len(src) > 0 {
		if len(src) < prefix {
			return nil, false
		}
		want := int(binary.BigEndian.Uint32(src[0:4]))
		clen := int(binary.BigEndian.Uint32(src[4:8]))
		src = src[prefix:]
		if clen > len(src) || want > len(dst)-written {
			return nil, false
		}
		n, err := lz4.UncompressBlock(src[:clen], dst[written:written+want])
		if err != nil || n != want {
			return nil, false
		}
		written += n
		src = src[clen:]
	}
	if written != len(dst) {
		return nil, false
	}
	return dst[:written], true
}
