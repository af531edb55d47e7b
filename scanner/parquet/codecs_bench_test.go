package parquet

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// benchPages are two 1 MiB pages shaped like lineitem's: PLAIN int64
// keys that grow slowly (l_orderkey), and PLAIN strings of words
// (l_comment, 4-byte length prefixes included).
func benchPages() map[string][]byte {
	r := rand.New(rand.NewPCG(9, 10))
	ints := make([]byte, 0, 1<<20)
	k := uint64(1)
	for len(ints) < 1<<20 {
		k += uint64(r.IntN(4))
		for i := range 8 {
			ints = append(ints, byte(k>>(8*i)))
		}
	}
	words := []string{"carefully", "final", "deposits", "sleep", "quickly", "furiously", "regular", "ideas", "blithely", "pending", "accounts", "haggle"}
	var text bytes.Buffer
	for text.Len() < 1<<20 {
		var s bytes.Buffer
		for range 3 + r.IntN(6) {
			s.WriteString(words[r.IntN(len(words))])
			s.WriteByte(' ')
		}
		n := s.Len()
		text.Write([]byte{byte(n), 0, 0, 0})
		text.Write(s.Bytes())
	}
	return map[string][]byte{"int64-keys": ints, "comments": text.Bytes()[:1<<20]}
}

// BenchmarkPageDecode decodes 1 MiB pages with each codec: "arrow-go" is
// the codec arrow-go v18.8.0 registers (a new gzip or brotli reader per
// page), "scand" the one codecs.go registers over it. Run:
//
//	go test ./scanner/parquet -run XXX -bench PageDecode -benchmem -count 5
func BenchmarkPageDecode(b *testing.B) {
	for name, page := range benchPages() {
		for _, kind := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Brotli, compress.Codecs.Lz4Raw} {
			ours, err := compress.GetCodec(kind)
			if err != nil {
				b.Fatal(err)
			}
			enc := ours.Encode(nil, page)
			impls := map[string]compress.Codec{"scand": ours}
			if c, ok := arrowGoCodecs[kind]; ok {
				impls["arrow-go"] = c
			}
			for impl, c := range impls {
				b.Run(fmt.Sprintf("%s/%s/%s", name, kind, impl), func(b *testing.B) {
					dst := make([]byte, len(page))
					b.SetBytes(int64(len(page)))
					b.ReportAllocs()
					for b.Loop() {
						out, err := compress.Decode(c, dst, enc)
						if err != nil || len(out) != len(page) {
							b.Fatal(len(out), err)
						}
					}
				})
			}
		}
	}
}
