package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// headerTestRows is split into row groups of headerTestGroupRows; small
// pages then give several pages per chunk.
const (
	headerTestRows      = 2500
	headerTestGroupRows = 1000
)

// headerTestRecord has the flat column kinds the native reader handles:
// nullable and required fixed-width values and nullable byte arrays, with
// nulls in runs and scattered.
func headerTestRecord() arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "r", Type: arrow.PrimitiveTypes.Int32},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	n := b.Field(0).(*array.Int64Builder)
	r := b.Field(1).(*array.Int32Builder)
	s := b.Field(2).(*array.StringBuilder)
	for i := range headerTestRows {
		if i%7 == 0 || (i >= 300 && i < 700) {
			n.AppendNull()
		} else {
			n.Append(int64(rng.IntN(50))) // few distinct values: the dictionary stays
		}
		r.Append(int32(i))
		if rng.IntN(10) == 0 {
			s.AppendNull()
		} else {
			s.Append(strings.Repeat("x", rng.IntN(40)))
		}
	}
	return b.NewRecordBatch()
}

// writeTestTable writes rec with props in row groups of headerTestGroupRows.
func writeTestTable(tb testing.TB, rec arrow.RecordBatch, props *parquet.WriterProperties) []byte {
	tb.Helper()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, headerTestGroupRows, props, pqarrow.DefaultWriterProps()); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// walkedPage is one page of a column chunk as parsePageHeader splits it.
type walkedPage struct {
	h    pageHeader
	raw  []byte // the header bytes
	body []byte
}

// chunkStart is where a column chunk's first page starts. As in arrow-go,
// a dictionary_page_offset of 0 means none: some writers set it so.
func chunkStart(cc *metadata.ColumnChunkMetaData) int64 {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	return start
}

// walkChunk splits a column chunk into pages, which must cover it exactly.
func walkChunk(tb testing.TB, chunk []byte) []walkedPage {
	tb.Helper()
	var pages []walkedPage
	for pos := 0; pos < len(chunk); {
		h, n, err := parsePageHeader(chunk[pos:])
		if err != nil {
			tb.Fatalf("page %d at byte %d of %d: %v", len(pages), pos, len(chunk), err)
		}
		if int(h.compressedSize) > len(chunk)-pos-n {
			tb.Fatalf("page %d at byte %d: %d-byte header and %d-byte body overrun the %d-byte chunk", len(pages), pos, n, h.compressedSize, len(chunk))
		}
		pages = append(pages, walkedPage{h: h, raw: chunk[pos : pos+n], body: chunk[pos+n : pos+n+int(h.compressedSize)]})
		pos += n + int(h.compressedSize)
	}
	return pages
}

// forEachChunk calls fn with the bytes of every column chunk in the file.
func forEachChunk(tb testing.TB, data []byte, fn func(rdr *file.Reader, rg, col int, cc *metadata.ColumnChunkMetaData, chunk []byte)) {
	tb.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	defer rdr.Close()
	for rg := range rdr.NumRowGroups() {
		md := rdr.MetaData().RowGroup(rg)
		for col := range md.NumColumns() {
			cc, err := md.ColumnChunk(col)
			if err != nil {
				tb.Fatal(err)
			}
			start, length := chunkStart(cc), cc.TotalCompressedSize()
			if start < 0 || length < 0 || start > int64(len(data))-length {
				tb.Fatalf("row group %d column %d: chunk [%d, +%d) outside the %d-byte file", rg, col, start, length, len(data))
			}
			fn(rdr, rg, col, cc, data[start:start+length])
		}
	}
}

// arrowPages returns the pages arrow-go's own page reader finds in a chunk.
func arrowPages(rdr *file.Reader, rg, col int) ([]pageSummary, error) {
	pr, err := rdr.RowGroup(rg).GetColumnPageReader(col)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	var pages []pageSummary
	for pr.Next() {
		pages = append(pages, summarizePage(pr.Page()))
	}
	return pages, pr.Err()
}

