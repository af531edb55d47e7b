package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// encodeDelta is a plain DELTA_BINARY_PACKED encoder (blocks of 128
// values in 4 miniblocks, as Arrow and parquet-mr write), the oracle the
// decoder is checked against.
func encodeDelta(vals []int64, width int) []byte {
	const block, minis = 128, 4
	out := binary.AppendUvarint(nil, block)
	out = binary.AppendUvarint(out, minis)
	out = binary.AppendUvarint(out, uint64(len(vals)))
	zig := func(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }
	if len(vals) == 0 {
		return binary.AppendUvarint(out, 0)
	}
	out = binary.AppendUvarint(out, zig(vals[0]))
	wrap := func(v uint64) uint64 {
		if width == 32 {
			return uint64(uint32(v))
		}
		return v
	}
	for i := 1; i < len(vals); i += block {
		deltas := make([]int64, 0, block)
		for j := i; j < min(i+block, len(vals)); j++ {
			d := vals[j] - vals[j-1]
			if width == 32 {
				d = int64(int32(vals[j]) - int32(vals[j-1]))
			}
			deltas = append(deltas, d)
		}
		minDelta := slices.Min(deltas)
		out = binary.AppendUvarint(out, zig(minDelta))
		rel := make([]uint64, block)
		for j, d := range deltas {
			rel[j] = wrap(uint64(d - minDelta))
		}
		var widths [minis]int
		for m := range minis {
			for _, v := range rel[m*32 : (m+1)*32] {
				widths[m] = max(widths[m], bits.Len64(v))
			}
			out = append(out, byte(widths[m]))
		}
		for m := range minis {
			if m*32 >= len(deltas) {
				break
			}
			var acc, nbits uint64
			for _, v := range rel[m*32 : (m+1)*32] {
				for b := 0; b < widths[m]; b++ {
					acc |= (v >> b & 1) << nbits
					if nbits++; nbits == 8 {
						out, acc, nbits = append(out, byte(acc)), 0, 0
					}
				}
			}
		}
	}
	return out
}

func TestDecodeDeltaInts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cases := map[string][]int64{
		"empty":      {},
		"one":        {42},
		"run":        {1, 2, 3, 4, 5},
		"block-edge": make([]int64, 129),
		"negative":   {-1, -1 << 40, 1 << 40, 0, -7},
		"extremes":   {-1 << 63, 1<<63 - 1, -1 << 63, 0},
	}
	random := make([]int64, 1000)
	for i := range random {
		random[i] = r.Int64() >> r.IntN(64)
	}
	cases["random"] = random
	for name, vals := range cases {
		for _, width := range []int{4, 8} {
			want := slices.Clone(vals)
			if width == 4 {
				for i := range want {
					want[i] = int64(int32(want[i]))
				}
			}
			out := make([]byte, width*len(vals))
			if err := decodeDeltaInts(encodeDelta(want, 8*width), len(vals), width, out); err != nil {
				t.Fatalf("%s/%d: %v", name, width, err)
			}
			for i, w := range want {
				got := int64(binary.LittleEndian.Uint64(append(out[i*width:(i+1)*width:(i+1)*width], make([]byte, 8-width)...)))
				if width == 4 {
					got = int64(int32(got))
				}
				if got != w {
					t.Fatalf("%s/%d: value %d = %d, want %d", name, width, i, got, w)
				}
			}
		}
	}
}

func TestDecodeDeltaCorrupt(t *testing.T) {
	good := encodeDelta([]int64{1, 5, 9, 200, 3}, 64)
	header := func(block, minis, total uint64) []byte {
		b := binary.AppendUvarint(nil, block)
		b = binary.AppendUvarint(b, minis)
		b = binary.AppendUvarint(b, total)
		return binary.AppendUvarint(b, 0)
	}
	cases := map[string]struct {
		b []byte
		n int
	}{
		"empty":            {nil, 1},
		"truncated":        {good[:len(good)-1], 5},
		"count mismatch":   {good, 4},
		"block not of 128": {header(100, 4, 2), 2},
		"minis not of 32":  {header(128, 3, 2), 2},
		"huge block":       {header(1<<30, 4, 2), 2},
		"huge total":       {header(128, 4, 1<<40), 1},
		"wide miniblock":   {append(append(header(128, 4, 2), 0), 65, 0, 0, 0), 2},
		"varint overflow":  {bytes.Repeat([]byte{0xff}, 12), 1},
	}
	for name, c := range cases {
		err := decodeDeltaInts(c.b, c.n, 8, make([]byte, 8*c.n))
		if !errors.Is(err, scanner.ErrCorrupt) {
			t.Errorf("%s: %v, want a corrupt-data error", name, err)
		}
	}
}

// unboundedAlloc allocates whatever is asked, up to a limit.
func unboundedAlloc(n int64) ([]byte, error) {
	if n > 1<<26 {
		return nil, errors.New("too big")
	}
	return make([]byte, n), nil
}

