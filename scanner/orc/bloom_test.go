package orc

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner"
)

// strideValues reads column c of stripe g and returns its non-null
// values by stride.
func strideValues(t *testing.T, f *File, g int, c string) [][]scalar.Scalar {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p, err := f.Project([]string{c})
	if err != nil {
		t.Fatal(err)
	}
	stride := int64(f.ft.rowIndexStride)
	out := make([][]scalar.Scalar, strideCount(int64(f.ft.stripes[g].numberOfRows), stride))
	row := int64(0)
	err = f.Read(context.Background(), p, scanner.ReadOptions{Groups: []int{g}, Mem: mem}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		for i := 0; i < int(rec.NumRows()); i++ {
			s, err := scalar.GetScalar(rec.Column(0), i)
			if err != nil {
				return err
			}
			if s.IsValid() {
				out[row/stride] = append(out[row/stride], s)
			}
			row++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func openPath(t *testing.T, path string) *File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skip(err)
	}
	f, err := openBytes(t, filepath.Base(path), data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestORCBloomNoFalseNegatives: every value of a stride may be in that
// stride's filter, for the first format (Java, over1k_bloom: numbers
// only) and BLOOM_FILTER_UTF8 (pyarrow's ORC C++ 2.x: numbers and
// strings); and a filter rules out most values of other strides.
func TestORCBloomNoFalseNegatives(t *testing.T) {
	cases := []struct {
		path   string
		cols   []string
		strict []string // columns whose filters must be used (and rule out)
	}{
		{filepath.Join("testdata", "bloom", "bloom.orc"), []string{"id", "i32", "name", "f", "seq"}, []string{"id", "i32", "name", "f"}},
		{filepath.Join(orcExamples(t), "over1k_bloom.orc"), []string{"_col0", "_col1", "_col2", "_col3", "_col4", "_col5", "_col7"}, []string{"_col3", "_col5"}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			f := openPath(t, tc.path)
			for _, c := range tc.cols {
				ids := f.columnIDs([]string{c})
				for g := range f.ft.stripes {
					ix, err := f.readStripeIndex(context.Background(), g, ids, true)
					if err != nil {
						t.Fatal(err)
					}
					vals := strideValues(t, f, g, c)
					for s := range vals {
						for _, v := range vals[s] {
							if !ix.mayContain(s, c, v) {
								t.Fatalf("%s stripe %d stride %d: %v ruled out", c, g, s, v)
							}
						}
					}
					checkRulesOut(t, ix, c, vals, contains(tc.strict, c))
				}
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// checkRulesOut: stride 0's filter lets few values of stride 1 through.
func checkRulesOut(t *testing.T, ix *stripeIndex, c string, vals [][]scalar.Scalar, strict bool) {
	t.Helper()
	if len(vals) < 2 || !strict {
		return
	}
	hits := 0
	for _, v := range vals[1] {
		if ix.mayContain(0, c, v) {
			hits++
		}
	}
	if hits > len(vals[1])/5 {
		t.Errorf("%s: stride 0's filter lets %d of %d values of stride 1 through", c, hits, len(vals[1]))
	}
}

// TestORCBloomBadWriterIgnored: ORC C++ 1.6 files (ORC-1024) keep their
// stripe for id = 18000000000, which they hold.
func TestORCBloomBadWriterIgnored(t *testing.T) {
	for _, name := range []string{"bad_bloom_filter_1.6.0.orc", "bad_bloom_filter_1.6.11.orc"} {
		f := openPath(t, filepath.Join(orcExamples(t), name))
		if f.bloomUsable() {
			t.Errorf("%s (%q): filters used", name, f.ft.softwareVersion)
		}
		m, err := f.GroupBlooms(context.Background(), []int{0}, []string{"id"})
		if err != nil {
			t.Fatal(err)
		}
		if !m(0).MayContain("id", scalar.NewInt64Scalar(18000000000)) {
			t.Errorf("%s: stripe ruled out", name)
		}
	}
}

func TestORCBloomLiteralTypes(t *testing.T) {
	f := openPath(t, filepath.Join("testdata", "bloom", "bloom.orc"))
	ix, err := f.readStripeIndex(context.Background(), 0, f.columnIDs([]string{"id", "i32"}), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []scalar.Scalar{scalar.NewInt32Scalar(1), scalar.NewStringScalar("1"), scalar.MakeNullScalar(arrow.PrimitiveTypes.Int64)} {
		if !ix.mayContain(0, "id", v) {
			t.Errorf("%T literal looked up on a bigint column", v)
		}
	}
	out := 0
	for i := int64(1); i < 200; i += 2 {
		if !ix.mayContain(0, "id", scalar.NewInt64Scalar(i)) {
			out++
		}
	}
	if out < 80 {
		t.Errorf("only %d of 100 absent ids ruled out", out)
	}
}

// FuzzParseORCIndex: the row index and bloom filter parsers fail cleanly
// on any bytes.
func FuzzParseORCIndex(f *testing.F) {
	f.Add([]byte{0x0a, 0x0c, 0x08, 0x03, 0x12, 0x08, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{0x0a, 0x06, 0x0a, 0x02, 0x00, 0x00, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		if bfs, err := parseBloomIndex(b); err == nil {
			for _, bf := range bfs {
				bf.testHash(murmur3Hash64(b))
				bf.testHash(longHash(int64(len(b))))
			}
		}
		parseRowIndex(b)
	})
}

// TestGroupBloomsOneAnnouncement: the bloom filters of every stripe asked
// for are announced in one Prefetch (merged across stripes by the IO
// scheduler), then read exactly as announced.
func TestGroupBloomsOneAnnouncement(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(orcExamples(t), "over1k_bloom.orc"))
	if err != nil {
		t.Skip(err)
	}
	src := &memSource{data: data}
	f, err := Open(context.Background(), "over1k_bloom.orc", src, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Project([]string{"_col3"}); err != nil {
		t.Fatal(err)
	}
	src.prefetched, src.reads = nil, nil
	m, err := f.GroupBlooms(context.Background(), []int{0, 1}, []string{"_col3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.prefetched) != 1 || len(src.prefetched[0]) != 2 || len(src.reads) != 2 {
		t.Errorf("prefetched %v, read %v: want both stripes' filters announced once", src.prefetched, src.reads)
	}
	for g := range 2 {
		for _, v := range strideValues(t, f, g, "_col3")[0] {
			if !m(g).MayContain("_col3", v) {
				t.Fatalf("stripe %d: %v ruled out", g, v)
			}
		}
	}
}