// summarizePage copies what the comparison needs out of a page, which arrow-go
// recycles on the next call to Next.
func summarizePage(p file.Page) pageSummary {
	s := pageSummary{typ: int32(p.Type()), numValues: p.NumValues(), encoding: int32(p.Encoding())}
	switch p := p.(type) {
	case *file.DataPageV1:
		s.defEncoding, s.repEncoding = int32(p.DefinitionLevelEncoding()), int32(p.RepetitionLevelEncoding())
		s.uncompressedSize, s.stats = p.UncompressedSize(), p.Statistics().HasNullCount || p.Statistics().HasMin
	case *file.DataPageV2:
		s.uncompressedSize, s.stats = p.UncompressedSize(), p.Statistics().HasNullCount || p.Statistics().HasMin
		s.numNulls, s.numRows, s.isCompressed = p.NumNulls(), p.NumRows(), p.IsCompressed()
		s.defLevelsLen, s.repLevelsLen = p.DefinitionLevelByteLen(), p.RepetitionLevelByteLen()
	}
	return s
}

// pageSummary holds a page's header fields as arrow-go decoded them.
type pageSummary struct {
	typ, numValues, encoding, defEncoding, repEncoding, uncompressedSize,
	numNulls, numRows, defLevelsLen, repLevelsLen int32
	isCompressed, stats bool
}

// sameAsArrow reports how h differs from what arrow-go decoded for the page.
func sameAsArrow(h pageHeader, a pageSummary) error {
	got := pageSummary{typ: h.typ, numValues: h.numValues, encoding: h.encoding}
	switch h.typ {
	case pageTypeDataPage:
		got.defEncoding, got.repEncoding, got.uncompressedSize = h.defEncoding, h.repEncoding, h.uncompressedSize
	case pageTypeDataPageV2:
		got.uncompressedSize, got.numNulls, got.numRows, got.isCompressed = h.uncompressedSize, h.numNulls, h.numRows, h.isCompressed
		got.defLevelsLen, got.repLevelsLen = h.defLevelsLen, h.repLevelsLen
	}
	got.stats = a.stats // not decoded here
	if got != a {
		return fmt.Errorf("parsed %+v, arrow-go %+v", got, a)
	}
	return nil
}

func TestParsePageHeaderArrowWritten(t *testing.T) {
	rec := headerTestRecord()
	defer rec.Release()
	for _, version := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, stats := range []bool{false, true} {
			for _, dict := range []bool{false, true} {
				for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
					name := fmt.Sprintf("v%d/stats=%t/dict=%t/%s", version+1, stats, dict, codec)
					t.Run(name, func(t *testing.T) {
						props := parquet.NewWriterProperties(parquet.WithDataPageVersion(version), parquet.WithStats(stats),
							parquet.WithDictionaryDefault(dict), parquet.WithCompression(codec),
							parquet.WithDataPageSize(512), parquet.WithBatchSize(128))
						checkArrowWritten(t, rec, writeTestTable(t, rec, props), version, stats, dict, codec)
					})
				}
			}
		}
	}
}

