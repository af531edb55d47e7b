package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestPlanPredictsLateMaterialization: a filtered scan's plan says, per
// endpoint, whether its read is predicted to go late and why.
func TestPlanPredictsLateMaterialization(t *testing.T) {
	dir := t.TempDir()
	writeLateParquet(t, filepath.Join(dir, "late.parquet"), true)
	writeLateParquet(t, filepath.Join(dir, "plain.parquet"), false)
	c, _ := checkedServer(t, dir)
	values := []string{"k", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"}
	cases := []struct {
		path, filter string
		columns      []string
		want         string
	}{
		{"late.parquet", "k = 5", values, "yes: filter on k; 8 of 9 columns deferred"},
		{"late.parquet", "k = 5", []string{"k"}, "no: projection is only the filter columns"},
		{"late.parquet", "k = 5", []string{"v0"}, "no: the other columns hold under 1 MiB per row group"},
		// Without a page index: late from the page headers (flat columns).
		{"plain.parquet", "k = 5", values, "yes: filter on k; 8 of 9 columns deferred"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%v", tc.path, tc.columns), func(t *testing.T) {
			res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{tc.path}, "columns": tc.columns, "filter": tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			st := planStats(t, res.info)
			if len(st.LateMaterialization) != len(res.info.Endpoint) || len(st.LateMaterialization) == 0 {
				t.Fatalf("%d predictions for %d endpoints", len(st.LateMaterialization), len(res.info.Endpoint))
			}
			for i, lp := range st.LateMaterialization {
				if got := lp.Strategy + ": " + lp.Reason; got != tc.want {
					t.Errorf("endpoint %d: %s, want %s", i, got, tc.want)
				}
			}
		})
	}
}

// writeLateParquet writes 2 row groups of 20000 rows: k in 0..99, and 8
// random double columns (1.25 MiB per group beside k), with or without a
// page index.
func writeLateParquet(t *testing.T, path string, pageIndex bool) {
	t.Helper()
	fields := []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}
	for i := range 8 {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("v%d", i), Type: arrow.PrimitiveTypes.Float64})
	}
	b := array.NewRecordBuilder(memory.NewGoAllocator(), arrow.NewSchema(fields, nil))
	defer b.Release()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 40000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i % 100))
		for c := 1; c <= 8; c++ {
			b.Field(c).(*array.Float64Builder).Append(r.Float64())
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(20000), parquet.WithPageIndexEnabled(pageIndex), parquet.WithDictionaryDefault(false))
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
