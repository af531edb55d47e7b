package planner

import (
	"context"
	"fmt"
	"testing"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// TestPlanNoColumns: a scan of no columns plans rows_only tasks of no
// schema; without a filter every split, counted from the footers; with
// one, the counted row groups as a task per file that reads nothing and
// the straddling ones reading the filter's first column. The corpus is
// TestPlanCount's.
func TestPlanNoColumns(t *testing.T) {
	root := t.TempDir()
	writeGoldenCorpus(t, root)
	pl := testPlanner(t, root)
	for _, tc := range []struct {
		paths  string
		filter string
		limit  int64
		rows   int64  // the plan's rows: what counted tasks send, at most
		tasks  string // file:row groups:filtered, by task
	}{
		{"plain/a.parquet", "", 0, 1000, "[plain/a.parquet:[0 1 2 3]:false]"},
		{"plain/a.parquet", "", 10, 10, "[plain/a.parquet:[0 1 2 3]:false]"},
		{"plain/a.parquet", "id >= 500", 0, 500, "[plain/a.parquet:[]:false]"},
		{"plain/a.parquet", "id >= 600", 0, 500, "[plain/a.parquet:[2]:true plain/a.parquet:[]:false]"},
		{"plain/a.parquet", "id >= 600", 5, 5, "[plain/a.parquet:[2 3]:true]"},
		{"plain/a.parquet", "amount > 1000", 0, 0, "[]"},
		{"hive/", "city = 'ber' AND id < 260", 0, 200, "[hive/city=ber/day=2/part-0.parquet:[1]:true hive/city=ber/day=1/part-0.parquet:[]:false hive/city=ber/day=2/part-0.parquet:[]:false]"},
	} {
		req := &scandv1.ScanRequest{Paths: []string{tc.paths}, NoColumns: true, Limit: tc.limit}
		if tc.filter != "" {
			req.RowFilter = &scandv1.ScanRequest_Filter{Filter: tc.filter}
		}
		p, err := pl.Plan(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if p.Schema.NumFields() != 0 {
			t.Errorf("%s: schema %v, want no fields", tc.filter, p.Schema)
		}
		var tasks []string
		for _, task := range p.Tasks {
			if !task.RowsOnly {
				t.Errorf("%s: a task is not rows_only", tc.filter)
			}
			for _, ft := range append([]*scandv1.ScanTask{task}, task.More...) {
				tasks = append(tasks, fmt.Sprintf("%s:%v:%v", ft.Path, ft.RowGroups, task.RowFilter != nil))
			}
		}
		if p.Rows != tc.rows || fmt.Sprint(tasks) != tc.tasks {
			t.Errorf("%s WHERE %q LIMIT %d: rows %d, tasks %v; want %d, %s", tc.paths, tc.filter, tc.limit, p.Rows, tasks, tc.rows, tc.tasks)
		}
		if len(p.Late) != len(p.Tasks) {
			t.Errorf("%s: %d late predictions for %d tasks", tc.filter, len(p.Late), len(p.Tasks))
		}
	}
	if _, err := pl.Plan(context.Background(), &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, NoColumns: true, Columns: []string{"id"}}); err == nil {
		t.Error("no_columns with columns: no error")
	}
}