func checkArrowWritten(t *testing.T, rec arrow.RecordBatch, data []byte, version parquet.DataPageVersion, stats, dict bool, codec compress.Compression) {
	dataType := int32(pageTypeDataPage)
	if version == parquet.DataPageV2 {
		dataType = pageTypeDataPageV2
	}
	forEachChunk(t, data, func(rdr *file.Reader, rg, col int, cc *metadata.ColumnChunkMetaData, chunk []byte) {
		where := fmt.Sprintf("row group %d column %d", rg, col)
		pages := walkChunk(t, chunk)
		want, err := arrowPages(rdr, rg, col)
		if err != nil {
			t.Fatalf("%s: arrow-go: %v", where, err)
		}
		if len(pages) != len(want) {
			t.Fatalf("%s: %d pages, arrow-go reads %d", where, len(pages), len(want))
		}
		rows := rdr.MetaData().RowGroup(rg).NumRows()
		firstRow := int64(rg) * headerTestGroupRows
		var values, nulls, uncompressed int64
		for i, p := range pages {
			h := p.h
			if err := sameAsArrow(h, want[i]); err != nil {
				t.Errorf("%s page %d: %v", where, i, err)
			}
			uncompressed += int64(len(p.raw)) + int64(h.uncompressedSize)
			if codec == compress.Codecs.Uncompressed && h.compressedSize != h.uncompressedSize {
				t.Errorf("%s page %d: uncompressed codec, sizes %d and %d", where, i, h.compressedSize, h.uncompressedSize)
			}
			if i == 0 && cc.HasDictionaryPage() {
				if h.typ != pageTypeDictionaryPage || h.hasData || h.numValues <= 0 {
					t.Errorf("%s: first page %+v, want a dictionary page", where, h)
				}
				continue
			}
			if h.typ != dataType || !h.hasData {
				t.Fatalf("%s page %d: %+v, want a data page of type %d", where, i, h, dataType)
			}
			if want[i].stats != stats {
				t.Errorf("%s page %d: statistics present %t, written %t", where, i, !stats, stats)
			}
			values += int64(h.numValues)
			nulls += int64(h.numNulls)
			if version == parquet.DataPageV2 {
				if h.numRows != h.numValues || h.repLevelsLen != 0 || h.isCompressed != (codec != compress.Codecs.Uncompressed) {
					t.Errorf("%s page %d: %+v", where, i, h)
				}
			}
		}
		if dict != cc.HasDictionaryPage() {
			t.Errorf("%s: dictionary page %t, written with dictionary %t", where, cc.HasDictionaryPage(), dict)
		}
		if values != rows || values != cc.NumValues() {
			t.Errorf("%s: pages hold %d values, row group %d rows, chunk %d values", where, values, rows, cc.NumValues())
		}
		if uncompressed != cc.TotalUncompressedSize() {
			t.Errorf("%s: headers and uncompressed pages add to %d bytes, metadata says %d", where, uncompressed, cc.TotalUncompressedSize())
		}
		// arrow-go takes num_nulls from the page statistics: without them
		// it writes 0.
		if version == parquet.DataPageV2 && stats {
			part := array.NewSlice(rec.Column(col), firstRow, firstRow+rows)
			defer part.Release()
			if want := int64(part.NullN()); nulls != want {
				t.Errorf("%s: pages count %d nulls, the data has %d", where, nulls, want)
			}
		}
	})
}

