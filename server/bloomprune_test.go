package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFilterPrunesRowGroupsByBloom scans a pyarrow-written file whose ids
// are shuffled over 4 row groups of 500 (statistics span every group) with
// bloom filters on id and name, but not on nobloom (the same values).
func TestFilterPrunesRowGroupsByBloom(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "scanner", "parquet", "testdata", "bloom", "bloom.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := checkedServer(t, dir)
	cases := []struct {
		filter     string
		rows       int64
		minPruned  int64 // by bloom filters, of 4 (false positives allowed)
		maxPruned  int64
		statsPrune int64
	}{
		{"id = 1001", 0, 3, 4, 0},
		{"id = 1000", 1, 2, 3, 0},
		{"id IN (1001, 1003, 1005)", 0, 3, 4, 0},
		{"id IN (1, 1000)", 1, 2, 3, 0},
		{"id = 1001 AND nobloom > 0", 0, 3, 4, 0},
		{"id = 1001 OR name = 'n1000'", 1, 2, 3, 0},
		{"nobloom = 1001", 0, 0, 0, 0},
		{"id != 1001", 2000, 0, 0, 0},
		{"id = 1001 OR nobloom = 1000", 1, 0, 0, 0},
		{"id = 99999", 0, 0, 0, 4},
	}
	for _, tc := range cases {
		t.Run(tc.filter, func(t *testing.T) {
			res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"b.parquet"}, "columns": []string{"id", "name"}, "filter": tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			st := planStats(t, res.info)
			if st.RowGroupsPrunedByBloom < tc.minPruned || st.RowGroupsPrunedByBloom > tc.maxPruned || st.RowGroupsPruned != tc.statsPrune {
				t.Errorf("plan stats %v: want %d-%d row groups pruned by bloom filters, %d by statistics", st, tc.minPruned, tc.maxPruned, tc.statsPrune)
			}
			kept := st.RowGroups - st.RowGroupsPruned - st.RowGroupsPrunedByBloom
			if st.RowsWithFilter != 500*kept {
				t.Errorf("rows_with_filter %d for %d groups kept", st.RowsWithFilter, kept)
			}
			if res.rows() != tc.rows {
				t.Errorf("%d rows, want %d", res.rows(), tc.rows)
			}
		})
	}
}