func TestDecodeDeltaByteArrays(t *testing.T) {
	lengths := func(v ...int64) []byte { return encodeDelta(v, 32) }
	// "ab", "abc", "b": lengths 2, 3, 1.
	dlba := append(lengths(2, 3, 1), "ababcb"...)
	out, err := decodeDeltaLength(dlba, make([]uint32, 3), unboundedAlloc)
	want := []byte("\x02\x00\x00\x00ab\x03\x00\x00\x00abc\x01\x00\x00\x00b")
	if err != nil || !bytes.Equal(out, want) {
		t.Errorf("DELTA_LENGTH_BYTE_ARRAY: %q, %v; want %q", out, err, want)
	}
	// The same values as prefix 0,2,0 and suffixes "ab","c","b".
	dba := append(append(lengths(0, 2, 0), lengths(2, 1, 1)...), "abcb"...)
	out, err = decodeDeltaByteArray(dba, 0, make([]uint32, 3), make([]uint32, 3), unboundedAlloc)
	if err != nil || !bytes.Equal(out, want) {
		t.Errorf("DELTA_BYTE_ARRAY: %q, %v; want %q", out, err, want)
	}
	corrupt := map[string][]byte{
		"prefix longer than the last value": append(append(lengths(0, 3, 0), lengths(2, 1, 1)...), "abcb"...),
		"suffixes past the page":            append(append(lengths(0, 2, 0), lengths(2, 1, 9)...), "abcb"...),
		"negative length":                   append(append(lengths(0, -1, 0), lengths(2, 1, 1)...), "abcb"...),
	}
	for name, b := range corrupt {
		if _, err := decodeDeltaByteArray(b, 0, make([]uint32, 3), make([]uint32, 3), unboundedAlloc); !errors.Is(err, scanner.ErrCorrupt) {
			t.Errorf("%s: %v, want a corrupt-data error", name, err)
		}
	}
	// 4 values of 1 MiB sharing prefixes: fine.
	big := append(append(lengths(0, 1<<20, 1<<20, 1<<20), lengths(1<<20, 0, 0, 0)...), make([]byte, 1<<20)...)
	if _, err := decodeDeltaByteArray(big, 0, make([]uint32, 4), make([]uint32, 4), unboundedAlloc); err != nil {
		t.Errorf("4 values of 1 MiB: %v", err)
	}
	// 200 of them: past maxExpandedPage, refused before allocating.
	many := make([]int64, 200)
	pre := make([]int64, 200)
	many[0] = 1 << 20
	for i := 1; i < len(pre); i++ {
		pre[i] = 1 << 20
	}
	huge := append(append(lengths(pre...), lengths(many...)...), make([]byte, 1<<20)...)
	if _, err := decodeDeltaByteArray(huge, 0, make([]uint32, 200), make([]uint32, 200), unboundedAlloc); !errors.Is(err, scanner.ErrCorrupt) {
		t.Errorf("200 MiB from 1 MiB: %v, want a corrupt-data error", err)
	}
}

func TestDecodeByteStreamSplit(t *testing.T) {
	// Two 4-byte values 0x04030201, 0x08070605.
	body := []byte{1, 5, 2, 6, 3, 7, 4, 8}
	out := make([]byte, 8)
	if err := decodeByteStreamSplit(body, 2, 4, out); err != nil || !bytes.Equal(out, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("got %v, %v", out, err)
	}
	for _, c := range []struct{ n, w, len int }{{3, 4, 8}, {2, 4, 7}, {1, 0, 0}} {
		if err := decodeByteStreamSplit(make([]byte, c.len), c.n, c.w, make([]byte, 64)); !errors.Is(err, scanner.ErrCorrupt) {
			t.Errorf("%d values of %d bytes in %d: %v", c.n, c.w, c.len, err)
		}
	}
}

// valuePages returns the bodies of the data pages of leaf column leaf of
// an uncompressed file of V2 pages, the values section of each.
func valuePages(t testing.TB, data []byte, leaf int) [][]byte {
	t.Helper()
	f, err := Open(t.Context(), "seed.parquet", memSource{bytes.NewReader(data)}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cc, err := f.pf.MetaData().RowGroup(0).ColumnChunk(leaf)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	chunk := data[cc.DataPageOffset() : cc.DataPageOffset()+cc.TotalCompressedSize()]
	for pos := 0; pos < len(chunk); {
		h, n, err := parsePageHeader(chunk[pos:])
		if err != nil {
			t.Fatal(err)
		}
		body := chunk[pos+n : pos+n+int(h.compressedSize)]
		if h.typ == pageTypeDataPageV2 {
			out = append(out, body[h.defLevelsLen+h.repLevelsLen:])
		}
		pos += n + int(h.compressedSize)
	}
	return out
}

// seedPages writes rec with encoding enc for every column, uncompressed,
// in V2 pages, and returns the values section of column col's pages.
func seedPages(t testing.TB, rec arrow.RecordBatch, col int, enc parquet.Encoding) [][]byte {
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithEncoding(enc),
		parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDataPageSize(2<<10))
	return valuePages(t, writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties()), col)
}

