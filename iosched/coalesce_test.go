package iosched

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestCoalesce(t *testing.T) {
	r := func(off, n int64) Range { return Range{Off: off, Len: n} }
	tests := []struct {
		name       string
		in         []Range
		hole, max  int64
		want       []Request
		wantNeeded []int64
	}{
		{name: "empty", in: nil, hole: 10, max: 100, want: nil},
		{name: "zero length ignored", in: []Range{r(5, 0)}, hole: 10, max: 100, want: nil},
		{name: "single", in: []Range{r(5, 10)}, hole: 10, max: 100,
			want: []Request{{Off: 5, Len: 10, Needed: 10, Ranges: []Range{r(5, 10)}}}},
		{name: "gap within hole merges", in: []Range{r(0, 10), r(15, 10)}, hole: 5, max: 100,
			want: []Request{{Off: 0, Len: 25, Needed: 20, Ranges: []Range{r(0, 10), r(15, 10)}}}},
		{name: "gap over hole splits", in: []Range{r(0, 10), r(16, 10)}, hole: 5, max: 100,
			want: []Request{{Off: 0, Len: 10, Needed: 10, Ranges: []Range{r(0, 10)}}, {Off: 16, Len: 10, Needed: 10, Ranges: []Range{r(16, 10)}}}},
		{name: "unsorted and overlapping", in: []Range{r(20, 10), r(0, 10), r(5, 10)}, hole: 5, max: 100,
			want: []Request{{Off: 0, Len: 30, Needed: 25, Ranges: []Range{r(0, 15), r(20, 10)}}}},
		{name: "touching ranges join", in: []Range{r(0, 10), r(10, 10)}, hole: 0, max: 100,
			want: []Request{{Off: 0, Len: 20, Needed: 20, Ranges: []Range{r(0, 10), r(10, 10)}}}},
		{name: "max request caps merging", in: []Range{r(0, 40), r(40, 40), r(80, 40)}, hole: 0, max: 100,
			want: []Request{{Off: 0, Len: 80, Needed: 80, Ranges: []Range{r(0, 40), r(40, 40)}}, {Off: 80, Len: 40, Needed: 40, Ranges: []Range{r(80, 40)}}}},
		{name: "a range over max stays whole", in: []Range{r(0, 500)}, hole: 0, max: 100,
			want: []Request{{Off: 0, Len: 500, Needed: 500, Ranges: []Range{r(0, 500)}}}},
		{name: "negative hole never merges across a gap", in: []Range{r(0, 10), r(11, 10)}, hole: -1, max: 100,
			want: []Request{{Off: 0, Len: 10, Needed: 10, Ranges: []Range{r(0, 10)}}, {Off: 11, Len: 10, Needed: 10, Ranges: []Range{r(11, 10)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Coalesce(tt.in, tt.hole, tt.max)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Coalesce(%v, %d, %d)\n got %+v\nwant %+v", tt.in, tt.hole, tt.max, got, tt.want)
			}
		})
	}
}

// Against the naive plan (one request per range): the same bytes are
// covered, never more requests, and every request keeps the rules.
func TestCoalesceAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		var in []Range
		for i := rng.IntN(20); i > 0; i-- {
			in = append(in, Range{Off: rng.Int64N(10000), Len: rng.Int64N(500)})
		}
		hole, maxReq := rng.Int64N(300), 1+rng.Int64N(3000)
		reqs := Coalesce(in, hole, maxReq)
		checkCovers(t, in, reqs, hole, maxReq)
		nonEmpty := 0
		for _, r := range in {
			if r.Len > 0 {
				nonEmpty++
			}
		}
		if len(reqs) > nonEmpty {
			t.Fatalf("%d requests for %d ranges", len(reqs), nonEmpty)
		}
	}
}

// checkCovers checks that reqs, planned from in, cover exactly in's bytes,
// in order, without overlaps, within hole and maxReq.
func checkCovers(t *testing.T, in []Range, reqs []Request, hole, maxReq int64) {
	t.Helper()
	need := map[int64]bool{}
	for _, r := range in {
		for b := r.Off; b < r.End(); b++ {
			need[b] = true
		}
	}
	var needed, prevEnd int64 = 0, -1
	covered := map[int64]bool{}
	for i, q := range reqs {
		if q.Off < prevEnd && i > 0 {
			t.Fatalf("requests overlap or are unsorted: %+v", reqs)
		}
		prevEnd = q.end()
		if q.Len > maxReq && len(q.Ranges) > 1 {
			t.Fatalf("merged request of %d bytes over max %d", q.Len, maxReq)
		}
		var n int64
		for j, r := range q.Ranges {
			if r.Off < q.Off || r.End() > q.end() {
				t.Fatalf("range %v outside its request %+v", r, q)
			}
			if j > 0 && r.Off-q.Ranges[j-1].End() > hole {
				t.Fatalf("gap over hole %d inside %+v", hole, q)
			}
			for b := r.Off; b < r.End(); b++ {
				covered[b] = true
			}
			n += r.Len
		}
		if n != q.Needed {
			t.Fatalf("Needed %d, ranges sum to %d", q.Needed, n)
		}
		needed += n
	}
	if len(covered) != len(need) || int64(len(need)) != needed {
		t.Fatalf("covered %d bytes, needed %d, union %d", len(covered), needed, len(need))
	}
	for b := range need {
		if !covered[b] {
			t.Fatalf("byte %d not covered", b)
		}
	}
}

func TestParts(t *testing.T) {
	got := parts(Request{Off: 100, Len: 250}, 100)
	want := []Range{{Off: 100, Len: 100}, {Off: 200, Len: 100}, {Off: 300, Len: 50}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parts = %v, want %v", got, want)
	}
	if got := parts(Request{Off: 0, Len: 50}, 100); len(got) != 1 {
		t.Errorf("small request split: %v", got)
	}
}

func FuzzCoalesce(f *testing.F) {
	f.Add(int64(0), int64(10), int64(15), int64(10), int64(5), int64(100))
	f.Fuzz(func(t *testing.T, o1, l1, o2, l2, hole, maxReq int64) {
		reqs := Coalesce([]Range{{Off: o1, Len: l1}, {Off: o2, Len: l2}}, hole, maxReq)
		for _, q := range reqs {
			if q.Needed > q.Len || q.Len <= 0 {
				t.Fatalf("bad request %+v", q)
			}
		}
	})
}
