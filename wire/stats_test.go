package wire

import (
	"encoding/json"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

func TestStatsRoundTrip(t *testing.T) {
	cases := []*scandv1.StreamStats{
		{},
		{Path: "a/b.parquet", Rows: 1 << 40, Batches: 3, Reads: 7, BytesFetched: math.MaxInt64, BytesUsed: 5,
			BytesPlanned: 6, BytesWasted: 1, CacheHits: 2, Hole: 1 << 20, IoSeconds: 0.25, ElapsedSeconds: 1.5},
		{Path: "quote\"and\\slash\u00e9\n"},
	}
	for _, want := range cases {
		meta := MarshalStats(want)
		got, err := UnmarshalStats(meta)
		if err != nil {
			t.Fatalf("UnmarshalStats(%s): %v", meta, err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("round trip of %v gave %v (json %s)", want, got, meta)
		}
	}
}

// Today's keys, as plain JSON numbers: what clients older than the proto
// message parse.
func TestStatsPlainJSONKeys(t *testing.T) {
	meta := MarshalStats(&scandv1.StreamStats{Path: "p", Rows: 12, IoSeconds: 0.5})
	var m map[string]any
	if err := json.Unmarshal(meta, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"path", "rows", "batches", "reads", "bytes_fetched", "bytes_used", "bytes_planned",
		"bytes_wasted", "cache_hits", "hole", "io_seconds", "elapsed_seconds"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing from %s", k, meta)
		}
	}
	if m["rows"] != float64(12) {
		t.Errorf("rows = %#v, want the number 12", m["rows"])
	}
}

func TestStatsIgnoresUnknownKeys(t *testing.T) {
	st, err := UnmarshalStats([]byte(`{"rows": 3, "future_key": [1, 2]}`))
	if err != nil || st.Rows != 3 {
		t.Fatalf("got %v, %v", st, err)
	}
}

func FuzzUnmarshalStats(f *testing.F) {
	f.Add(MarshalStats(&scandv1.StreamStats{Path: "x", Rows: 1}))
	f.Add([]byte(`{"rows":"12"}`))
	f.Fuzz(func(t *testing.T, meta []byte) {
		st, err := UnmarshalStats(meta)
		if err != nil {
			return
		}
		again, err := UnmarshalStats(MarshalStats(st))
		if err != nil || marshalStatsString(st) != marshalStatsString(again) {
			t.Fatalf("re-encoding %v: %v, %v", st, again, err)
		}
	})
}

func marshalStatsString(st *scandv1.StreamStats) string { return string(MarshalStats(st)) }
