package server

import (
	"context"
	"testing"
)

// A partition key repeated in a path ("p=1/p=2/") has its outermost
// value, as pyarrow.dataset(partitioning="hive") reads it: a filter p = 2
// matches nothing, p = 1 every row.
func TestHiveRepeatedKeyIsOutermost(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 3)
	writeParquet(t, dir, "ds/p=1/p=2/f.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	for filter, want := range map[string]int64{"p = 2": 0, "p = 1": 3} {
		res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"ds/"}, "filter": filter})
		if err != nil {
			t.Fatalf("%s: %v", filter, err)
		}
		if got := res.rows(); got != want {
			t.Errorf("%s: %d rows, want %d", filter, got, want)
		}
		res.release()
	}
}