// foreignParquetFiles lists the Parquet files written by other
// implementations in the shared test data ($SCAND_TESTDATA or
// ../shared/testdata beside the repository).
func foreignParquetFiles(tb testing.TB) []string {
	tb.Helper()
	dir := os.Getenv("SCAND_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	var names []string
	for _, pattern := range []string{"parquet-testing/*.parquet", "arrow-testing/*.parquet"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		names = append(names, m...)
	}
	if len(names) == 0 {
		tb.Skipf("no Parquet files under %s (set SCAND_TESTDATA)", dir)
	}
	return names
}

// Headers from parquet-mr, parquet-cpp, parquet-rs, Impala and others carry
// fields arrow-go does not write (crc, page statistics of every kind): they
// must split their chunks exactly and agree with arrow-go's decoding.
func TestParsePageHeaderForeignFiles(t *testing.T) {
	for _, name := range foreignParquetFiles(t) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		md, err := fileMetaData(data)
		if err != nil {
			t.Logf("%s: %v", filepath.Base(name), err)
			continue // encrypted footers and the like: not a header question
		}
		// PARQUET-816: old parquet-mr left the dictionary page header out of
		// the chunk length, so the pages overrun it.
		old := md.WriterVersion().LessThan(metadata.Parquet816FixedVersion)
		t.Run(filepath.Base(name), func(t *testing.T) {
			if old {
				t.Skip("written before PARQUET-816: chunk lengths are short")
			}
			for rg := range md.NumRowGroups() {
				for col := range md.RowGroup(rg).NumColumns() {
					if cc, _ := md.RowGroup(rg).ColumnChunk(col); cc == nil || cc.CryptoMetadata() != nil {
						t.Skip("encrypted column chunks")
					}
				}
			}
			forEachChunk(t, data, func(rdr *file.Reader, rg, col int, cc *metadata.ColumnChunkMetaData, chunk []byte) {
				if cc.NumValues() == 0 {
					return // some writers leave the offsets of empty chunks at 0
				}
				pages := walkChunk(t, chunk)
				var values int64
				var known []walkedPage // the pages arrow-go returns: it skips index pages
				for _, p := range pages {
					switch p.h.typ {
					case pageTypeDataPage, pageTypeDataPageV2:
						values += int64(p.h.numValues)
						fallthrough
					case pageTypeDictionaryPage:
						known = append(known, p)
					}
				}
				if values != cc.NumValues() {
					t.Errorf("row group %d column %d: pages hold %d values, metadata %d", rg, col, values, cc.NumValues())
				}
				want, err := arrowPages(rdr, rg, col)
				if err != nil {
					t.Logf("row group %d column %d: arrow-go: %v", rg, col, err)
					return
				}
				// arrow-go stops once it has seen the chunk's values, so it may
				// return fewer (empty trailing) pages.
				if len(want) > len(known) {
					t.Fatalf("row group %d column %d: %d pages, arrow-go reads %d", rg, col, len(known), len(want))
				}
				for i := range want {
					if err := sameAsArrow(known[i].h, want[i]); err != nil {
						t.Errorf("row group %d column %d page %d: %v", rg, col, i, err)
					}
				}
			})
		})
	}
}

// fileMetaData reads a file's footer; arrow-go panics on some foreign ones.
func fileMetaData(data []byte) (md *metadata.FileMetaData, err error) {
	defer scanner.Recover(&err, "footer")
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	return rdr.MetaData(), nil
}

// realHeaders returns headers arrow-go wrote: dictionary, v1 and v2 pages,
// with statistics of fixed-width and byte-array columns.
func realHeaders(tb testing.TB) [][]byte {
	tb.Helper()
	rec := headerTestRecord()
	defer rec.Release()
	var out [][]byte
	for _, version := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		props := parquet.NewWriterProperties(parquet.WithDataPageVersion(version), parquet.WithCompression(compress.Codecs.Snappy))
		forEachChunk(tb, writeTestTable(tb, rec, props), func(_ *file.Reader, rg, _ int, _ *metadata.ColumnChunkMetaData, chunk []byte) {
			if rg > 0 {
				return
			}
			for _, p := range walkChunk(tb, chunk) {
				out = append(out, p.raw)
			}
		})
	}
	return out
}

// Every proper prefix of a real header is a truncated header.
func TestParsePageHeaderTruncated(t *testing.T) {
	for _, raw := range realHeaders(t) {
		if _, n, err := parsePageHeader(raw); err != nil || n != len(raw) {
			t.Fatalf("whole header: n=%d of %d, %v", n, len(raw), err)
		}
		for i := range raw {
			if h, n, err := parsePageHeader(raw[:i]); !errors.Is(err, scanner.ErrCorrupt) {
				t.Errorf("header %x cut to %d bytes: %+v, %d, %v", raw, i, h, n, err)
			}
		}
	}
}

// Hand-made compact protocol, for headers no writer produces.

// fieldHdr is a short-form field header: the id as a delta from the previous one.
func fieldHdr(delta int, typ byte) []byte { return []byte{byte(delta<<4) | typ} }

