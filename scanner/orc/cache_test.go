package orc

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// cachingSource is a memSource with a scanner.MetadataCache, shared by the
// sources of one object as the IO scheduler's cache is.
type cachingSource struct {
	*memSource
	cache *sync.Map
}

func (c *cachingSource) CachedMetadata(kind string) (any, bool) { return c.cache.Load(kind) }
func (c *cachingSource) CacheMetadata(kind string, v any, _ int64) {
	c.cache.Store(kind, v)
}

// TestMetadataCache: the first Open and Project of an object read its tail
// and stripe footers and cache them; later Files on the same object read
// only stripe data, and decode the same rows.
func TestMetadataCache(t *testing.T) {
	data := readExample(t, "demo-11-zlib.orc") // 385 stripes
	cache := &sync.Map{}
	open := func() (*File, *memSource) {
		src := &cachingSource{memSource: &memSource{data: data}, cache: cache}
		f, err := Open(context.Background(), "demo-11", src, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		return f, src.memSource
	}
	f1, src1 := open()
	p1, err := f1.Project([]string{"_col1", "_col4"})
	if err != nil {
		t.Fatal(err)
	}
	if len(src1.reads) < 2 {
		t.Fatalf("first open made %d reads, want the tail and the stripe footers", len(src1.reads))
	}
	f2, src2 := open()
	if f2.fileMeta != f1.fileMeta {
		t.Fatal("second Open did not use the cached metadata")
	}
	p2, err := f2.Project([]string{"_col4"})
	if err != nil {
		t.Fatal(err)
	}
	if len(src2.reads) != 0 {
		t.Fatalf("cached Open and Project made %d reads: %v", len(src2.reads), src2.reads)
	}
	if p1.Groups[7].Rows != p2.Groups[7].Rows || p2.Groups[7].Bytes == 0 {
		t.Fatalf("groups: %+v vs %+v", p1.Groups[7], p2.Groups[7])
	}
	// Reading two stripes reads their data streams only: one merged range
	// each (the columns' streams of a stripe touch).
	rows := int64(0)
	err = f2.Read(context.Background(), p2, scanner.ReadOptions{Groups: []int{3, 200}}, func(rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		rec.Release()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := p2.Groups[3].Rows + p2.Groups[200].Rows; rows != want {
		t.Fatalf("read %d rows, want %d", rows, want)
	}
	if len(src2.reads) != 2 {
		t.Fatalf("reading 2 stripes made %d reads: %v", len(src2.reads), src2.reads)
	}
}
