package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The wiring exports what the server cannot know: storage requests per
// backend and the scheduler's hole per backend; and the server's own
// memory gauges split --io-memory as splitMemory and planShare say.
func TestWiringMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := serveFlags{decode: decodeShare{bytes: 1 << 20}}
	f.io.Memory = 8 << 20
	if _, err := newServer(context.Background(), f, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)), reg); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"scand_io_hole_bytes": 4, "scand_storage_requests_total": 4, "scand_decode_memory_budget_bytes": 1,
		"scand_meta_cache_hits_total": 1, "scand_meta_cache_misses_total": 1} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != want {
			t.Errorf("%s: %d series (%v), want %d", name, n, err, want)
		}
	}
	gauges := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if m := mf.GetMetric(); len(m) == 1 && m[0].GetGauge() != nil {
			gauges[mf.GetName()] = m[0].GetGauge().GetValue()
		}
	}
	for name, want := range map[string]float64{
		"scand_io_memory_budget_bytes":     8 << 20,
		"scand_io_prefetch_budget_bytes":   6 << 20, // less the planning share
		"scand_decode_memory_budget_bytes": 1 << 20,
		"scand_plan_memory_budget_bytes":   1 << 20, // 1/8 of --io-memory
	} {
		if gauges[name] != want {
			t.Errorf("%s = %v, want %v", name, gauges[name], want)
		}
	}
}

func TestPlanShare(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                      string
		prefetch, total, explicit int64
		want                      int64
	}{
		{"default: 1/8 of --io-memory", 512 * mib, 1024 * mib, 0, 128 * mib},
		{"default --io-memory", 512 * mib, 0, 0, 128 * mib},
		{"explicit", 512 * mib, 1024 * mib, 64 * mib, 64 * mib},
		{"at most half of prefetch", 100 * mib, 1024 * mib, 0, 50 * mib},
		{"nothing to share", 0, 1, 0, 0},
	} {
		if got := planShare(tc.prefetch, tc.total, tc.explicit); got != tc.want {
			t.Errorf("%s: planShare(%d, %d, %d) = %d, want %d", tc.name, tc.prefetch, tc.total, tc.explicit, got, tc.want)
		}
	}
}
