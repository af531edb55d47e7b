package storage_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

// countingBucket records what Expand asks of a bucket: Stats, Lists (by
// prefix), the objects the pruning was asked about, and the Infos the
// bucket produced (what a local bucket stats).
type countingBucket struct {
	*storagetest.Mem
	mu       sync.Mutex
	stats    int
	lists    []string
	asked    []string
	produced int
}

func (b *countingBucket) Stat(ctx context.Context, name string) (storage.Info, error) {
	b.mu.Lock()
	b.stats++
	b.mu.Unlock()
	return b.Mem.Stat(ctx, name)
}

func (b *countingBucket) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	b.mu.Lock()
	b.lists = append(b.lists, "List "+prefix)
	b.mu.Unlock()
	return b.Mem.List(ctx, prefix, fn)
}

func (b *countingBucket) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	b.mu.Lock()
	b.lists = append(b.lists, "ListPruned "+prefix)
	b.mu.Unlock()
	object := p.Object
	p.Object = func(name string) bool {
		b.mu.Lock()
		b.asked = append(b.asked, name)
		b.mu.Unlock()
		return object(name)
	}
	return b.Mem.ListPruned(ctx, prefix, p, func(info storage.Info) error {
		b.mu.Lock()
		b.produced++
		b.mu.Unlock()
		return fn(info)
	})
}

// A glob lists below its literal prefix only, never looks at objects in
// directories its segments cannot match, and stats nothing it does not
// return.
func TestExpandPrunes(t *testing.T) {
	objects := map[string][]byte{
		"a/b1/c/x.parquet":        nil,
		"a/b1/c/y.csv":            nil,
		"a/b1/c/deeper/x.parquet": nil,
		"a/b1/d/x.parquet":        nil,
		"a/b2/c/z.parquet":        nil,
		"a/b2/_tmp/x.parquet":     nil,
		"a/c/x.parquet":           nil,
	}
	for i := range 200 {
		objects[fmt.Sprintf("a/zz%03d/c/x.parquet", i)] = nil
		objects[fmt.Sprintf("a/b1/d/%03d.parquet", i)] = nil
		objects[fmt.Sprintf("other/%03d/f.parquet", i)] = nil
	}
	for _, tc := range []struct {
		pattern string
		want    []string
		lists   []string
		asked   int // objects the pruning is asked about
	}{
		{
			pattern: "a/b*/c/*.parquet",
			want:    []string{"a/b1/c/x.parquet", "a/b2/c/z.parquet"},
			lists:   []string{"ListPruned a/b"},
			asked:   3, // a/b1/c/{x.parquet,y.csv}, a/b2/c/z.parquet; not a/b1/d/, a/b1/c/deeper/, a/b2/_tmp/
		},
		{
			pattern: "a/b1/c/",
			want:    []string{"a/b1/c/deeper/x.parquet", "a/b1/c/x.parquet", "a/b1/c/y.csv"},
			lists:   []string{"ListPruned a/b1/c/"},
			asked:   3,
		},
		{
			pattern: "**/x.parquet",
			want: append([]string{"a/b1/c/deeper/x.parquet", "a/b1/c/x.parquet", "a/b1/d/x.parquet", "a/c/x.parquet"},
				func() (z []string) {
					for i := range 200 {
						z = append(z, fmt.Sprintf("a/zz%03d/c/x.parquet", i))
					}
					return z
				}()...),
			lists: []string{"ListPruned "},
			asked: len(objects) - 1, // all but a/b2/_tmp/x.parquet, in a hidden directory
		},
		{
			pattern: "a/b1/c/x.parquet",
			want:    []string{"a/b1/c/x.parquet"},
			lists:   nil, // one Stat
		},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			b := &countingBucket{Mem: storagetest.NewMem(objects)}
			infos, err := storage.Expand(context.Background(), b, tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := infoNames(infos); !slices.Equal(got, tc.want) {
				t.Errorf("Expand = %q, want %q", got, tc.want)
			}
			if !slices.Equal(b.lists, tc.lists) {
				t.Errorf("listings %q, want %q", b.lists, tc.lists)
			}
			if tc.lists == nil {
				if b.stats != 1 {
					t.Errorf("%d Stats, want 1", b.stats)
				}
				return
			}
			if b.stats != 0 {
				t.Errorf("%d Stats, want none", b.stats)
			}
			if len(b.asked) != tc.asked {
				t.Errorf("the pruning was asked about %d objects, want %d: %q", len(b.asked), tc.asked, b.asked)
			}
			if b.produced != len(tc.want) {
				t.Errorf("the bucket produced %d Infos, want only the %d matches", b.produced, len(tc.want))
			}
		})
	}
}
