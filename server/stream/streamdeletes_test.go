package stream

import (
	"errors"
	"slices"
	"testing"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/deletes"
)

func sp(first, rows int64) deletes.Span { return deletes.Span{FirstRow: first, Rows: rows} }

// TestFileDeletesSpans: the reader's batches are placed in the file by
// the rows they take from each chosen row group, in order, whether a
// batch ends inside a group, at its end, or runs on into the next group
// read (which need not be the next group of the file).
func TestFileDeletesSpans(t *testing.T) {
	groups := []deletes.Span{sp(0, 10), sp(10, 0), sp(30, 5), sp(50, 10)}
	cases := []struct {
		name    string
		batches []int64
		want    [][]deletes.Span
		err     bool
	}{
		{"a batch a group", []int64{10, 5, 10}, [][]deletes.Span{{sp(0, 10)}, {sp(30, 5)}, {sp(50, 10)}}, false},
		{"batches inside groups", []int64{4, 6, 2, 3, 10}, [][]deletes.Span{{sp(0, 4)}, {sp(4, 6)}, {sp(30, 2)}, {sp(32, 3)}, {sp(50, 10)}}, false},
		{"across groups", []int64{12, 13}, [][]deletes.Span{{sp(0, 10), sp(30, 2)}, {sp(32, 3), sp(50, 10)}}, false},
		{"one batch of all", []int64{25}, [][]deletes.Span{{sp(0, 10), sp(30, 5), sp(50, 10)}}, false},
		{"past the last group", []int64{20, 6}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fd := &fileDeletes{groups: groups}
			var got [][]deletes.Span
			for _, n := range c.batches {
				s, err := fd.spans(n)
				if err != nil {
					if !c.err || !errors.Is(err, scanner.ErrCorrupt) {
						t.Fatalf("batch of %d: %v", n, err)
					}
					return
				}
				got = append(got, s)
			}
			if c.err {
				t.Fatal("no error")
			}
			if !slices.EqualFunc(got, c.want, slices.Equal) {
				t.Fatalf("spans %v, want %v", got, c.want)
			}
			if fd.at != len(groups) {
				t.Fatalf("at group %d of %d after all the rows", fd.at, len(groups))
			}
		})
	}
}
