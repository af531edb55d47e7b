package orc

// Fuzz targets for every decoder that reads bytes from a file. Run one
// with, e.g.:
//
//	go test ./scanner/orc/ -run '^$' -fuzz '^FuzzIntRLEv2$' -fuzztime 2m
//
// Crashers the fuzzer finds land in testdata/fuzz/<Target>/ and then run
// as regression cases with every plain `go test`.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// seedFiles are small examples covering every codec and the main
// encodings; larger files slow the fuzzer without adding coverage.
var seedFiles = []string{
	"TestOrcFile.test1.orc", "TestOrcFile.testUnionAndTimestamp.orc", "TestOrcFile.testTimestamp.orc",
	"TestOrcFile.testStringAndBinaryStatistics.orc", "TestOrcFile.testStripeLevelStats.orc",
	"TestOrcFile.testWithoutCompressionBlockSize.orc", "decimal64_v2.orc", "decimal64_v2_cplusplus.orc",
	"complextypes_iceberg.orc", "bad_bloom_filter_1.6.0.orc", "orc_no_format.orc", "version1999.orc",
	"encrypted/sample1.orc", "orc_split_elim_cpp.orc", "orc_split_elim_new.orc",
	"corrupt/missing_length_stream_in_string_dict.orc", "corrupt/negative_dict_entry_lengths.orc",
	"corrupt/stripe_footer_bad_column_encodings.orc", "TestOrcFile.testSargSkipPickupGroupWithoutIndexCPlusPlus.orc",
	"TestVectorOrcFile.testLzo.orc",
}

