package parquet

import (
	"io"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// emptyTolerant wraps a codec so that an empty compressed payload decodes
// to nothing instead of failing. parquet-mr writes data page V2 pages whose
// values section is empty (all values null) but still marks them
// compressed; a Snappy decoder handed zero bytes reports corrupt input
// (parquet-testing datapage_v2_empty_datapage.snappy). Readers such as
// Arrow C++ skip the decompressor for an empty payload; so does this.
type emptyTolerant struct {
	compress.Codec
}

func (c emptyTolerant) Decode(dst, src []byte) []byte {
	if len(src) == 0 {
		return dst[:0]
	}
	return c.Codec.Decode(dst, src)
}

func (c emptyTolerant) DecodeWithError(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst[:0], nil
	}
	return compress.Decode(c.Codec, dst, src)
}

// The streaming methods pass through, so page writers and streaming
// readers keep working.

func (c emptyTolerant) NewReader(r io.Reader) io.ReadCloser {
	return c.Codec.(compress.StreamingCodec).NewReader(r)
}

func (c emptyTolerant) NewWriter(w io.Writer) io.WriteCloser {
	return c.Codec.(compress.StreamingCodec).NewWriter(w)
}

func (c emptyTolerant) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.Codec.(compress.StreamingCodec).NewWriterLevel(w, level)
}

func init() {
	if c, err := compress.GetCodec(compress.Codecs.Snappy); err == nil {
		if _, streaming := c.(compress.StreamingCodec); streaming {
			compress.RegisterCodec(compress.Codecs.Snappy, emptyTolerant{c})
		}
	}
}
