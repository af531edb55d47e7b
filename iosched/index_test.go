package iosched_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/scand/scand/iosched"
)

// TestReadIndex pins how index ranges become requests: merged with each
// other across the hole, cut against the tail read when it was made, and
// counted apart from data.
func TestReadIndex(t *testing.T) {
	const size, tail = 4 << 20, 64 << 10
	tailOff := int64(size - tail)
	cases := []struct {
		name     string
		readTail bool // the footer was read (not served from the cache)
		ranges   []iosched.Range
		want     []read // requests after the tail read
	}{
		{"inside the tail", true, []iosched.Range{{Off: tailOff + 100, Len: 50}, {Off: tailOff + 10, Len: 20}}, nil},
		{"straddling the tail: only the part before it", true,
			[]iosched.Range{{Off: tailOff - 3000, Len: 1000}, {Off: tailOff - 2000, Len: 2500}}, []read{{tailOff - 3000, 3000}}},
		{"no tail read: one merged request", false,
			[]iosched.Range{{Off: tailOff - 3000, Len: 1000}, {Off: tailOff - 2000, Len: 2500}}, []read{{tailOff - 3000, 3500}}},
		{"far apart: two requests", true,
			[]iosched.Range{{Off: 1000, Len: 100}, {Off: 3_000_000, Len: 100}}, []read{{1000, 100}, {3_000_000, 100}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, data, rec := open(t, context.Background(), size, tail)
			if tc.readTail {
				readAt(t, f, data, size-8, 8)
			}
			before := len(rec.get())
			got, err := f.ReadIndex(tc.ranges)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range tc.ranges {
				if !bytes.Equal(got[i], data[r.Off:r.End()]) {
					t.Fatalf("range %d: wrong bytes", i)
				}
			}
			reqs := rec.get()[before:]
			if !slices.Equal(reqs, tc.want) {
				t.Fatalf("requests %v, want %v", reqs, tc.want)
			}
			st := f.Stats()
			var n int64
			for _, r := range tc.want {
				n += int64(r.n)
			}
			if st.IndexReads != int64(len(tc.want)) || st.IndexBytesFetched != n {
				t.Fatalf("index reads %d, bytes %d; want %d, %d", st.IndexReads, st.IndexBytesFetched, len(tc.want), n)
			}
		})
	}
}

func TestReadIndexOutside(t *testing.T) {
	f, _, _ := open(t, context.Background(), 1000, 100)
	if _, err := f.ReadIndex([]iosched.Range{{Off: 990, Len: 20}}); err == nil {
		t.Fatal("a range past the end was read")
	}
}
