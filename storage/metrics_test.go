package storage_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

func TestMetricsWrapper(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := storage.NewMetrics(reg)
	h := func(t *testing.T, objects map[string][]byte) storage.Bucket {
		return storage.WithMetrics(storagetest.NewMem(objects), m, "mem")
	}
	// The wrapper keeps the contract, and what the inner bucket declares.
	storagetest.Run(t, h)
	storagetest.RunWrapper(t, func(b storage.Bucket) storage.Bucket { return storage.WithMetrics(b, m, "mem") })

	reg = prometheus.NewRegistry()
	m = storage.NewMetrics(reg)
	b := storage.WithMetrics(storagetest.NewMem(map[string][]byte{"a": []byte("hello")}), m, "mem")
	ctx := context.Background()
	info, err := b.Stat(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := b.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 3)
	if err := obj.ReadAt(ctx, p, 1); err != nil {
		t.Fatal(err)
	}
	obj.Close()
	if _, err := b.Stat(ctx, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.Requests("mem", "read")); got != 1 {
		t.Errorf("reads = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.Requests("mem", "stat")); got != 2 {
		t.Errorf("stats = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.Failures("mem", "stat")); got != 0 {
		t.Errorf("a missing object counted as a failure: %v", got)
	}
	if got := testutil.ToFloat64(m.ReadBytes("mem")); got != 3 {
		t.Errorf("bytes = %v, want 3", got)
	}
}