func uvarintBytes(u uint64) []byte {
	var b []byte
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

func zigzagBytes(v int64) []byte { return uvarintBytes(uint64(v<<1) ^ uint64(v>>63)) }

// i32Field is a short-form i32 field.
func i32Field(delta int, v int32) []byte {
	return slices.Concat(fieldHdr(delta, tcI32), zigzagBytes(int64(v)))
}

// structField is a short-form struct field holding fields.
func structField(delta int, fields ...[]byte) []byte {
	return slices.Concat(fieldHdr(delta, tcStruct), slices.Concat(fields...), []byte{tcStop})
}

// pageHeaderBytes builds a PageHeader with its three required fields, then the
// other fields (ids from 4 on), then the stop.
func pageHeaderBytes(typ, usize, csize int32, rest ...[]byte) []byte {
	return slices.Concat(i32Field(1, typ), i32Field(1, usize), i32Field(1, csize), slices.Concat(rest...), []byte{tcStop})
}

// dataPageV1Field is a data_page_header (field 5 after field 3) for n PLAIN values with
// RLE levels.
func dataPageV1Field(n int32, extra ...[]byte) []byte {
	return structField(2, i32Field(1, n), i32Field(1, 0), i32Field(1, 3), i32Field(1, 3), slices.Concat(extra...))
}

// dataPageV2Field is a data_page_header_v2 (field 8 after field 3).
func dataPageV2Field(values, nulls, rows, defLen, repLen int32, extra ...[]byte) []byte {
	return structField(5, i32Field(1, values), i32Field(1, nulls), i32Field(1, rows), i32Field(1, 0), i32Field(1, defLen), i32Field(1, repLen), slices.Concat(extra...))
}

func TestParsePageHeaderHandMade(t *testing.T) {
	// Fields a reader must step over: one of each compact type, nested.
	unknown := slices.Concat(
		fieldHdr(6, tcTrue), fieldHdr(1, tcFalse),
		fieldHdr(1, tcByte), []byte{0x7f},
		fieldHdr(1, tcI16), zigzagBytes(-300),
		fieldHdr(1, tcI64), zigzagBytes(math.MinInt64),
		fieldHdr(1, tcDouble), make([]byte, 8),
		fieldHdr(1, tcBinary), uvarintBytes(3), []byte("abc"),
		fieldHdr(1, tcList), []byte{3<<4 | tcStruct}, []byte{tcStop}, structField(1, i32Field(1, 1))[1:], []byte{tcStop},
		fieldHdr(1, tcSet), []byte{0xf<<4 | tcTrue}, uvarintBytes(20), make([]byte, 20),
		fieldHdr(1, tcMap), uvarintBytes(2), []byte{tcBinary<<4 | tcList}, uvarintBytes(1), []byte("k"), []byte{0 | tcI32}, uvarintBytes(0), []byte{1<<4 | tcI32}, zigzagBytes(-1),
		fieldHdr(1, tcMap), uvarintBytes(0), // empty: no type byte
		fieldHdr(1, tcUUID), make([]byte, 16),
		[]byte{0 | tcI32}, zigzagBytes(1000), zigzagBytes(5), // long-form id 1000
		structField(1, structField(1, structField(1, fieldHdr(1, tcBinary), uvarintBytes(0)))),
	)
	for _, tc := range []struct {
		name string
		in   []byte
		want pageHeader
	}{
		{"v1", pageHeaderBytes(0, 10, 10, dataPageV1Field(3)), pageHeader{typ: 0, uncompressedSize: 10, compressedSize: 10, numValues: 3, hasData: true, defEncoding: 3, repEncoding: 3}},
		{"v1 with statistics", pageHeaderBytes(0, 10, 10, dataPageV1Field(3, structField(1, fieldHdr(1, tcBinary), uvarintBytes(2), []byte{1, 2}, i32Field(1, 0)))),
			pageHeader{typ: 0, uncompressedSize: 10, compressedSize: 10, numValues: 3, hasData: true, defEncoding: 3, repEncoding: 3}},
		{"v1 unknown fields", pageHeaderBytes(0, 10, 10, dataPageV1Field(3, unknown), unknown), pageHeader{typ: 0, uncompressedSize: 10, compressedSize: 10, numValues: 3, hasData: true, defEncoding: 3, repEncoding: 3}},
		{"v2 compressed by default", pageHeaderBytes(3, 20, 9, dataPageV2Field(5, 2, 5, 3, 0, unknown)),
			pageHeader{typ: 3, uncompressedSize: 20, compressedSize: 9, numValues: 5, hasData: true, numNulls: 2, numRows: 5, defLevelsLen: 3, isCompressed: true}},
		{"v2 not compressed", pageHeaderBytes(3, 20, 20, dataPageV2Field(5, 0, 5, 0, 0, fieldHdr(1, tcFalse))),
			pageHeader{typ: 3, uncompressedSize: 20, compressedSize: 20, numValues: 5, hasData: true, numRows: 5}},
		{"v2 levels fill the page", pageHeaderBytes(3, 4, 4, dataPageV2Field(5, 0, 5, 3, 1, fieldHdr(1, tcTrue))),
			pageHeader{typ: 3, uncompressedSize: 4, compressedSize: 4, numValues: 5, hasData: true, numRows: 5, defLevelsLen: 3, repLevelsLen: 1, isCompressed: true}},
		{"dictionary", pageHeaderBytes(2, 8, 8, structField(4, i32Field(1, 2), i32Field(1, 0), fieldHdr(1, tcTrue), unknown)), pageHeader{typ: 2, uncompressedSize: 8, compressedSize: 8, numValues: 2}},
		{"index page", pageHeaderBytes(1, 0, 0, structField(3)), pageHeader{typ: 1}},
		{"unknown page type", pageHeaderBytes(9, 1, 1, unknown), pageHeader{typ: 9, uncompressedSize: 1, compressedSize: 1}},
		{"empty data page", pageHeaderBytes(0, 0, 0, dataPageV1Field(0)), pageHeader{typ: 0, hasData: true, defEncoding: 3, repEncoding: 3}},
		// Fields in any order, long-form ids; the v2 header of a v1 page is ignored.
		{"out of order", slices.Concat(
			[]byte{0 | tcStruct}, zigzagBytes(8), i32Field(1, 1), i32Field(1, 0), i32Field(1, 1), i32Field(1, 0), i32Field(1, 0), i32Field(1, 0), []byte{tcStop},
			[]byte{0 | tcStruct}, zigzagBytes(5), i32Field(1, 7), i32Field(1, 8), i32Field(1, 0), i32Field(1, 0), []byte{tcStop},
			[]byte{0 | tcI32}, zigzagBytes(3), zigzagBytes(4), []byte{0 | tcI32}, zigzagBytes(1), zigzagBytes(0), i32Field(1, 5),
			[]byte{tcStop}),
			pageHeader{typ: 0, uncompressedSize: 5, compressedSize: 4, numValues: 7, encoding: 8, hasData: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Concat(tc.in, []byte{0xde, 0xad}) // bytes after the header are the page's
			h, n, err := parsePageHeader(in)
			if err != nil || n != len(tc.in) || h != tc.want {
				t.Errorf("got %+v, %d, %v; want %+v, %d", h, n, err, tc.want, len(tc.in))
			}
		})
	}
}

func TestParsePageHeaderCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"stop only", []byte{tcStop}},
		{"no type", slices.Concat(fieldHdr(2, tcI32), zigzagBytes(1), i32Field(1, 1), dataPageV1Field(1), []byte{tcStop})},
		{"no compressed size", slices.Concat(i32Field(1, 0), i32Field(1, 1), []byte{tcStop})},
		{"type of the wrong kind", slices.Concat(fieldHdr(1, tcI64), zigzagBytes(0), i32Field(1, 1), i32Field(1, 1), dataPageV1Field(1), []byte{tcStop})},
		{"negative uncompressed size", pageHeaderBytes(0, -1, 10, dataPageV1Field(1))},
		{"negative compressed size", pageHeaderBytes(0, 10, -1, dataPageV1Field(1))},
		{"data page without data_page_header", pageHeaderBytes(0, 10, 10)},
		{"data page with only a v2 header", pageHeaderBytes(0, 10, 10, dataPageV2Field(1, 0, 1, 0, 0))},
		{"v2 page without data_page_header_v2", pageHeaderBytes(3, 10, 10, dataPageV1Field(1))},
		{"dictionary page without its header", pageHeaderBytes(2, 10, 10)},
		{"negative num_values", pageHeaderBytes(0, 10, 10, dataPageV1Field(-1))},
		{"data_page_header without encoding", pageHeaderBytes(0, 10, 10, structField(2, i32Field(1, 1), i32Field(2, 3), i32Field(1, 3)))},
		{"data_page_header without level encodings", pageHeaderBytes(0, 10, 10, structField(2, i32Field(1, 1), i32Field(1, 0)))},
		{"v2 without num_rows", pageHeaderBytes(3, 10, 10, structField(5, i32Field(1, 1), i32Field(1, 0), i32Field(2, 0), i32Field(1, 0), i32Field(1, 0)))},
		{"v2 negative num_nulls", pageHeaderBytes(3, 10, 10, dataPageV2Field(1, -1, 1, 0, 0))},
		{"v2 negative num_rows", pageHeaderBytes(3, 10, 10, dataPageV2Field(1, 0, -1, 0, 0))},
		{"v2 negative level length", pageHeaderBytes(3, 10, 10, dataPageV2Field(1, 0, 1, -1, 0))},
		{"v2 more nulls than values", pageHeaderBytes(3, 10, 10, dataPageV2Field(1, 2, 1, 0, 0))},
		{"v2 levels longer than the page", pageHeaderBytes(3, 10, 4, dataPageV2Field(5, 0, 5, 3, 2))},
		{"v2 levels longer than the uncompressed page", pageHeaderBytes(3, 4, 10, dataPageV2Field(5, 0, 5, 3, 2))},
		{"v2 levels overflowing int32", pageHeaderBytes(3, math.MaxInt32, math.MaxInt32, dataPageV2Field(5, 0, 5, math.MaxInt32, math.MaxInt32))},
		{"dictionary negative num_values", pageHeaderBytes(2, 10, 10, structField(4, i32Field(1, -2), i32Field(1, 0)))},
		{"i32 beyond 32 bits", slices.Concat(fieldHdr(1, tcI32), uvarintBytes(1<<33), i32Field(1, 1), i32Field(1, 1), dataPageV1Field(1), []byte{tcStop})},
		{"varint beyond 64 bits", slices.Concat(fieldHdr(1, tcI32), bytes.Repeat([]byte{0xff}, 10), []byte{0x01})},
		{"varint of 11 bytes", slices.Concat(fieldHdr(1, tcI64), bytes.Repeat([]byte{0x80}, 10), []byte{0x00})},
		{"field id beyond 16 bits", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), []byte{0 | tcI32}, uvarintBytes(1<<17), zigzagBytes(0))},
		{"unknown type", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, 14))},
		{"unknown list element type", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcList), []byte{1<<4 | 15}, []byte{0})},
		{"list of stops", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcList), []byte{2<<4 | tcStop}, []byte{0, 0})},
		{"huge binary", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcBinary), uvarintBytes(math.MaxUint32))},
		{"huge binary beyond int", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcBinary), uvarintBytes(math.MaxUint64))},
		{"huge list", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcList), []byte{0xf<<4 | tcI32}, uvarintBytes(math.MaxInt32))},
		{"list beyond int32", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcList), []byte{0xf<<4 | tcByte}, uvarintBytes(1<<40))},
		{"short list", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcList), []byte{14<<4 | tcDouble}, make([]byte, 13*8))},
		{"huge map", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcMap), uvarintBytes(math.MaxInt32), []byte{tcI32<<4 | tcI32})},
		{"map longer than input", pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcMap), uvarintBytes(3), []byte{tcByte<<4 | tcByte}, make([]byte, 5))},
		{"short uuid", slices.Concat(i32Field(1, 0), fieldHdr(1, tcUUID), make([]byte, 15))},
		{"short double", slices.Concat(i32Field(1, 0), fieldHdr(1, tcDouble), make([]byte, 7))},
		{"deep structs", nestedStructs(maxThriftDepth)},
		{"deep lists", nestedLists(maxThriftDepth)},
		{"deep maps", nestedMaps(maxThriftDepth)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, n, err := parsePageHeader(tc.in)
			if !errors.Is(err, scanner.ErrCorrupt) {
				t.Errorf("got %+v, %d, %v; want ErrCorrupt", h, n, err)
			} else if !strings.HasPrefix(err.Error(), "parquet page header: ") {
				t.Errorf("error %q does not name the page header", err)
			}
		})
	}
}

