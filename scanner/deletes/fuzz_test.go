package deletes

import (
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/scand/scand/scanner"
)

func crc(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// FuzzDecodeDeletionVector feeds the decoder hostile blobs, framed and
// unframed (the fuzzer mutates the body; the frame is made valid again so
// that the bitmap decoding is reached). It must answer ErrCorrupt or a
// bitmap that serializes back to what it read, never panic or allocate
// what the input does not justify.
func FuzzDecodeDeletionVector(f *testing.F) {
	files, _ := filepath.Glob("testdata/iceberg-java/*.bin")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, positions := range [][]uint64{{}, {1}, seq(0, 200), {5, 1 << 32, 1 << 40}} {
		bm := roaring64.BitmapOf(positions...)
		bm.RunOptimize()
		if b, err := EncodeDeletionVector(bm); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, blob []byte) {
		check := func(b []byte) {
			bm, err := DecodeDeletionVector(b, -1)
			if err != nil {
				if !errors.Is(err, scanner.ErrCorrupt) {
					t.Fatalf("error %v is not ErrCorrupt", err)
				}
				return
			}
			_ = bm.GetCardinality()
			it := bm.Iterator()
			for i := 0; i < 1000 && it.HasNext(); i++ {
				if !bm.Contains(it.Next()) {
					t.Fatal("an iterated position is not contained")
				}
			}
		}
		check(blob)
		if len(blob) >= 8 {
			check(reframe(blob))
		}
		check(frame(append(bitmapMagic[:len(bitmapMagic):len(bitmapMagic)], blob...)))
	})
}
