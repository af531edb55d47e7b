package iosched_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/iosched/rangecache"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

// TestPageCacheServesRepeatedScans: a second scan of an object-store file
// reads nothing from storage and says so in its figures; a local file is
// never cached; a rewritten object is read anew.
func TestPageCacheServesRepeatedScans(t *testing.T) {
	for _, spanReads := range []bool{true, false} {
		t.Run(map[bool]string{true: "span reads", false: "plain reads"}[spanReads], func(t *testing.T) { testPageCache(t, spanReads) })
	}
}

func testPageCache(t *testing.T, spanReads bool) {
	ctx := context.Background()
	const remote, local = "s3://b/f.parquet", "f.parquet"
	data := storagetest.Content(remote, 5<<20+123)
	rec := &recorder{}
	mem := storagetest.NewMem(map[string][]byte{remote: data, local: data})
	mem.SetCapabilities(storage.Capabilities{SpanReads: spanReads})
	b := storagetest.WithReadHook(mem, rec.hook)
	pc, err := rangecache.Open(rangecache.Options{Dir: t.TempDir(), DiskBytes: 64 << 20, MemoryBytes: 16 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	sched := iosched.New(b, iosched.Options{PageCache: pc, PageCacheStore: "test", Hole: 1})
	ranges := []iosched.Range{{Off: 100, Len: 1 << 20}, {Off: 3 << 20, Len: 500}, {Off: 4<<20 + 10, Len: 1 << 20}}
	scan := func(name string) iosched.Stats {
		t.Helper()
		info, err := b.Stat(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := sched.Open(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Prefetch(ranges)
		for _, r := range ranges {
			readAt(t, f, data, r.Off, int(r.Len))
		}
		readAt(t, f, data, int64(len(data))-8, 8) // the footer, through the tail read
		return f.Stats()
	}
	cold := scan(remote)
	// Only the footer may come from pages the scan itself fetched.
	if cold.Reads == 0 || cold.BytesFromCache > 64<<10 {
		t.Fatalf("cold scan: %+v", cold)
	}
	n := len(rec.get())
	warm := scan(remote)
	if got := len(rec.get()) - n; got != 0 || warm.Reads != 0 {
		t.Fatalf("warm scan sent %d reads to storage (stats %+v), want none", got, warm)
	}
	if warm.BytesFromCache < 2<<20 {
		t.Fatalf("warm scan: %d bytes from cache, want every byte read", warm.BytesFromCache)
	}
	before := pc.Stats().Fetches
	scan(local)
	scan(local)
	if pc.Stats().Fetches != before {
		t.Fatal("a local file went through the page cache")
	}
	// Overwritten: new content, new version, fetched again.
	data = storagetest.Content("other", len(data))
	mem.Put(remote, data)
	if st := scan(remote); st.Reads == 0 || st.BytesFromCache > 64<<10 {
		t.Fatalf("overwritten object served from cache: %+v", st)
	}
	if pc.Stats().StaleVersions != 1 {
		t.Fatalf("StaleVersions = %d, want 1", pc.Stats().StaleVersions)
	}
}
