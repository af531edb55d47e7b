package parquet

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner"
)

const sharedTestdata = "/work/shared/testdata"

// groupValues reads every row group of f and returns, per group, the
// values of column c as scalars.
func groupValues(t *testing.T, f *File, c string) [][]scalar.Scalar {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	proj, err := f.Project([]string{c})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]scalar.Scalar, len(proj.Groups))
	for g := range proj.Groups {
		err := f.Read(context.Background(), proj, scanner.ReadOptions{Groups: []int{g}, Mem: mem}, func(rec arrow.RecordBatch) error {
			defer rec.Release()
			for i := 0; i < int(rec.NumRows()); i++ {
				s, err := scalar.GetScalar(rec.Column(0), i)
				if err != nil {
					return err
				}
				if s.IsValid() {
					out[g] = append(out[g], s)
				}
				if r, ok := s.(scalar.Releasable); ok {
					defer r.Release()
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func allGroups(f *File) []int {
	g := make([]int, f.pf.MetaData().NumRowGroups())
	for i := range g {
		g[i] = i
	}
	return g
}

// TestBloomFiltersPyarrow checks, on a file pyarrow wrote with bloom
// filters on columns of every physical type, that every value of a group
// may be in that group's filter (no false negatives: a wrong hash or
// conversion shows up here), and that values of the other groups mostly
// are not (the filters work at all).
func TestBloomFiltersPyarrow(t *testing.T) {
	f := openFile(t, filepath.Join("testdata", "bloom", "bloom.parquet"))
	cols := []string{"id", "i32", "u16", "name", "f", "day", "ts"}
	bf, err := f.BloomFilters(context.Background(), allGroups(f), cols)
	if err != nil {
		t.Fatal(err)
	}
	if bf.Ignored != 0 || bf.Bytes == 0 {
		t.Fatalf("Ignored %d, Bytes %d", bf.Ignored, bf.Bytes)
	}
	for _, c := range cols {
		vals := groupValues(t, f, c)
		for g := range vals {
			m := bf.Group(g)
			for _, v := range vals[g] {
				if !m.MayContain(c, v) {
					t.Fatalf("%s: group %d's filter rules out %v, which the group holds", c, g, v)
				}
			}
			other := vals[(g+1)%len(vals)]
			hits := 0
			for _, v := range other {
				if m.MayContain(c, v) {
					hits++
				}
			}
			if hits > len(other)/10 {
				t.Errorf("%s: group %d's filter lets %d of %d foreign values through", c, g, hits, len(other))
			}
		}
	}
}

func openFile(t *testing.T, path string) *File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skip(err)
	}
	return openBytes(t, data)
}

func TestBloomLiteralsThatDoNotMapAreNotLookedUp(t *testing.T) {
	f := openFile(t, filepath.Join("testdata", "bloom", "bloom.parquet"))
	bf, err := f.BloomFilters(context.Background(), []int{0}, []string{"id", "i32", "ts", "nobloom", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	m := bf.Group(0)
	cases := []struct {
		name, col string
		v         scalar.Scalar
	}{
		{"int32 literal on an int64 column", "id", scalar.NewInt32Scalar(1)},
		{"int64 literal on an int32 column", "i32", scalar.NewInt64Scalar(1)},
		{"timestamp of another unit", "ts", scalar.NewTimestampScalar(1, &arrow.TimestampType{Unit: arrow.Second})},
		{"column without a filter", "nobloom", scalar.NewInt64Scalar(1)},
		{"unknown column", "missing", scalar.NewInt64Scalar(1)},
		{"null literal", "id", scalar.MakeNullScalar(arrow.PrimitiveTypes.Int64)},
	}
	for _, c := range cases {
		if !m.MayContain(c.col, c.v) {
			t.Errorf("%s: ruled out", c.name)
		}
	}
	// Odd ids are absent: most are ruled out.
	out := 0
	for i := int64(1); i < 200; i += 2 {
		if !m.MayContain("id", scalar.NewInt64Scalar(i)) {
			out++
		}
	}
	if out < 90 {
		t.Errorf("only %d of 100 absent ids ruled out", out)
	}
}

// TestBloomFiltersOtherWriters: parquet-mr (no bloom_filter_length) and
// parquet-rs (with it) files from parquet-testing.
func TestBloomFiltersOtherWriters(t *testing.T) {
	for _, name := range []string{"data_index_bloom_encoding_stats.parquet", "data_index_bloom_encoding_with_length.parquet"} {
		t.Run(name, func(t *testing.T) {
			f := openFile(t, filepath.Join(sharedTestdata, "parquet-testing", name))
			col := f.Schema().Field(0).Name
			bf, err := f.BloomFilters(context.Background(), []int{0}, []string{col})
			if err != nil {
				t.Fatal(err)
			}
			if len(bf.groups[0]) != 1 {
				t.Fatalf("no filter read (ignored %d)", bf.Ignored)
			}
			for _, v := range groupValues(t, f, col)[0] {
				if !bf.Group(0).MayContain(col, v) {
					t.Errorf("%v ruled out", v)
				}
			}
			if bf.Group(0).MayContain(col, scalar.NewStringScalar("surely not in this file")) {
				t.Log("a false positive (possible, unlikely)")
			}
		})
	}
}

// TestBloomXXHashReference is parquet-testing's raw filter, which holds
// the four strings Arrow C++'s compatibility test inserts.
func TestBloomXXHashReference(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(sharedTestdata, "parquet-testing", "bloom_filter.xxhash.bin"))
	if err != nil {
		t.Skip(err)
	}
	bf, _, err := parseBloomFilter(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hello", "parquet", "bloom", "filter"} {
		if !bf.mayContain([]byte(s)) {
			t.Errorf("%q ruled out", s)
		}
	}
}

// TestBloomMalformedIsIgnored: a header lying about its size, a header
// that is not one, and a range outside the file all leave the group's
// filter unused (MayContain true), without an error.
func TestBloomMalformedIsIgnored(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "bloom", "bloom.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	f0 := openBytes(t, orig)
	m := f0.pf.MetaData().RowGroups[0].Columns[0].MetaData
	off := int(*m.BloomFilterOffset)
	cases := map[string]func(b []byte){
		"header lies about its size": func(b []byte) {
			// Field 1 (short form 0x15) holds zigzag(numBytes) as a varint:
			// raising its low byte by one changes numBytes by a half-step
			// of zigzag, so it disagrees with bloom_filter_length.
			if b[off] != 0x15 {
				t.Fatalf("header starts with %#x", b[off])
			}
			b[off+1] += 2
		},
		"garbage header": func(b []byte) {
			for i := range 16 {
				b[off+i] = 0xff
			}
		},
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			b := append([]byte(nil), orig...)
			corrupt(b)
			f := openBytes(t, b)
			bf, err := f.BloomFilters(context.Background(), []int{0}, []string{"id"})
			if err != nil {
				t.Fatal(err)
			}
			if bf.Ignored != 1 || !bf.Group(0).MayContain("id", scalar.NewInt64Scalar(1)) {
				t.Errorf("Ignored %d; the bad filter was used", bf.Ignored)
			}
		})
	}
}

func TestParseBloomHeaderErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(sharedTestdata, "parquet-testing", "bloom_filter.xxhash.bin"))
	if err != nil {
		t.Skip(err)
	}
	hl, _, err := parseBloomHeader(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":          nil,
		"header only":    good[:hl],
		"truncated":      good[:hl/2],
		"stop only":      {0},
		"bitset too big": append([]byte{0x15, 0xfe, 0xff, 0xff, 0xff, 0x0f}, good[hl-6:]...),
	}
	for name, b := range cases {
		_, _, err := parseBloomFilter(b, 0)
		if err == nil {
			t.Errorf("%s: parsed", name)
			continue
		}
		if !errors.Is(err, errBadBloomFilter) && !errors.Is(err, errShortBloom) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := parseBloomFilter(good, int64(len(good))+1); !errors.Is(err, errBadBloomFilter) {
		t.Errorf("declared length off by one: %v", err)
	}
}

// FuzzParseBloomFilter: any bytes either parse into a usable filter or
// fail with one of the two errors, and never panic or allocate more than
// they hold.
func FuzzParseBloomFilter(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(sharedTestdata, "parquet-testing", "bloom_filter.xxhash.bin")); err == nil {
		f.Add(b, int64(len(b)))
		f.Add(b[:40], int64(0))
	}
	f.Add([]byte{0x15, 0x40, 0x1c, 0x1c, 0, 0, 0x2c, 0x1c, 0, 0, 0x2c, 0x1c, 0, 0, 0}, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, declared int64) {
		bf, need, err := parseBloomFilter(b, declared)
		switch {
		case errors.Is(err, errShortBloom):
			if need <= int64(len(b)) {
				t.Fatalf("short, but needs %d of %d", need, len(b))
			}
		case err != nil:
			if !errors.Is(err, errBadBloomFilter) {
				t.Fatalf("unclassified: %v", err)
			}
		default:
			if len(bf.words) == 0 || len(bf.words)%8 != 0 || int64(4*len(bf.words)) > int64(len(b)) {
				t.Fatalf("%d words from %d bytes", len(bf.words), len(b))
			}
			bf.mayContain(b)
		}
	})
}

