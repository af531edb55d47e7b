package server

import (
	"context"
	"fmt"
	"testing"

)

// TestScanOfNoColumns: no_columns streams batches of no columns whose
// lengths add up to the rows, read by arrow-go's Flight reader; without a
// filter no stream reads a byte, with one only what straddles it is read.
// Files of ids 0..999 in row groups of 250.
func TestScanOfNoColumns(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		rec := sampleRecord(i*1000, 1000)
		defer rec.Release()
		writeParquet(t, dir, fmt.Sprintf("d/part-%d.parquet", i), rec, 250)
	}
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		req    map[string]any
		rows   int64
		reads  bool // some stream fetched bytes
		splits int
	}{
		{"footers", map[string]any{"paths": []string{"d/"}, "no_columns": true}, 3000, false, 1},
		{"a file per endpoint", map[string]any{"paths": []string{"d/"}, "no_columns": true, "split_bytes": 1}, 3000, false, 12},
		{"limit", map[string]any{"paths": []string{"d/"}, "no_columns": true, "limit": 1234}, 1234, false, 1},
		{"statistics decide", map[string]any{"paths": []string{"d/"}, "no_columns": true, "filter": "id >= 1000"}, 2000, false, 2},
		{"a straddling group", map[string]any{"paths": []string{"d/"}, "no_columns": true, "filter": "id >= 1100"}, 1900, true, 3},
		{"filter and limit", map[string]any{"paths": []string{"d/"}, "no_columns": true, "filter": "id >= 1100", "limit": 7}, 7, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := scanJSON(ctx, c, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			var rows int64
			for _, r := range res.records {
				if r.NumCols() != 0 {
					t.Fatalf("a batch of %d columns: %v", r.NumCols(), r.Schema())
				}
				rows += r.NumRows()
			}
			if rows != tc.rows {
				t.Errorf("%d rows, want %d", rows, tc.rows)
			}
			var fetched int64
			for _, st := range res.stats {
				fetched += st.BytesFetched
			}
			if (fetched > 0) != tc.reads {
				t.Errorf("streams fetched %d bytes; reads expected: %v", fetched, tc.reads)
			}
			if tc.splits > 0 && len(res.info.Endpoint) != tc.splits {
				t.Errorf("%d endpoints, want %d", len(res.info.Endpoint), tc.splits)
			}
			if len(res.stats) != len(res.info.Endpoint) {
				t.Errorf("%d streams carried figures of %d", len(res.stats), len(res.info.Endpoint))
			}
		})
	}
	if _, err := scanJSON(ctx, c, map[string]any{"paths": []string{"d/"}, "no_columns": true, "columns": []string{"id"}}); err == nil {
		t.Error("no_columns with columns: no error")
	}
}
