package parquet

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scand/scand/scanner"
)

// encodeHybrid encodes values with bitWidth bits each as the RLE/bit-packed
// hybrid: runs of 8 or more equal values as RLE runs, the rest bit-packed
// in groups of 8 (the last group padded).
func encodeHybrid(values []int32, bitWidth int) []byte {
	var out []byte
	for i := 0; i < len(values); {
		j := i
		for j < len(values) && values[j] == values[i] {
			j++
		}
		if j-i >= 8 {
			out = binary.AppendUvarint(out, uint64(j-i)<<1)
			var v [4]byte
			binary.LittleEndian.PutUint32(v[:], uint32(values[i]))
			out = append(out, v[:(bitWidth+7)/8]...)
			i = j
			continue
		}
		// Bit-pack up to the next long run, whole groups of 8.
		end := i
		for end < len(values) {
			k := end
			for k < len(values) && values[k] == values[end] {
				k++
			}
			if k-end >= 8 && end > i && (end-i)%8 == 0 {
				break
			}
			end++
		}
		groups := (end - i + 7) / 8
		out = binary.AppendUvarint(out, uint64(groups)<<1|1)
		var acc uint64
		bits := 0
		for g := 0; g < groups*8; g++ {
			v := uint64(0)
			if i+g < len(values) {
				v = uint64(values[i+g])
			}
			acc |= v << bits
			bits += bitWidth
			for bits >= 8 {
				out = append(out, byte(acc))
				acc >>= 8
				bits -= 8
			}
		}
		i = min(i+groups*8, len(values))
	}
	return out
}

func TestDecodeIndices(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, bitWidth := range []int{0, 1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 24, 31, 32} {
		for _, n := range []int{0, 1, 7, 8, 9, 100, 1000, 4097} {
			dictLen := 1 << min(bitWidth, 30)
			values := make([]int32, n)
			for i := range values {
				switch {
				case bitWidth == 0:
				case i%50 < 20: // runs
					values[i] = int32(i / 50 % dictLen)
				default:
					values[i] = int32(r.Int64N(int64(dictLen)))
				}
			}
			enc := encodeHybrid(values, bitWidth)
			got := make([]int32, n)
			if err := decodeIndices(enc, n, bitWidth, dictLen, got); err != nil {
				t.Fatalf("width %d, %d values: %v", bitWidth, n, err)
			}
			if !slices.Equal(got, values) {
				t.Fatalf("width %d, %d values: decoded wrong", bitWidth, n)
			}
			// A prefix of the encoding either fails or, when it cuts only
			// the padding of the last group, decodes the same values.
			for cut := range len(enc) {
				part := make([]int32, n)
				if err := decodeIndices(enc[:cut], n, bitWidth, dictLen, part); err == nil && !slices.Equal(part, values) {
					t.Fatalf("width %d, %d values: %d of %d bytes decoded to other values", bitWidth, n, cut, len(enc))
				}
			}
		}
	}
}

func TestDecodeIndicesCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name              string
		b                 []byte
		n, width, dictLen int
	}{
		{"index past the dictionary (RLE)", []byte{8 << 1, 5}, 8, 3, 5},
		{"index past the dictionary (packed)", append([]byte{1<<1 | 1}, 0xff, 0xff, 0xff), 8, 3, 5},
		{"empty RLE run", []byte{0, 1}, 1, 1, 2},
		{"empty packed run", []byte{1}, 1, 1, 2},
		{"RLE value cut off", []byte{8 << 1}, 8, 16, 1 << 16},
		{"packed run cut off", []byte{1<<1 | 1, 0xff}, 8, 8, 256},
		{"too few values", []byte{4 << 1, 1}, 8, 1, 2},
		{"width 33", []byte{8 << 1, 0, 0, 0, 0, 0}, 8, 33, 2},
		{"header varint cut off", []byte{0x80}, 1, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := decodeIndices(tc.b, tc.n, tc.width, tc.dictLen, make([]int32, tc.n))
			if !errors.Is(err, scanner.ErrCorrupt) {
				t.Errorf("got %v, want a corrupt-data error", err)
			}
		})
	}
}

func FuzzDecodeIndices(f *testing.F) {
	f.Add(encodeHybrid([]int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 0, 1}, 2), 13, 2, 4)
	f.Add(encodeHybrid([]int32{5, 100, 7}, 7), 3, 7, 128)
	f.Fuzz(func(t *testing.T, b []byte, n, width, dictLen int) {
		if n < 0 || n > 1<<16 {
			return
		}
		dst := make([]int32, n)
		if err := decodeIndices(b, n, width, dictLen, dst); err != nil {
			return
		}
		for _, v := range dst {
			if v < 0 || int(v) >= dictLen {
				t.Fatalf("index %d outside a dictionary of %d", v, dictLen)
			}
		}
	})
}

// TestIndexDecoderResumes decodes in pieces of every size what
// decodeIndices decodes at once.
func TestIndexDecoderResumes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, bitWidth := range []int{0, 1, 3, 7, 8, 13, 32} {
		dictLen := 1 << min(bitWidth, 30)
		values := make([]int32, 3000)
		for i := range values {
			if bitWidth > 0 && i%300 >= 100 {
				values[i] = int32(r.Int64N(int64(dictLen)))
			}
		}
		enc := encodeHybrid(values, bitWidth)
		for _, piece := range []int{1, 3, 7, 8, 9, 64, 1000} {
			d, err := newIndexDecoder(enc, bitWidth, dictLen)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int32, len(values))
			for at := 0; at < len(got); at += piece {
				if err := d.next(got[at:min(at+piece, len(got))]); err != nil {
					t.Fatalf("width %d, pieces of %d, at %d: %v", bitWidth, piece, at, err)
				}
			}
			if !slices.Equal(got, values) {
				t.Fatalf("width %d, pieces of %d: decoded wrong", bitWidth, piece)
			}
		}
	}
}