// An index page header with an unknown field nested d containers deep: with
// the header itself, d+1 levels.
func nestedStructs(d int) []byte {
	return pageHeaderBytes(1, 0, 0, bytes.Repeat(fieldHdr(1, tcStruct), d), bytes.Repeat([]byte{tcStop}, d))
}

func nestedLists(d int) []byte {
	// Lists of one list, down to an empty list.
	return pageHeaderBytes(1, 0, 0, fieldHdr(1, tcList), bytes.Repeat([]byte{1<<4 | tcList}, d-1), []byte{0<<4 | tcByte})
}

func nestedMaps(d int) []byte {
	// Maps of one byte key to a map, down to an empty map.
	return pageHeaderBytes(1, 0, 0, fieldHdr(1, tcMap), bytes.Repeat(slices.Concat(uvarintBytes(1), []byte{tcByte<<4 | tcMap, 0}), d-1), uvarintBytes(0))
}

// Nesting just inside the limit parses: the limit is exactly maxThriftDepth
// levels, the header included.
func TestParsePageHeaderNestingLimit(t *testing.T) {
	for _, in := range [][]byte{nestedStructs(maxThriftDepth - 1), nestedLists(maxThriftDepth - 1), nestedMaps(maxThriftDepth - 1)} {
		if h, n, err := parsePageHeader(in); err != nil || n != len(in) || h.typ != pageTypeIndexPage {
			t.Errorf("%x: %+v, %d of %d bytes, %v", in, h, n, len(in), err)
		}
	}
}

