package iosched

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

// spanBucket gives objects a ReadSpans that reads each span's range as
// one request would, and counts both kinds of read.
type spanBucket struct {
	storage.Bucket
	reads, spanReads atomic.Int64
	spanBytes        atomic.Int64
}

type spanObject struct {
	storage.Object
	b *spanBucket
}

func (b *spanBucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	o, err := b.Bucket.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	return &spanObject{Object: o, b: b}, nil
}

func (o *spanObject) ReadAt(ctx context.Context, p []byte, off int64) error {
	o.b.reads.Add(1)
	return o.Object.ReadAt(ctx, p, off)
}

// Capabilities declares the span reads spanObject adds.
func (o *spanObject) Capabilities() storage.Capabilities {
	c := o.Object.Capabilities()
	c.SpanReads = true
	return c
}

func (o *spanObject) ReadSpans(ctx context.Context, spans []storage.Span) error {
	o.b.spanReads.Add(1)
	r, err := storage.SpanRange(spans)
	if err != nil {
		return err
	}
	o.b.spanBytes.Add(r.End - r.Off)
	for _, s := range spans {
		if err := o.Object.ReadAt(ctx, s.Buf, s.Off); err != nil {
			return err
		}
	}
	return nil
}

// A merged request that is mostly gap is read with one ReadSpans: the
// needed ranges come back right, and only they are buffered.
func TestGapsDroppedWhileReading(t *testing.T) {
	data := pattern(1 << 20)
	for _, tc := range []struct {
		name      string
		rangeLen  int64
		gap       int64
		spanReads int64
	}{
		{"gaps as large as the ranges: over the tolerance", 16 << 10, 16 << 10, 1},
		{"small gaps: kept, one plain read", 16 << 10, 1 << 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &spanBucket{Bucket: storagetest.NewMem(map[string][]byte{"f": data})}
			s := New(b, Options{Hole: 64 << 10, TailSize: 1})
			f := openFile(t, s, b, "f")
			defer f.Close()
			var ranges []Range
			for off := int64(0); off+tc.rangeLen <= 512<<10; off += tc.rangeLen + tc.gap {
				ranges = append(ranges, Range{Off: off, Len: tc.rangeLen})
			}
			f.Prefetch(ranges)
			for _, r := range ranges {
				buf := make([]byte, r.Len)
				if _, err := f.ReadAt(buf, r.Off); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf, data[r.Off:r.End()]) {
					t.Fatalf("wrong bytes at %d", r.Off)
				}
			}
			if got := b.spanReads.Load(); got != tc.spanReads {
				t.Errorf("%d span reads, want %d", got, tc.spanReads)
			}
			if total := b.spanReads.Load() + b.reads.Load(); total != 1 {
				t.Errorf("%d storage requests, want 1", total)
			}
			last := ranges[len(ranges)-1]
			if tc.spanReads > 0 && b.spanBytes.Load() != last.End() {
				t.Errorf("span read covered %d bytes, want the merged range %d", b.spanBytes.Load(), last.End())
			}
			st := f.Stats()
			if st.BytesFetched != last.End() || st.BytesWasted != last.End()-int64(len(ranges))*tc.rangeLen {
				t.Errorf("stats %+v: fetched and wasted should count the whole merged range", st)
			}
			if used := s.budget.inUse.Load(); used != 0 {
				t.Errorf("%d bytes of budget still held", used)
			}
		})
	}
}
