package server

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/scand/scand/iosched"
)

func TestMetricsExported(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	defer rec.Release()
	writeParquet(t, dir, "a.parquet", rec, 100)
	reg := prometheus.NewRegistry()
	c := testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Mem: memory.NewGoAllocator(), Metrics: reg}))
	res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"a.parquet"}})
	if err != nil {
		t.Fatal(err)
	}
	res.release()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP scand_rows_sent_total Rows sent to clients.
# TYPE scand_rows_sent_total counter
scand_rows_sent_total 100
`), "scand_rows_sent_total"); err != nil {
		t.Error(err)
	}
	for _, name := range []string{"scand_decode_memory_budget_bytes", "scand_decode_memory_peak_bytes", "scand_streams_waiting", "scand_admission_overcommits_total"} {
		if n, _ := testutil.GatherAndCount(reg, name); n != 1 {
			t.Errorf("%s: %d series, want 1", name, n)
		}
	}
}
