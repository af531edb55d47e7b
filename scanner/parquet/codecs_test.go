package parquet

import (
	"bytes"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestPooledCodecs: the pooled gzip and brotli decoders fill the page
// exactly, refuse a page that holds more or fewer bytes than its header
// declares, and decode correctly with a reader reused after a failure.
func TestPooledCodecs(t *testing.T) {
	page := bytes.Repeat([]byte("lineitem comment "), 4000)
	for _, kind := range []compress.Compression{compress.Codecs.Gzip, compress.Codecs.Brotli} {
		c, err := compress.GetCodec(kind)
		if err != nil {
			t.Fatal(err)
		}
		enc := c.Encode(nil, page)
		cases := []struct {
			name     string
			src      []byte
			dstLen   int
			overflow bool // errPageOverflow wanted; else some error, or none if ok
			ok       bool
		}{
			{"exact", enc, len(page), false, true},
			{"longer than declared", enc, len(page) - 1, true, false},
			{"shorter than declared", enc, len(page) + 1, false, false},
			{"truncated", enc[:len(enc)/2], len(page), false, false},
			{"garbage", []byte("not compressed at all"), len(page), false, false},
			{"again after failures", enc, len(page), false, true},
		}
		for _, tc := range cases {
			out, err := compress.Decode(c, make([]byte, tc.dstLen), tc.src)
			switch {
			case tc.ok && (err != nil || !bytes.Equal(out, page)):
				t.Errorf("%s/%s: %d bytes, %v; want the page", kind, tc.name, len(out), err)
			case !tc.ok && err == nil:
				t.Errorf("%s/%s: no error", kind, tc.name)
			case tc.overflow && !errors.Is(err, errPageOverflow):
				t.Errorf("%s/%s: %v, want errPageOverflow", kind, tc.name, err)
			}
		}
	}
}
