package iosched

import (
	"bytes"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

// Mostly-gap requests through the metrics wrapper: an object without span
// reads is never asked for them (so no "not supported" answer becomes the
// file's storage error, which the server would report instead of the
// decoder's), and one that declares them is read with one ReadSpans.
func TestSpanReadsAsDeclared(t *testing.T) {
	data := pattern(1 << 20)
	m := storage.NewMetrics(prometheus.NewRegistry())
	for _, caps := range []storage.Capabilities{{}, {SpanReads: true}} {
		mem := storagetest.NewMem(map[string][]byte{"f": data})
		mem.SetCapabilities(caps)
		b := storage.WithMetrics(mem, m, "mem")
		s := New(b, Options{Hole: 64 << 10, TailSize: 1})
		f := openFile(t, s, b, "f")
		if got := f.Capabilities(); got != caps {
			t.Errorf("File.Capabilities = %+v, want the object's %+v", got, caps)
		}
		var ranges []Range
		for off := int64(0); off+(16<<10) <= 512<<10; off += 32 << 10 {
			ranges = append(ranges, Range{Off: off, Len: 16 << 10})
		}
		f.Prefetch(ranges)
		for _, r := range ranges {
			buf := make([]byte, r.Len)
			if _, err := f.ReadAt(buf, r.Off); err != nil {
				t.Fatalf("%+v: ReadAt: %v", caps, err)
			}
			if !bytes.Equal(buf, data[r.Off:r.End()]) {
				t.Fatalf("%+v: wrong bytes at %d", caps, r.Off)
			}
		}
		if err := f.Err(); err != nil {
			t.Errorf("%+v: the file recorded a storage error: %v", caps, err)
		}
		if st := f.Stats(); st.Reads != 1 {
			t.Errorf("%+v: %d storage requests, want 1", caps, st.Reads)
		}
		f.Close()
	}
}
