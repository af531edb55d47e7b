package iosched

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

// TestMetaCacheLookups counts hits and misses as the metrics export them.
func TestMetaCacheLookups(t *testing.T) {
	s := &Scheduler{cache: newMetaCache(1 << 20)}
	s.cache.get("a") // miss
	s.cache.put("a", "a", "v1", 1, 10)
	s.cache.get("a") // hit
	s.cache.get("a") // hit
	s.cache.get("b") // miss
	if h, m := s.MetaCacheLookups(); h != 2 || m != 2 {
		t.Errorf("MetaCacheLookups = %d hits, %d misses; want 2, 2", h, m)
	}
}

// lazyVersionBucket opens objects that know their version only once read,
// as S3 does when opened by size alone (storage/s3's Open).
type lazyVersionBucket struct {
	storage.Bucket
	stats *atomic.Int64
}

func (b lazyVersionBucket) Stat(ctx context.Context, name string) (storage.Info, error) {
	b.stats.Add(1)
	return b.Bucket.Stat(ctx, name)
}

func (b lazyVersionBucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	o, err := b.Bucket.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	lo := &lazyVersionObject{Object: o}
	lo.read.Store(info.Version != "")
	return lo, nil
}

type lazyVersionObject struct {
	storage.Object
	read atomic.Bool // or opened with its version
}

func (o *lazyVersionObject) ReadAt(ctx context.Context, p []byte, off int64) error {
	o.read.Store(true)
	return o.Object.ReadAt(ctx, p, off)
}

func (o *lazyVersionObject) Info() storage.Info {
	info := o.Object.Info()
	if !o.read.Load() {
		info.Version = ""
	}
	return info
}

// A file opened without its version caches its metadata under the
// version its first read learned, so that the next Open naming that
// version (a stream's ticket) finds it; an Open without the version (the
// next plan) is reopened at the version cached, with no Stat, and finds
// it too.
func TestMetadataCachedUnderLearnedVersion(t *testing.T) {
	ctx := context.Background()
	mem := storagetest.NewMem(map[string][]byte{"f": bytes.Repeat([]byte("x"), 1000)})
	var stats atomic.Int64
	s := New(lazyVersionBucket{mem, &stats}, Options{})
	f, err := s.Open(ctx, storage.Info{Name: "f", Size: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.CachedMetadata("k"); ok {
		t.Fatal("a hit before the version is known")
	}
	if _, err := f.ReadAt(make([]byte, 8), 992); err != nil {
		t.Fatal(err)
	}
	info := f.Info()
	if info.Version == "" {
		t.Fatal("Info has no version after a read")
	}
	f.CacheMetadata("k", "footer", 10)
	f.Close()
	g, err := s.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if v, ok := g.CachedMetadata("k"); !ok || v != "footer" {
		t.Errorf("Open with the learned version: CachedMetadata = %v, %v", v, ok)
	}
	if n := stats.Load(); n != 0 {
		t.Errorf("%d Stats before anything was cached, or with the version known; want none", n)
	}
	h, err := s.Open(ctx, storage.Info{Name: "f", Size: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if v, ok := h.CachedMetadata("k"); !ok || v != "footer" || stats.Load() != 0 {
		t.Errorf("Open by size with a footer cached: CachedMetadata = %v, %v after %d Stats, want a hit and none", v, ok, stats.Load())
	}
	if h.Info().Version != info.Version {
		t.Errorf("reopened at version %q, want %q", h.Info().Version, info.Version)
	}
}
