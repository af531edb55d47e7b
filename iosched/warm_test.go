package iosched

import (
	"bytes"
	"testing"
	"time"
)

// A warmed small file costs one request, whatever its reader announces
// and reads afterwards, and its budget comes back at Close; larger files,
// and a budget without room, are left to the reader.
func TestWarm(t *testing.T) {
	cases := []struct {
		name      string
		size      int
		held      int64 // budget others hold while Warm runs
		wantReads int64 // after Warm
		charged   bool
	}{
		{"small file read whole", 10_000, 0, 1, true},
		{"exactly the tail", 64 << 10, 0, 1, true},
		{"larger than the tail", 100_000, 0, 0, false},
		{"no budget", 10_000, DefaultMemory - 4_000, 0, false},
		{"empty", 0, 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := pattern(tc.size)
			b, reads := countingBucket(t, map[string][]byte{"f": data})
			s := New(b, Options{})
			f := openFile(t, s, b, "f")
			s.budget.tryAcquire(tc.held)
			if err := f.Warm(); err != nil {
				t.Fatal(err)
			}
			s.budget.release(tc.held)
			if got := reads.Load(); got != tc.wantReads {
				t.Fatalf("Warm made %d requests, want %d", got, tc.wantReads)
			}
			if charged := s.budget.inUse.Load() > 0; charged != tc.charged {
				t.Fatalf("budget in use %d, charged %v, want %v", s.budget.inUse.Load(), charged, tc.charged)
			}
			if tc.size == 0 {
				f.Close()
				return
			}
			// A reader announces two column chunks, then reads them and the
			// footer.
			half := int64(tc.size / 2)
			f.Prefetch([]Range{{Off: 0, Len: half}, {Off: half, Len: int64(tc.size) - half - 8}})
			got := make([]byte, tc.size)
			for _, r := range []Range{{Off: int64(tc.size) - 8, Len: 8}, {Off: 0, Len: half}, {Off: half, Len: int64(tc.size) - half - 8}} {
				if _, err := f.ReadAt(got[r.Off:r.End()], r.Off); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, data) {
				t.Fatal("read the wrong bytes")
			}
			if tc.charged && reads.Load() != 1 {
				t.Fatalf("a warmed file took %d requests in all, want 1", reads.Load())
			}
			f.Close()
			if n := s.budget.inUse.Load(); n != 0 {
				t.Fatalf("%d bytes of budget still in use after Close", n)
			}
		})
	}
}

// A warmed file's ranges are lent from the tail, not refused: the native
// Parquet reader needs a borrow to decode a chunk without copying it, and
// falls back to reading the whole row group when it cannot have one.
func TestWarmedRangesAreLent(t *testing.T) {
	data := pattern(10_000)
	b, reads := countingBucket(t, map[string][]byte{"f": data})
	s := New(b, Options{})
	f := openFile(t, s, b, "f")
	defer f.Close()
	if err := f.Warm(); err != nil {
		t.Fatal(err)
	}
	f.Prefetch([]Range{{Off: 100, Len: 50}})
	got, release, ok, err := f.Borrow(100, 50)
	if err != nil || !ok {
		t.Fatalf("Borrow of a warmed range: ok %v, err %v", ok, err)
	}
	defer release()
	if !bytes.Equal(got, data[100:150]) {
		t.Fatal("borrowed bytes differ from the file's")
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("%d requests, want the one of Warm", n)
	}
}

// WarmData starts reading a remote file's data before its reader asks:
// the reader's own announcements inside it are not planned again, and
// its reads are served from that one request. A file larger than the
// limit is left to its reader.
func TestWarmData(t *testing.T) {
	const size = 1 << 20
	data := pattern(size)
	b, reads := countingBucket(t, map[string][]byte{"f": data})
	s := New(b, Options{})
	f := openFile(t, s, b, "f")
	defer f.Close()
	footer := make([]byte, 8)
	if _, err := f.ReadAt(footer, size-8); err != nil { // the tail, as Open's footer read
		t.Fatal(err)
	}
	if reads.Load() != 1 {
		t.Fatalf("%d requests for the tail", reads.Load())
	}
	f.WarmData(size - 1) // too large: nothing
	if reads.Load() != 1 {
		t.Fatal("WarmData read a file over its limit")
	}
	f.WarmData(8 << 20)
	deadline := time.Now().Add(5 * time.Second)
	for reads.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if reads.Load() != 2 {
		t.Fatalf("WarmData started %d requests before the reader asked, want 1", reads.Load()-1)
	}
	half := int64(size / 4)
	// The last column chunk runs on into the tail read for the footer: it
	// is served from the warmed data too, not read again.
	cross := Range{Off: size - DefaultTailSize - 1000, Len: 2000}
	f.Prefetch([]Range{{Off: 0, Len: half}, {Off: 2 * half, Len: half}, cross})
	got := make([]byte, size)
	for _, r := range []Range{{Off: 0, Len: half}, {Off: 2 * half, Len: half}, cross} {
		if _, err := f.ReadAt(got[r.Off:r.End()], r.Off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[r.Off:r.End()], data[r.Off:r.End()]) {
			t.Fatalf("range %+v: wrong bytes", r)
		}
	}
	if reads.Load() != 2 {
		t.Fatalf("%d requests in all, want the tail and the warmed data", reads.Load())
	}
}
