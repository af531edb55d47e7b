package planner

import (
	"context"
	"fmt"
	"testing"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// TestPlanExtremes: row groups whose exact statistics answer for every
// column (and that the filter holds on wholly) are folded into
// Plan.Extremes and get no task. plain/a.parquet holds ids 0..999 and
// amount id/10 in row groups of 250 (TestPlanCount's corpus).
func TestPlanExtremes(t *testing.T) {
	root := t.TempDir()
	writeGoldenCorpus(t, root)
	pl := testPlanner(t, root)
	for _, tc := range []struct {
		filter  string
		columns []string
		known   string // min..max by column
		groups  string // row groups of the tasks
	}{
		{"", []string{"id"}, "map[id:0..999]", "[]"},
		// amount's least is 0 in group 0: a zero's sign is not the data's.
		{"", []string{"amount"}, "map[amount:25..99.9]", "[[0]]"},
		{"", []string{"id", "amount"}, "map[amount:25..99.9 id:250..999]", "[[0]]"},
		{"id >= 500", []string{"id"}, "map[id:500..999]", "[]"},
		{"id >= 600", []string{"id"}, "map[id:750..999]", "[[2]]"},
		{"amount > 1000", []string{"id"}, "map[]", "[]"},
	} {
		req := &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, Columns: tc.columns}
		if tc.filter != "" {
			req.RowFilter = &scandv1.ScanRequest_Filter{Filter: tc.filter}
		}
		p, err := pl.PlanExtremes(context.Background(), req, tc.columns)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		known := map[string]string{}
		for c, st := range p.Extremes {
			if st.Min != nil {
				known[c] = fmt.Sprintf("%v..%v", st.Min, st.Max)
			}
		}
		var groups []string
		for _, task := range p.Tasks {
			groups = append(groups, fmt.Sprint(task.RowGroups))
		}
		if fmt.Sprint(known) != tc.known || fmt.Sprint(groups) != tc.groups {
			t.Errorf("%v WHERE %q: known %v, tasks %v; want %s, %s", tc.columns, tc.filter, known, groups, tc.known, tc.groups)
		}
	}
	name := &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, Columns: []string{"name"}}
	p, err := pl.PlanExtremes(context.Background(), name, name.Columns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("strings written by arrow-go: known %v, %d tasks", p.Extremes, len(p.Tasks))
	if _, err := pl.PlanExtremes(context.Background(), &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, Limit: 1}, []string{"id"}); err == nil {
		t.Error("PlanExtremes with a limit: no error")
	}
}