// recordingSource records prefetches and reads, and caches metadata like
// the IO scheduler's files (shared by the sources of one object).
type recordingSource struct {
	data       []byte
	cache      *sync.Map
	mu         sync.Mutex
	prefetches [][]scanner.Range
	reads      []scanner.Range
}

func (s *recordingSource) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	s.reads = append(s.reads, scanner.Range{Off: off, Len: int64(len(p))})
	s.mu.Unlock()
	return bytes.NewReader(s.data).ReadAt(p, off)
}
func (s *recordingSource) Size() int64 { return int64(len(s.data)) }
func (s *recordingSource) Prefetch(r []scanner.Range) {
	s.prefetches = append(s.prefetches, append([]scanner.Range(nil), r...))
}
func (s *recordingSource) CachedMetadata(kind string) (any, bool)    { return s.cache.Load(kind) }
func (s *recordingSource) CacheMetadata(kind string, v any, _ int64) { s.cache.Store(kind, v) }

// TestBloomReadsArePlannedAndCached: the filters of the chosen groups and
// columns are announced in one Prefetch, read exactly, and a second File
// on the same object reads none.
func TestBloomReadsArePlannedAndCached(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "bloom", "bloom.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	cache := &sync.Map{}
	read := func() (*recordingSource, *BloomFilters) {
		src := &recordingSource{data: data, cache: cache}
		f, err := Open(context.Background(), "bloom.parquet", src, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		src.reads, src.prefetches = nil, nil
		bf, err := f.BloomFilters(context.Background(), []int{1, 3}, []string{"id", "name"})
		if err != nil {
			t.Fatal(err)
		}
		return src, bf
	}
	src, bf := read()
	if len(src.prefetches) != 1 || len(src.prefetches[0]) != 4 || !slices.Equal(src.reads, src.prefetches[0]) {
		t.Errorf("prefetched %v, read %v: want the 4 filters announced once and read as announced", src.prefetches, src.reads)
	}
	if bf.Bytes == 0 || len(bf.groups[0]) != 0 || len(bf.groups[1]) != 2 {
		t.Errorf("bytes %d, groups %v", bf.Bytes, bf.groups)
	}
	src, bf = read()
	if len(src.reads) != 0 || bf.Bytes != 0 || len(bf.groups[3]) != 2 {
		t.Errorf("second read: %d reads, %d bytes, %d filters of group 3", len(src.reads), bf.Bytes, len(bf.groups[3]))
	}
}

// TestBloomChargedToBudget: the filter bytes are charged to the budget
// while read and all given back; a budget too small for a filter skips it
// (Ignored, its group kept) instead of reading past the budget.
func TestBloomChargedToBudget(t *testing.T) {
	f := openFile(t, filepath.Join("testdata", "bloom", "bloom.parquet"))
	cols := []string{"id", "name"}
	all, err := f.BloomFilters(context.Background(), allGroups(f), cols)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cap     int64
		ignored bool
	}{{"fits", 1 << 30, false}, {"refused", 16, true}} {
		t.Run(tc.name, func(t *testing.T) {
			budget := &capReserver{cap: tc.cap}
			g := openFile(t, filepath.Join("testdata", "bloom", "bloom.parquet"))
			bf, err := g.BloomFiltersWithin(context.Background(), budget, allGroups(g), cols)
			if err != nil {
				t.Fatal(err)
			}
			if budget.Held() != 0 {
				t.Fatalf("%d bytes still held", budget.Held())
			}
			if budget.peak > tc.cap {
				t.Fatalf("peak %d over the cap %d", budget.peak, tc.cap)
			}
			if tc.ignored && (bf.Ignored == 0 || bf.Bytes != 0) {
				t.Fatalf("refused: Ignored %d, Bytes %d", bf.Ignored, bf.Bytes)
			}
			if !tc.ignored && (bf.Ignored != all.Ignored || bf.Bytes != all.Bytes || budget.peak == 0) {
				t.Fatalf("fits: Ignored %d Bytes %d peak %d, unbudgeted Ignored %d Bytes %d", bf.Ignored, bf.Bytes, budget.peak, all.Ignored, all.Bytes)
			}
		})
	}
}
