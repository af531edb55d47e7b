package orc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/scanner/filter/sql"
)

// TestStrideSelection reads bloom.orc (one stripe, 20 strides of 1,000
// rows; seq sorted, id shuffled) with a filter, and checks the rows the
// reader returns: a superset of the matches, made of whole kept strides.
func TestStrideSelection(t *testing.T) {
	f := openPath(t, filepath.Join("testdata", "bloom", "bloom.orc"))
	cases := []struct {
		filter            string
		minRows, maxRows  int64
		wantSeqStartsWith int64 // first seq returned; -1: no rows
	}{
		{"seq >= 5500 AND seq < 5600", 1000, 1000, 5000},
		{"seq >= 5500 AND seq < 6600", 2000, 2000, 5000},
		{"seq = 19999", 1000, 1000, 19000},
		{"seq > 30000", 0, 0, -1},
		{"id = 1001", 0, 2000, -1}, // absent: every stride's filter (bar false positives) rules it out
		{"id = 1000", 1000, 3000, 0},
		{"name = 'n1000'", 1000, 3000, 0},
		{"id IN (1000, 1002)", 1000, 7000, 0}, // two strides hold them; fpp 0.05 per value and stride
		{"seq < 100 OR id = 1000", 1000, 3000, 0},
		{"seq >= 0", 20000, 20000, 0},
		{"seq != 5", 20000, 20000, 0},
	}
	for _, tc := range cases {
		t.Run(tc.filter, func(t *testing.T) {
			pred := bindSQL(t, f, tc.filter)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			p, err := f.Project([]string{"seq", "id"})
			if err != nil {
				t.Fatal(err)
			}
			var rows, matches int64
			first := int64(-1)
			err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, Filter: pred, BatchRows: 700}, func(rec arrow.RecordBatch) error {
				defer rec.Release()
				if first < 0 && rec.NumRows() > 0 {
					first = int64(rec.Column(0).(interface{ Value(int) int64 }).Value(0))
				}
				rows += rec.NumRows()
				got, err := pred.Filter(context.Background(), rec, mem)
				if err != nil {
					return err
				}
				matches += got.NumRows()
				got.Release()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if rows < tc.minRows || rows > tc.maxRows || rows%1000 != 0 {
				t.Errorf("%d rows returned, want %d..%d whole strides", rows, tc.minRows, tc.maxRows)
			}
			if tc.wantSeqStartsWith >= 0 && tc.minRows > 0 && first != tc.wantSeqStartsWith && tc.filter[:3] == "seq" {
				t.Errorf("first seq %d, want %d", first, tc.wantSeqStartsWith)
			}
			// Every match is returned: compare with a read without the filter.
			if want := countMatches(t, f, pred); matches != want {
				t.Errorf("%d matches, %d without stride selection", matches, want)
			}
		})
	}
}

func bindSQL(t *testing.T, f *File, text string) *filter.Predicate {
	t.Helper()
	e, err := sql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := filter.Bind(e, f.Schema())
	if err != nil {
		t.Fatal(err)
	}
	return pred
}

func countMatches(t *testing.T, f *File, pred *filter.Predicate) int64 {
	t.Helper()
	p, err := f.Project([]string{"seq", "id"})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	err = f.Read(context.Background(), p, scanner.ReadOptions{}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		got, err := pred.Filter(context.Background(), rec, memory.DefaultAllocator)
		if err != nil {
			return err
		}
		n += got.NumRows()
		got.Release()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStrideIndexCached: a second File on the same object (same metadata
// cache) reads no index bytes for the same filter, and selects the same
// strides.
func TestStrideIndexCached(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "bloom", "bloom.orc"))
	if err != nil {
		t.Fatal(err)
	}
	cache := &sync.Map{}
	sel := func() ([]rowRange, int) {
		src := &cachingSource{memSource: &memSource{data: data}, cache: cache}
		f, err := Open(context.Background(), "bloom.orc", src, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Project([]string{"seq"}); err != nil { // reads the stripe footers
			t.Fatal(err)
		}
		before := len(src.reads)
		keep, _, _, err := f.selectStrides(context.Background(), 0, bindSQL(t, f, "seq >= 5500 AND seq < 5600 AND id IN (1, 3)"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return keep, len(src.reads) - before
	}
	keep1, reads1 := sel()
	keep2, reads2 := sel()
	if reads1 == 0 || reads2 != 0 {
		t.Errorf("index reads: %d first, %d second (want some, then none)", reads1, reads2)
	}
	if !slices.Equal(keep1, keep2) {
		t.Errorf("kept %v, then %v", keep1, keep2)
	}
}
