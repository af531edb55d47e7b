package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// onePerGroup is a filter keeping row 7 of each 500-row group.
func onePerGroup() string {
	vals := make([]string, 0, 80)
	for i := 7; i < 40000; i += 500 {
		vals = append(vals, fmt.Sprint(i))
	}
	return "id IN (" + strings.Join(vals, ", ") + ")"
}

// Small batches are gathered into one message: a packed endpoint of small
// files, and a file of tiny row groups, send few batches with every row in
// order; batch_rows turns it off, and a stream of large batches is sent as
// decoded. largeClient's checked allocator asserts that nothing leaks.
func TestSmallBatchesGathered(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 40; i++ {
		rec := idRecord(i*1000, 1000)
		writeParquet(t, dir, fmt.Sprintf("small/%02d.parquet", i), rec, 1000)
		rec.Release()
	}
	rec := idRecord(0, 40000)
	writeParquet(t, dir, "groups.parquet", rec, 500) // 80 row groups of 500 rows
	rec.Release()
	rec = idRecord(0, 300000)
	writeParquet(t, dir, "big.parquet", rec, 300000)
	rec.Release()
	stock, _ := largeClient(t, dir)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		req     map[string]any
		rows    int64
		batches int64
	}{
		{"packed small files", map[string]any{"paths": []string{"small/"}}, 40000, 1},
		{"tiny row groups", map[string]any{"paths": []string{"groups.parquet"}}, 40000, 1},
		{"batch_rows set: as decoded", map[string]any{"paths": []string{"small/"}, "batch_rows": 1000}, 40000, 40},
		{"filtered to one row per group", map[string]any{"paths": []string{"groups.parquet"}, "filter": onePerGroup()}, 80, 1},
		{"large batches: as decoded", map[string]any{"paths": []string{"big.parquet"}}, 300000, 5}, // 64 Ki-row batches
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, st := streamIDs(ctx, t, stock, planTicket(ctx, t, stock, tc.req))
			want := seq(0, 300000)[:tc.rows]
			if tc.req["filter"] != nil {
				want = want[:0]
				for i := int64(7); i < 40000; i += 500 {
					want = append(want, i)
				}
			}
			if !slices.Equal(ids, want) {
				t.Errorf("%d ids, not the %d wanted in order", len(ids), len(want))
			}
			if st.Batches != tc.batches {
				t.Errorf("%d batches, want %d", st.Batches, tc.batches)
			}
		})
	}
}
