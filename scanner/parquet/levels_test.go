package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/scand/scand/scanner"
)

// validityPatterns make the shapes of null runs that select arrow-go's
// repeated runs (long runs of one level) and bit-packed runs (mixed levels).
var validityPatterns = []struct {
	name  string
	valid func(rng *rand.Rand, n int) []bool
}{
	{"all valid", func(_ *rand.Rand, n int) []bool { return validityOf(n, func(int) bool { return true }) }},
	{"all null", func(_ *rand.Rand, n int) []bool { return validityOf(n, func(int) bool { return false }) }},
	{"alternating", func(_ *rand.Rand, n int) []bool { return validityOf(n, func(i int) bool { return i%2 == 0 }) }},
	{"10% nulls", func(rng *rand.Rand, n int) []bool { return validityOf(n, func(int) bool { return rng.IntN(10) != 0 }) }},
	{"2% valid", func(rng *rand.Rand, n int) []bool { return validityOf(n, func(int) bool { return rng.IntN(50) == 0 }) }},
	{"long runs", func(rng *rand.Rand, n int) []bool {
		v := make([]bool, 0, n)
		for on := true; len(v) < n; on = !on {
			for range min(1+rng.IntN(300), n-len(v)) {
				v = append(v, on)
			}
		}
		return v
	}},
}

func validityOf(n int, f func(i int) bool) []bool {
	v := make([]bool, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

// levelPage is the definition levels of one data page and the validity
// they encode.
type levelPage struct {
	levels []byte
	valid  []bool
}

// arrowLevels writes valid as a nullable int64 column with arrow-go and
// returns the definition levels of each data page, found with
// parsePageHeader.
func arrowLevels(tb testing.TB, valid []bool, version parquet.DataPageVersion) []levelPage {
	tb.Helper()
	b := array.NewInt64Builder(memory.NewGoAllocator())
	defer b.Release()
	b.AppendValues(make([]int64, len(valid)), valid)
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(len(valid)))
	defer rec.Release()
	// Uncompressed, so a v1 page's levels can be read in place; small
	// pages, so pages start at rows that are not multiples of 8.
	props := parquet.NewWriterProperties(parquet.WithDataPageVersion(version), parquet.WithDictionaryDefault(false),
		parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDataPageSize(1000), parquet.WithBatchSize(300))
	var pages []levelPage
	row := 0
	forEachChunk(tb, writeTestTable(tb, rec, props), func(_ *file.Reader, _, _ int, _ *metadata.ColumnChunkMetaData, chunk []byte) {
		for _, p := range walkChunk(tb, chunk) {
			h, body := p.h, p.body
			var levels []byte
			switch h.typ {
			case pageTypeDataPage:
				// v1: a 4-byte little-endian length, then the levels.
				if h.defEncoding != int32(parquet.Encodings.RLE) || len(body) < 4 {
					tb.Fatalf("v1 page %+v of %d bytes", h, len(body))
				}
				ln := binary.LittleEndian.Uint32(body)
				levels = body[4 : 4+ln]
			case pageTypeDataPageV2:
				levels = body[:h.defLevelsLen]
			default:
				tb.Fatalf("page %+v", h)
			}
			n := int(h.numValues)
			pages = append(pages, levelPage{levels: levels, valid: valid[row : row+n]})
			row += n
		}
	})
	if row != len(valid) {
		tb.Fatalf("pages hold %d rows of %d", row, len(valid))
	}
	return pages
}

func nullsIn(valid []bool) int {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	return nulls
}

// checkValidity checks dst holds valid at bit off and guard elsewhere.
func checkValidity(t *testing.T, dst []byte, off int, valid []bool, guard byte) {
	t.Helper()
	for i := range len(dst) * 8 {
		want := guard>>(i%8)&1 == 1
		if i >= off && i < off+len(valid) {
			want = valid[i-off]
		}
		if got := bitutil.BitIsSet(dst, i); got != want {
			t.Fatalf("bit %d (level %d of %d at offset %d) is %t", i, i-off, len(valid), off, got)
		}
	}
}

func TestDecodeValidityArrowWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, version := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, pattern := range validityPatterns {
			for _, n := range []int{0, 1, 5, 13, 127, 1001, 2999, 4093} {
				t.Run(fmt.Sprintf("v%d/%s/%d", version+1, pattern.name, n), func(t *testing.T) {
					for i, p := range arrowLevels(t, pattern.valid(rng, n), version) {
						checkLevelPage(t, i, p)
						// arrow-go pads the last bit-packed run to 8 levels at
						// most: 8 more are never there.
						if _, err := countNulls(p.levels, len(p.valid)+8); !isLevelsCorrupt(err) {
							t.Fatalf("page %d: %d levels of %d: %v", i, len(p.valid)+8, len(p.valid), err)
						}
					}
				})
			}
		}
	}
}

