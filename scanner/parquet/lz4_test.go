package parquet

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/pierrec/lz4/v4"
)

func lz4Block(t *testing.T, data []byte) []byte {
	t.Helper()
	out := make([]byte, lz4.CompressBlockBound(len(data)))
	var c lz4.Compressor
	n, err := c.CompressBlock(data, out)
	if err != nil || n == 0 {
		t.Fatalf("compress: n=%d err=%v", n, err)
	}
	return out[:n]
}

func hadoopFrame(blocks ...[]byte) []byte {
	var out []byte
	for i := 0; i < len(blocks); i += 2 {
		raw, comp := blocks[i], blocks[i+1]
		out = binary.BigEndian.AppendUint32(out, uint32(len(raw)))
		out = binary.BigEndian.AppendUint32(out, uint32(len(comp)))
		out = append(out, comp...)
	}
	return out
}

func TestLZ4Codec(t *testing.T) {
	a := bytes.Repeat([]byte("scand reads parquet "), 50)
	b := bytes.Repeat([]byte("and orc "), 80)
	whole := append(append([]byte{}, a...), b...)
	tests := []struct {
		name string
		src  []byte
		want []byte
		ok   bool
	}{
		{"hadoop, one block", hadoopFrame(a, lz4Block(t, a)), a, true},
		{"hadoop, two blocks", hadoopFrame(a, lz4Block(t, a), b, lz4Block(t, b)), whole, true},
		{"bare block", lz4Block(t, whole), whole, true},
		{"garbage", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.want)
			if n == 0 {
				n = 100
			}
			got, err := lz4Codec{}.DecodeWithError(make([]byte, n), tt.src)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && !bytes.Equal(got, tt.want) {
				t.Errorf("decoded %d bytes, want %d", len(got), len(tt.want))
			}
		})
	}
}

func TestEmptyPayloadDecodesToNothing(t *testing.T) {
	c := boundedCodec{Codec: lz4Codec{}, decode: passThrough(lz4Codec{})}
	got, err := c.DecodeWithError(make([]byte, 0), nil)
	if err != nil || len(got) != 0 {
		t.Errorf("empty payload: %v, %d bytes", err, len(got))
	}
	if _, err := c.DecodeWithError(make([]byte, 10), []byte{0xff}); err == nil {
		t.Error("garbage payload decoded")
	}
}
