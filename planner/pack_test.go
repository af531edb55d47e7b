package planner

import (
	"fmt"
	"slices"
	"testing"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// The packer's decisions, split by split: which splits join the open
// endpoint and where the endpoint-wide limit ends up.
func TestPackerJoin(t *testing.T) {
	type split struct {
		bytes, rows, limit int64
		whole              bool
	}
	tests := []struct {
		name      string
		target    int64
		filtered  bool
		splits    []split
		endpoints [][]int // indexes of splits per endpoint
		limits    []int64 // each endpoint's limit
	}{
		{"small files share", 100, false, []split{{30, 10, 0, true}, {30, 10, 0, true}, {30, 10, 0, true}},
			[][]int{{0, 1, 2}}, []int64{0}},
		{"up to the target", 100, false, []split{{60, 10, 0, true}, {40, 10, 0, true}, {1, 10, 0, true}},
			[][]int{{0, 1}, {2}}, []int64{0, 0}},
		{"a split file stays alone and ends the run", 100, false,
			[]split{{10, 10, 0, true}, {90, 10, 0, false}, {90, 10, 0, false}, {10, 10, 0, true}, {10, 10, 0, true}},
			[][]int{{0}, {1}, {2}, {3, 4}}, []int64{0, 0, 0, 0}},
		{"a file of the target's size is its own", 100, false, []split{{100, 10, 0, true}, {10, 10, 0, true}},
			[][]int{{0}, {1}}, []int64{0, 0}},
		{"an unfiltered limit counts the endpoint's rows", 100, false,
			[]split{{10, 10, 0, true}, {10, 10, 0, true}, {10, 10, 3, true}},
			[][]int{{0, 1, 2}}, []int64{23}},
		{"a filtered limit is the scan's", 100, true,
			[]split{{10, 10, 5, true}, {10, 10, 5, true}},
			[][]int{{0, 1}}, []int64{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pk := &packer{target: tt.target, filtered: tt.filtered}
			var heads []*scandv1.ScanTask
			for i, s := range tt.splits {
				task := &scandv1.ScanTask{Path: fmt.Sprint(i), Rows: s.rows, Limit: s.limit, BatchRows: 7,
					RowFilter: &scandv1.ScanTask_Filter{Filter: "x > 1"}}
				if !pk.join(task, s.bytes, s.whole) {
					heads = append(heads, task)
				}
			}
			var got [][]int
			var limits []int64
			for _, h := range heads {
				var ids []int
				for _, p := range append([]string{h.Path}, morePaths(h)...) {
					var id int
					fmt.Sscan(p, &id)
					ids = append(ids, id)
				}
				for _, m := range h.More {
					if m.Limit != 0 || m.BatchRows != 0 || m.RowFilter != nil {
						t.Errorf("file %s of an endpoint keeps endpoint-wide fields: %v", m.Path, m)
					}
				}
				got, limits = append(got, ids), append(limits, h.Limit)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.endpoints) || !slices.Equal(limits, tt.limits) {
				t.Errorf("endpoints %v limits %v, want %v %v", got, limits, tt.endpoints, tt.limits)
			}
		})
	}
}

// maxFilesPerEndpoint caps an endpoint whatever the bytes allow.
func TestPackerCapsFiles(t *testing.T) {
	pk := &packer{target: 1 << 40}
	endpoints := 0
	for i := 0; i < 2000; i++ {
		if !pk.join(&scandv1.ScanTask{Path: "f", Rows: 1}, 1, true) {
			endpoints++
		}
	}
	if want := (2000 + maxFilesPerEndpoint - 1) / maxFilesPerEndpoint; endpoints != want {
		t.Errorf("%d endpoints, want %d", endpoints, want)
	}
}

func morePaths(h *scandv1.ScanTask) []string {
	var out []string
	for _, m := range h.More {
		out = append(out, m.Path)
	}
	return out
}