// seedDir returns the examples directory, or "" when absent (fuzzing then
// starts from the hand-made seeds only).
func seedDir() string {
	d := os.Getenv("SCAND_TESTDATA")
	if d == "" {
		d = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	d = filepath.Join(d, "orc-examples")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

// exampleStreams returns the decompressed data streams of the seed files
// with their encodings, to seed the RLE fuzzers with real runs.
func exampleStreams(tb testing.TB) (v1, v2, bytes [][]byte) {
	dir := seedDir()
	if dir == "" {
		return
	}
	for _, name := range seedFiles {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		f, err := Open(context.Background(), name, &memSource{data: data}, memory.DefaultAllocator)
		if err != nil {
			continue
		}
		for i := range f.ft.stripes {
			if f.loadFooters([]int{i}) != nil {
				break
			}
			sf := f.footers[i].Load()
			pos := f.ft.stripes[i].offset
			for _, st := range sf.streams {
				raw := data[pos : pos+st.length]
				pos += st.length
				b, err := readAll(f.newCodec(), raw, 1<<20)
				if err != nil || len(b) == 0 || len(b) > 4096 {
					continue
				}
				kind := f.ft.types[st.column].kind
				enc := sf.columns[st.column].kind
				switch {
				case st.kind == streamPresent || kind == kindByte || kind == kindBoolean || kind == kindUnion && st.kind == streamData:
					bytes = append(bytes, b)
				case st.kind == streamLength || st.kind == streamSecondary ||
					st.kind == streamData && (kind == kindInt || kind == kindLong || kind == kindShort || kind == kindDate || kind == kindTimestamp):
					if enc.isV2() {
						v2 = append(v2, b)
					} else {
						v1 = append(v1, b)
					}
				}
			}
		}
	}
	return
}

func FuzzByteRLE(f *testing.F) {
	f.Add([]byte{0x61, 0x00, 0xfe, 0x44, 0x45}, uint16(102))
	_, _, bs := exampleStreams(f)
	for _, b := range bs {
		f.Add(b, uint16(len(b)*8))
	}
	f.Fuzz(func(t *testing.T, data []byte, n uint16) {
		out := make([]byte, n)
		_ = newByteRLE(rawStream(data)).next(out)
		bools := make([]bool, n)
		_ = newBoolRLE(rawStream(data)).next(bools)
	})
}

func fuzzInt(f *testing.F, v2 bool) {
	f.Add([]byte{0x61, 0xff, 0x64}, true, uint16(100))
	f.Add([]byte{0x8e, 0x13, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0x70, 0x28, 0x32, 0x3c, 0x46, 0x50, 0x5a, 0x64, 0x6e, 0x78, 0x82, 0x8c, 0x96, 0xa0, 0xaa, 0xb4, 0xbe, 0xfc, 0xe8}, false, uint16(20))
	f.Add([]byte{0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46}, true, uint16(10))
	s1, s2, _ := exampleStreams(f)
	seeds := s1
	if v2 {
		seeds = s2
	}
	for _, b := range seeds {
		f.Add(b, true, uint16(len(b)))
		f.Add(b, false, uint16(len(b)*2))
	}
	f.Fuzz(func(t *testing.T, data []byte, signed bool, n uint16) {
		out := make([]int64, n)
		d := newIntDecoder(rawStream(data), v2, signed)
		// RLE v2 also decodes straight into int32 and int16: the same
		// values truncated, and the same errors.
		out32, out16 := make([]int32, n), make([]int16, n)
		d32, d16 := newIntDecoder(rawStream(data), v2, signed), newIntDecoder(rawStream(data), v2, signed)
		// Read in uneven pieces to exercise run boundaries (and pieces of
		// 512 and more, which runs decode into directly).
		for at := 0; at < len(out); {
			k := min(len(out)-at, 1+(len(out)-at)%37)
			if (len(out)-at)%5 == 0 {
				k = min(len(out)-at, 600)
			}
			err := d.next(out[at : at+k])
			if !v2 {
				if err != nil {
					return
				}
				at += k
				continue
			}
			err32 := readNarrow(d32, out32[at:at+k])
			err16 := readNarrow(d16, out16[at:at+k])
			if (err == nil) != (err32 == nil) || (err == nil) != (err16 == nil) {
				t.Fatalf("values %d..%d: int64 error %v, int32 error %v, int16 error %v", at, at+k, err, err32, err16)
			}
			if err != nil {
				return
			}
			for i := at; i < at+k; i++ {
				if out32[i] != int32(out[i]) || out16[i] != int16(out[i]) {
					t.Fatalf("value %d: int64 %d, int32 %d, int16 %d", i, out[i], out32[i], out16[i])
				}
			}
			at += k
		}
	})
}

func FuzzIntRLEv1(f *testing.F) { fuzzInt(f, false) }

func FuzzIntRLEv2(f *testing.F) { fuzzInt(f, true) }

// FuzzDecompress feeds chunked streams to each codec.
func FuzzDecompress(f *testing.F) {
	f.Add(uint8(compZlib), []byte{0x0b, 0x00, 0x00, 0x62, 0x60, 0x60, 0x00, 0x00})
	f.Add(uint8(compSnappy), []byte{0x0b, 0x00, 0x00, 0x04, 0x0c, 0x61, 0x62, 0x63})
	f.Add(uint8(compLZ4), []byte{0x09, 0x00, 0x00, 0x40, 0x61, 0x62, 0x63, 0x64})
	f.Add(uint8(compZstd), []byte{0x19, 0x00, 0x00, 0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x03, 0x19, 0x00, 0x00, 0x61, 0x62, 0x63})
	f.Add(uint8(compNone), []byte{0x07, 0x00, 0x00, 0x61, 0x62, 0x63})
	f.Add(uint8(compLZO), []byte{0x12, 0x00, 0x00, 0x16, 0x61, 0x62, 0x63, 0x64, 0x65, 0x11, 0x00, 0x00})
	if dir := seedDir(); dir != "" {
		for _, name := range seedFiles {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || len(data) < 4 {
				continue
			}
			ps, err := parsePostScript(data[len(data)-1-int(data[len(data)-1]) : len(data)-1])
			if err != nil || ps.footerLength > uint64(len(data)) {
				continue
			}
			end := len(data) - 1 - int(data[len(data)-1])
			if int(ps.footerLength) <= end {
				f.Add(uint8(ps.compression), data[end-int(ps.footerLength):end])
			}
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		c := newCodec(compressionKind(kind%6), 1<<16)
		_, _ = readAll(c, data, 1<<20)
		s := newStream(c, data)
		buf := make([]byte, 100)
		for s.readFull(buf) == nil {
		}
	})
}

// FuzzOpen parses and reads whole files: postscript, footer, metadata,
// stripe footers and every column decoder.
func FuzzOpen(f *testing.F) {
	if dir := seedDir(); dir != "" {
		for _, name := range seedFiles {
			if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(data) < 64<<10 {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("ORC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		file, err := Open(context.Background(), "fuzz", &memSource{data: data}, memory.DefaultAllocator)
		if err != nil {
			checkClassified(t, err)
			return
		}
		checkStatsInvariants(t, file)
		p, err := file.Project(nil)
		if err != nil {
			checkClassified(t, err)
			return
		}
		err = file.Read(context.Background(), p, scanner.ReadOptions{BatchRows: 1000, Mem: mem}, func(rec arrow.RecordBatch) error {
			rec.Release()
			return nil
		})
		if err != nil {
			checkClassified(t, err)
		}
		mem.AssertSize(t, 0)
	})
}

func checkClassified(t *testing.T, err error) {
	if strings.Contains(err.Error(), "decoder failed") {
		t.Fatalf("panic: %v", err)
	}
	if !errors.Is(err, scanner.ErrCorrupt) && !errors.Is(err, scanner.ErrUnsupported) && !errors.Is(err, scanner.ErrNotColumnar) {
		t.Fatalf("unclassified error: %v", err)
	}
}
