package rangecache

import (
	"reflect"
	"testing"
)

func TestPlanPages(t *testing.T) {
	const ps = 100
	cached := func(pages ...int64) func(int64) bool {
		set := map[int64]bool{}
		for _, p := range pages {
			set[p] = true
		}
		return func(p int64) bool { return set[p] }
	}
	tests := map[string]struct {
		ranges []Range
		size   int64
		have   func(int64) bool
		want   []Run
	}{
		"nothing":              {ranges: nil, size: 1000, have: cached(), want: nil},
		"empty range":          {ranges: []Range{{Off: 50, Len: 0}}, size: 1000, have: cached(), want: nil},
		"past the end":         {ranges: []Range{{Off: 1000, Len: 10}}, size: 1000, have: cached(), want: nil},
		"negative offset":      {ranges: []Range{{Off: -1, Len: 10}}, size: 1000, have: cached(), want: nil},
		"inside one page":      {ranges: []Range{{Off: 110, Len: 20}}, size: 1000, have: cached(), want: []Run{{First: 1, Last: 1}}},
		"page boundary exact":  {ranges: []Range{{Off: 100, Len: 100}}, size: 1000, have: cached(), want: []Run{{First: 1, Last: 1}}},
		"straddles two pages":  {ranges: []Range{{Off: 150, Len: 100}}, size: 1000, have: cached(), want: []Run{{First: 1, Last: 2}}},
		"missing pages merge":  {ranges: []Range{{Off: 0, Len: 500}}, size: 1000, have: cached(), want: []Run{{First: 0, Last: 4}}},
		"cached page splits":   {ranges: []Range{{Off: 0, Len: 500}}, size: 1000, have: cached(2), want: []Run{{First: 0, Last: 1}, {First: 2, Last: 2, Cached: true}, {First: 3, Last: 4}}},
		"all cached":           {ranges: []Range{{Off: 0, Len: 300}}, size: 1000, have: cached(0, 1, 2), want: []Run{{First: 0, Last: 2, Cached: true}}},
		"clamped at size":      {ranges: []Range{{Off: 950, Len: 500}}, size: 1000, have: cached(), want: []Run{{First: 9, Last: 9}}},
		"short last page":      {ranges: []Range{{Off: 1000, Len: 30}}, size: 1030, have: cached(), want: []Run{{First: 10, Last: 10}}},
		"gap page not fetched": {ranges: []Range{{Off: 0, Len: 10}, {Off: 250, Len: 10}}, size: 1000, have: cached(), want: []Run{{First: 0, Last: 0}, {First: 2, Last: 2}}},
		"neighbours merge across ranges": {ranges: []Range{{Off: 0, Len: 10}, {Off: 150, Len: 10}}, size: 1000, have: cached(),
			want: []Run{{First: 0, Last: 1}}},
		"ranges sharing a page": {ranges: []Range{{Off: 10, Len: 10}, {Off: 50, Len: 10}, {Off: 90, Len: 20}}, size: 1000, have: cached(),
			want: []Run{{First: 0, Last: 1}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			asked := map[int64]int{}
			got := PlanPages(tc.ranges, tc.size, ps, func(p int64) bool { asked[p]++; return tc.have(p) })
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("PlanPages = %+v, want %+v", got, tc.want)
			}
			for p, n := range asked {
				if n != 1 {
					t.Errorf("page %d asked %d times, want once", p, n)
				}
			}
		})
	}
}
