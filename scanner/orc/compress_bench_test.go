package orc

import (
	"bytes"
	stdflate "compress/flate"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// benchChunk is one 256 KiB ORC compression block (the default block
// size) of RLE-v2-like integer bytes and text.
func benchChunk(kind string) []byte {
	r := rand.New(rand.NewPCG(13, 14))
	var b bytes.Buffer
	words := []string{"carefully", "final", "deposits", "sleep", "quickly", "regular", "ideas", "pending"}
	for b.Len() < defaultBlockSize {
		if kind == "text" {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		} else {
			b.Write([]byte{0x5e, 0x03, byte(r.IntN(8)), byte(r.IntN(256)), byte(r.IntN(16))})
		}
	}
	return b.Bytes()[:defaultBlockSize]
}

// BenchmarkChunkDecode compares the ORC codecs (codec.decompress, reused
// buffers and readers) with the standard library's flate on one block.
// Run: go test ./scanner/orc -run XXX -bench ChunkDecode -benchmem -count 5
func BenchmarkChunkDecode(b *testing.B) {
	for _, kind := range []string{"ints", "text"} {
		raw := benchChunk(kind)
		var def bytes.Buffer
		fw, _ := flate.NewWriter(&def, flate.DefaultCompression)
		fw.Write(raw)
		fw.Close()
		zenc, _ := zstd.NewWriter(nil)
		inputs := map[compressionKind][]byte{
			compZlib:   def.Bytes(),
			compSnappy: snappy.Encode(nil, raw),
			compZstd:   zenc.EncodeAll(raw, nil),
		}
		for ck, src := range inputs {
			b.Run(fmt.Sprintf("%s/%v/scand", kind, ck), func(b *testing.B) {
				c := newCodec(ck, defaultBlockSize)
				dst := make([]byte, 0, defaultBlockSize)
				b.SetBytes(int64(len(raw)))
				b.ReportAllocs()
				for b.Loop() {
					out, err := c.decompress(src, dst, defaultBlockSize)
					if err != nil || len(out) != len(raw) {
						b.Fatal(len(out), err)
					}
					dst = out[:0]
				}
			})
		}
		b.Run(kind+"/zlib/stdlib", func(b *testing.B) {
			src := def.Bytes()
			var br bytes.Reader
			br.Reset(src)
			fr := stdflate.NewReader(&br)
			dst := make([]byte, defaultBlockSize)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				br.Reset(src)
				fr.(stdflate.Resetter).Reset(&br, nil)
				if _, err := io.ReadFull(fr, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