func TestParsePageHeaderAllocs(t *testing.T) {
	raws := realHeaders(t)
	allocs := testing.AllocsPerRun(10, func() {
		for _, raw := range raws {
			if _, _, err := parsePageHeader(raw); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pass over %d headers", allocs, len(raws))
	}
}

func FuzzParsePageHeader(f *testing.F) {
	for _, raw := range realHeaders(f) {
		f.Add(raw)
	}
	f.Add(pageHeaderBytes(3, 20, 9, dataPageV2Field(5, 2, 5, 3, 0)))
	f.Add(pageHeaderBytes(0, 1, 1, dataPageV1Field(1), fieldHdr(1, tcList), []byte{2<<4 | tcStruct}, structField(1, i32Field(1, 1))[1:], []byte{tcStop}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := parsePageHeader(b)
		if err != nil {
			if !errors.Is(err, scanner.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("header of %d bytes in %d", n, len(b))
		}
		if h.uncompressedSize < 0 || h.compressedSize < 0 || h.numValues < 0 || h.numNulls < 0 || h.numRows < 0 || h.defLevelsLen < 0 || h.repLevelsLen < 0 {
			t.Fatalf("negative field in %+v", h)
		}
		if h.hasData != (h.typ == pageTypeDataPage || h.typ == pageTypeDataPageV2) {
			t.Fatalf("hasData wrong in %+v", h)
		}
		if int64(h.defLevelsLen)+int64(h.repLevelsLen) > int64(min(h.compressedSize, h.uncompressedSize)) || h.numNulls > h.numValues {
			t.Fatalf("v2 counts do not fit in %+v", h)
		}
		// The header ends where it ends, whatever follows.
		if h2, n2, err := parsePageHeader(append(b[:n:n], 0xff)); err != nil || h2 != h || n2 != n {
			t.Fatalf("with a byte after it: %+v, %d, %v", h2, n2, err)
		}
	})
}
