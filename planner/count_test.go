package planner

import (
	"context"
	"fmt"
	"testing"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// TestPlanCount: row groups the statistics prove wholly inside the filter
// are counted and get no task; the rest are planned as Plan plans them.
// plain/a.parquet holds ids 0..999 in row groups of 250; hive/ three files
// of ids 0..299, city and day from the path.
func TestPlanCount(t *testing.T) {
	root := t.TempDir()
	writeGoldenCorpus(t, root)
	pl := testPlanner(t, root)
	for _, tc := range []struct {
		paths   string
		filter  string
		counted int64
		groups  string // row groups of the tasks, by file
	}{
		{"plain/a.parquet", "id >= 0", 1000, "[]"},
		{"plain/a.parquet", "id >= 500", 500, "[]"},
		{"plain/a.parquet", "id >= 600", 250, "[plain/a.parquet:[2]]"},
		{"plain/a.parquet", "id < 10 OR id >= 750", 250, "[plain/a.parquet:[0]]"},
		{"plain/a.parquet", "amount > 1000", 0, "[]"}, // pruned, not counted
		{"plain/a.parquet", "name = 'name-3'", 0, "[plain/a.parquet:[0 1 2 3]]"},
		{"hive/", "city = 'ber'", 200, "[]"}, // the partitions decide
		{"hive/", "city = 'ber' AND id < 260", 150, "[hive/city=ber/day=2/part-0.parquet:[1]]"},
	} {
		req := &scandv1.ScanRequest{Paths: []string{tc.paths}, Columns: []string{"id"},
			RowFilter: &scandv1.ScanRequest_Filter{Filter: tc.filter}}
		p, err := pl.PlanCount(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		var groups []string
		for _, task := range p.Tasks {
			for _, ft := range append([]*scandv1.ScanTask{task}, task.More...) {
				groups = append(groups, fmt.Sprintf("%s:%v", ft.Path, ft.RowGroups))
			}
		}
		if p.Counted != tc.counted || fmt.Sprint(groups) != tc.groups {
			t.Errorf("%s WHERE %s: counted %d, tasks %v; want %d, %s", tc.paths, tc.filter, p.Counted, groups, tc.counted, tc.groups)
		}
		if plain, err := pl.Plan(context.Background(), req); err != nil || plain.Counted != 0 {
			t.Errorf("%s: Plan counted %d (%v), want 0", tc.filter, plain.Counted, err)
		}
	}
	if _, err := pl.PlanCount(context.Background(), &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, Limit: 3}); err == nil {
		t.Error("PlanCount with a limit: no error")
	}
}