// seedRecord is one required column of typ holding rows values.
func seedRecord(typ arrow.DataType, rows int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "c", Type: typ}}, nil))
	defer b.Release()
	r := rand.New(rand.NewPCG(7, 8))
	for i := range rows {
		switch f := b.Field(0).(type) {
		case *array.Int32Builder:
			f.Append(int32(i*3 + r.IntN(10)))
		case *array.Int64Builder:
			f.Append(int64(i)<<20 - r.Int64N(1<<30))
		case *array.Float64Builder:
			f.Append(r.Float64())
		case *array.StringBuilder:
			f.Append("key/" + string(rune('a'+i%26)) + "/" + string(rune('a'+r.IntN(26))))
		case *array.BooleanBuilder:
			f.Append(i%5 < 2)
		}
	}
	return b.NewRecordBatch()
}

func FuzzDecodeDeltaInts(f *testing.F) {
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64} {
		rec := seedRecord(typ, 500)
		for _, p := range seedPages(f, rec, 0, parquet.Encodings.DeltaBinaryPacked) {
			f.Add(p, uint16(500), typ.ID() == arrow.INT64)
		}
		rec.Release()
	}
	f.Add(encodeDelta([]int64{1, 2, 3}, 64), uint16(3), true)
	f.Fuzz(func(t *testing.T, b []byte, n uint16, wide bool) {
		width := 4
		if wide {
			width = 8
		}
		out := make([]byte, width*int(n))
		if err := decodeDeltaInts(b, int(n), width, out); err != nil && !errors.Is(err, scanner.ErrCorrupt) {
			t.Fatalf("error %v is not a corrupt-data error", err)
		}
	})
}

func FuzzDecodeDeltaByteArrays(f *testing.F) {
	rec := seedRecord(arrow.BinaryTypes.String, 300)
	defer rec.Release()
	for _, enc := range []parquet.Encoding{parquet.Encodings.DeltaLengthByteArray, parquet.Encodings.DeltaByteArray} {
		for _, p := range seedPages(f, rec, 0, enc) {
			f.Add(p, uint16(300), enc == parquet.Encodings.DeltaByteArray, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint16, prefixed bool, fixed uint8) {
		var out []byte
		var err error
		if prefixed {
			out, err = decodeDeltaByteArray(b, int(fixed), make([]uint32, n), make([]uint32, n), unboundedAlloc)
		} else {
			out, err = decodeDeltaLength(b, make([]uint32, n), unboundedAlloc)
		}
		if err != nil {
			if !errors.Is(err, scanner.ErrCorrupt) && err.Error() != "too big" {
				t.Fatalf("error %v is not a corrupt-data error", err)
			}
			return
		}
		if prefixed && fixed > 0 && len(out) != int(n)*int(fixed) {
			t.Fatalf("%d values of %d bytes decoded to %d bytes", n, fixed, len(out))
		}
	})
}

func FuzzDecodeByteStreamSplit(f *testing.F) {
	rec := seedRecord(arrow.PrimitiveTypes.Float64, 300)
	defer rec.Release()
	for _, p := range seedPages(f, rec, 0, parquet.Encodings.ByteStreamSplit) {
		f.Add(p, uint16(len(p)/8), uint8(8))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint16, width uint8) {
		out := make([]byte, int(n)*int(width))
		err := decodeByteStreamSplit(b, int(n), int(width), out)
		if err != nil && !errors.Is(err, scanner.ErrCorrupt) {
			t.Fatalf("error %v is not a corrupt-data error", err)
		}
		if err == nil && width > 0 && len(b) == int(n)*int(width) {
			// Splitting again gives the page back.
			for k := range int(width) {
				for i := range int(n) {
					if b[k*int(n)+i] != out[i*int(width)+k] {
						t.Fatalf("byte %d of value %d differs", k, i)
					}
				}
			}
		}
	})
}

func FuzzDecodeRLEBools(f *testing.F) {
	rec := seedRecord(arrow.FixedWidthTypes.Boolean, 1000)
	defer rec.Release()
	for _, p := range seedPages(f, rec, 0, parquet.Encodings.RLE) {
		f.Add(p, uint16(1000))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint16) {
		out := make([]byte, bitutilBytes(int(n)))
		if err := decodeRLEBools(b, int(n), out); err != nil && !errors.Is(err, scanner.ErrCorrupt) {
			t.Fatalf("error %v is not a corrupt-data error", err)
		}
	})
}

func bitutilBytes(n int) int { return (n + 7) / 8 }

func TestSeedPagesUseTheirEncoding(t *testing.T) {
	for _, c := range []struct {
		typ arrow.DataType
		enc parquet.Encoding
	}{
		{arrow.PrimitiveTypes.Int64, parquet.Encodings.DeltaBinaryPacked},
		{arrow.BinaryTypes.String, parquet.Encodings.DeltaByteArray},
		{arrow.PrimitiveTypes.Float64, parquet.Encodings.ByteStreamSplit},
		{arrow.FixedWidthTypes.Boolean, parquet.Encodings.RLE},
	} {
		rec := seedRecord(c.typ, 300)
		if n := len(seedPages(t, rec, 0, c.enc)); n == 0 {
			t.Errorf("%s %s: no seed pages", c.typ, c.enc)
		}
		rec.Release()
	}
}