func checkLevelPage(t *testing.T, page int, p levelPage) {
	t.Helper()
	n, want := len(p.valid), nullsIn(p.valid)
	if got, err := countNulls(p.levels, n); err != nil || got != want {
		t.Fatalf("page %d: countNulls = %d, %v; want %d", page, got, err, want)
	}
	// A prefix: the run holding the last level is cut short.
	if m := n/2 + 1; m <= n {
		if got, err := countNulls(p.levels, m); err != nil || got != nullsIn(p.valid[:m]) {
			t.Fatalf("page %d: countNulls of %d levels = %d, %v; want %d", page, m, got, err, nullsIn(p.valid[:m]))
		}
	}
	for _, off := range []int{0, 3, 8, 13} {
		for _, guard := range []byte{0x00, 0xff} {
			dst := make([]byte, bitutil.BytesForBits(int64(off+n))+1)
			for i := range dst {
				dst[i] = guard
			}
			got, err := decodeValidity(p.levels, n, dst, off)
			if err != nil || got != want {
				t.Fatalf("page %d at offset %d: decodeValidity = %d, %v; want %d", page, off, got, err, want)
			}
			checkValidity(t, dst, off, p.valid, guard)
		}
	}
}

// bitsOf parses "1101" as validity, for hand-made cases.
func bitsOf(s string) []bool {
	s = strings.ReplaceAll(s, " ", "")
	return validityOf(len(s), func(i int) bool { return s[i] == '1' })
}

func TestDecodeValidityHandMade(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels []byte
		want   string
	}{
		{"nothing", nil, ""},
		{"nothing wanted from garbage", []byte{0x00, 0x07}, ""},
		{"repeated ones", []byte{5 << 1, 1}, "11111"},
		{"repeated run longer than wanted", []byte{5 << 1, 1}, "111"},
		{"repeated zeros then bit-packed", []byte{3 << 1, 0, 1<<1 | 1, 0b10110101}, "000 10101101"},
		{"bit-packed, unused groups absent", []byte{2<<1 | 1, 0xff}, "11111111"},
		{"bit-packed, part of a group", []byte{1<<1 | 1, 0b11111010}, "010"},
		{"bit-packed groups", []byte{3<<1 | 1, 0x0f, 0xf0, 0x55}, "11110000 00001111 1010"},
		{"bytes after the levels", []byte{1 << 1, 1, 0xff, 0xff}, "1"},
		{"two-byte header", slices.Concat(uvarintBytes(200<<1), []byte{0}), strings.Repeat("0", 200)},
		{"huge repeated run", slices.Concat(uvarintBytes(0xfffffffe), []byte{1}), "1111111111"},
		{"huge bit-packed run", slices.Concat(uvarintBytes(0xffffffff), []byte{0x81, 0x18}), "10000001 00011000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			valid := bitsOf(tc.want)
			checkLevelPage(t, 0, levelPage{levels: tc.levels, valid: valid})
		})
	}
}

func TestDecodeValidityCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels []byte
		n      int
	}{
		{"empty", nil, 1},
		{"truncated header", []byte{0x80}, 1},
		{"header beyond 32 bits", []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 1},
		{"header of 6 bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 1},
		{"repeated run without its value", []byte{1 << 1}, 1},
		{"level 2", []byte{1 << 1, 2}, 1},
		{"level 255", []byte{1 << 1, 0xff}, 1},
		{"empty repeated run", []byte{0, 1, 1 << 1, 1}, 1},
		{"empty bit-packed run", []byte{0<<1 | 1, 1 << 1, 1}, 1},
		{"bit-packed run without its bytes", []byte{1<<1 | 1}, 1},
		{"bit-packed run short a byte", []byte{2<<1 | 1, 0xff}, 9},
		{"too few levels", []byte{4 << 1, 1}, 5},
		{"too few levels after runs", []byte{4 << 1, 1, 1<<1 | 1, 0x00}, 13},
		{"negative count", []byte{1 << 1, 1}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := countNulls(tc.levels, tc.n); !isLevelsCorrupt(err) {
				t.Errorf("countNulls = %d, %v; want ErrCorrupt", got, err)
			}
			dst := make([]byte, 8)
			if got, err := decodeValidity(tc.levels, tc.n, dst, 0); !isLevelsCorrupt(err) {
				t.Errorf("decodeValidity = %d, %v; want ErrCorrupt", got, err)
			}
		})
	}
	// The levels are fine; the bitmap is not big enough.
	for _, tc := range []struct {
		name    string
		n, off  int
		dstSize int
	}{
		{"bitmap too short", 9, 0, 1},
		{"offset pushes past the end", 8, 1, 1},
		{"negative offset", 1, -1, 1},
		{"no bitmap", 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			levels := slices.Concat(uvarintBytes(100<<1), []byte{1})
			if got, err := decodeValidity(levels, tc.n, make([]byte, tc.dstSize), tc.off); !isLevelsCorrupt(err) {
				t.Errorf("decodeValidity = %d, %v; want ErrCorrupt", got, err)
			}
		})
	}
}

func isLevelsCorrupt(err error) bool {
	return errors.Is(err, scanner.ErrCorrupt) && strings.HasPrefix(err.Error(), "parquet definition levels: ")
}

