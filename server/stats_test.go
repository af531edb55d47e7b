package server

import (
	"encoding/json"
	"testing"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/wire"
)

// The figures keep their JSON keys and numbers on the wire, and come back
// whole.
func TestScanStatsWire(t *testing.T) {
	st := ScanStats{Path: "p.parquet", Rows: 7, Batches: 2, ElapsedSeconds: 1.5, Stats: iosched.Stats{
		Reads: 3, BytesFetched: 1 << 40, BytesUsed: 5, BytesPlanned: 6, BytesWasted: 7, CacheHits: 2, Hole: 1 << 20, IOSeconds: 0.25,
	}}
	meta := wire.MarshalStats(st.proto())
	var keys map[string]any
	if err := json.Unmarshal(meta, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"path", "rows", "batches", "reads", "bytes_fetched", "bytes_used", "bytes_planned", "bytes_wasted", "cache_hits", "hole", "io_seconds", "elapsed_seconds"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("key %q missing from %s", k, meta)
		}
	}
	if v, ok := keys["bytes_fetched"].(float64); !ok || v != 1<<40 {
		t.Errorf("bytes_fetched = %#v, want the number 2^40", keys["bytes_fetched"])
	}
	m, err := wire.UnmarshalStats(meta)
	if err != nil {
		t.Fatal(err)
	}
	if got := scanStatsOf(m); got != st {
		t.Errorf("round trip: %+v, want %+v", got, st)
	}
}