func FuzzDecodeValidity(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, version := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, pattern := range validityPatterns {
			for _, p := range arrowLevels(f, pattern.valid(rng, 1001), version)[:1] {
				f.Add(p.levels, uint16(len(p.valid)), uint8(3))
			}
		}
	}
	f.Add([]byte{3 << 1, 0, 1<<1 | 1, 0b10110101}, uint16(11), uint8(13))
	f.Fuzz(func(t *testing.T, levels []byte, n16 uint16, off8 uint8) {
		n, off := int(n16), int(off8%64)
		nulls, err := countNulls(levels, n)
		if err != nil && !isLevelsCorrupt(err) {
			t.Fatalf("countNulls: %v is not ErrCorrupt", err)
		}
		for _, guard := range []byte{0x00, 0xff} {
			dst := make([]byte, bitutil.BytesForBits(int64(off+n))+1)
			for i := range dst {
				dst[i] = guard
			}
			got, err2 := decodeValidity(levels, n, dst, off)
			if (err == nil) != (err2 == nil) {
				t.Fatalf("countNulls: %v; decodeValidity: %v", err, err2)
			}
			if err2 != nil {
				if !isLevelsCorrupt(err2) {
					t.Fatalf("decodeValidity: %v is not ErrCorrupt", err2)
				}
				continue
			}
			if got != nulls {
				t.Fatalf("countNulls %d, decodeValidity %d", nulls, got)
			}
			valid := validityOf(n, func(i int) bool { return bitutil.BitIsSet(dst, off+i) })
			if nullsIn(valid) != nulls {
				t.Fatalf("%d nulls reported, %d written", nulls, nullsIn(valid))
			}
			checkValidity(t, dst, off, valid, guard) // and nothing outside
		}
	})
}

func BenchmarkDecodeValidity(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, pattern := range validityPatterns {
		pages := arrowLevels(b, pattern.valid(rng, 4093), parquet.DataPageV2)
		b.Run(pattern.name, func(b *testing.B) {
			p := pages[0]
			dst := make([]byte, bitutil.BytesForBits(int64(len(p.valid))+3))
			b.SetBytes(int64(len(p.levels)))
			for b.Loop() {
				if _, err := decodeValidity(p.levels, len(p.valid), dst, 3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// unpackLevelsNaive is unpackLevels a bit at a time: the reference.
func unpackLevelsNaive(src []byte, bitWidth int, maxLevel int16, dst []int16) error {
	over := false
	for i := range dst {
		v := 0
		for j := range bitWidth {
			bit := i*bitWidth + j
			if bit/8 < len(src) && src[bit/8]>>(bit%8)&1 != 0 {
				v |= 1 << j
			}
		}
		over = over || v > int(maxLevel)
		dst[i] = int16(v)
	}
	if over {
		return corruptLevels("level above the maximum %d", maxLevel)
	}
	return nil
}

// checkUnpackLevels compares unpackLevels with the reference on src.
func checkUnpackLevels(t *testing.T, src []byte, bitWidth int, maxLevel int16, n int) {
	t.Helper()
	got, want := make([]int16, n), make([]int16, n)
	err := unpackLevels(src, bitWidth, maxLevel, got)
	werr := unpackLevelsNaive(src, bitWidth, maxLevel, want)
	if (err == nil) != (werr == nil) {
		t.Fatalf("width %d max %d n %d: error %v, want %v", bitWidth, maxLevel, n, err, werr)
	}
	if err == nil && !slices.Equal(got, want) {
		t.Fatalf("width %d max %d n %d:\n got %v\nwant %v", bitWidth, maxLevel, n, got, want)
	}
}

// TestUnpackLevelsMatchesNaive: every bit width, with a maximum that
// fills it (the table and unchecked paths) and one below it (checked),
// any count against bytes short of it or not.
func TestUnpackLevelsMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for bw := 1; bw <= 16; bw++ {
		full := int16(1<<bw - 1)
		if bw == 16 {
			full = 1<<15 - 1
		}
		for _, maxLevel := range []int16{full, full / 2, 1} {
			for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 31, 64, 100} {
				for _, short := range []int{0, 1, 5} {
					src := make([]byte, max(0, (n*bw+7)/8-short))
					for i := range src {
						src[i] = byte(r.Uint32())
						if maxLevel != full && r.IntN(2) == 0 {
							src[i] &= 0x11 // mostly in range
						}
					}
					checkUnpackLevels(t, src, bw, maxLevel, n)
				}
			}
		}
	}
}

// FuzzUnpackLevels: any bytes, width, maximum and count give the
// reference's levels or its error.
func FuzzUnpackLevels(f *testing.F) {
	f.Add([]byte{0xa5, 0x3c, 0xff, 0x00, 0x81}, uint8(1), int16(1), uint8(40))
	f.Add([]byte{0xe4, 0x1b, 0x72}, uint8(2), int16(2), uint8(12))
	f.Add([]byte{0x88, 0xc6, 0xfa, 0x10, 0x22}, uint8(3), int16(7), uint8(13))
	f.Fuzz(func(t *testing.T, src []byte, width uint8, maxLevel int16, n uint8) {
		bw := int(width%16) + 1
		if maxLevel < 0 {
			maxLevel = -(maxLevel + 1)
		}
		checkUnpackLevels(t, src, bw, maxLevel, int(n))
	})
}
