package local_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
)

// Info.Target names what a read of a name reads, links resolved, in Stat,
// List and Open alike; a name read as itself has none.
func TestTarget(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	data := filepath.Join(f.root, "data")
	symlink(t, "sub/b.parquet", filepath.Join(data, "rel.parquet"))
	symlink(t, filepath.Join(f.b.Root(), "data", "a.parquet"), filepath.Join(data, "abs.parquet"))
	symlink(t, "data/sub", filepath.Join(f.root, "subdir"))
	want := map[string]string{
		"data/a.parquet":     "",
		"data/rel.parquet":   "data/sub/b.parquet",
		"data/abs.parquet":   "data/a.parquet",
		"subdir/b.parquet":   "data/sub/b.parquet",
		"data/sub/b.parquet": "",
	}
	for name, target := range want {
		info, err := f.b.Stat(ctx, name)
		if err != nil {
			t.Fatalf("Stat(%s): %v", name, err)
		}
		if info.Target != target {
			t.Errorf("Stat(%s).Target = %q, want %q", name, info.Target, target)
		}
		o, err := f.b.Open(ctx, info)
		if err != nil {
			t.Fatalf("Open(%s): %v", name, err)
		}
		if got := o.Info().Target; got != target {
			t.Errorf("Open(%s).Info().Target = %q, want %q", name, got, target)
		}
		o.Close()
	}
	for _, prefix := range []string{"data/", "subdir/"} {
		err := f.b.List(ctx, prefix, func(info storage.Info) error {
			if info.Target != want[info.Name] {
				t.Errorf("List(%s): %s has Target %q, want %q", prefix, info.Name, info.Target, want[info.Name])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Open's Target is where the descriptor is, not where the link led when
// the name was resolved: a link swapped after Stat shows its new target.
func TestOpenTargetIsTheDescriptors(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	link := filepath.Join(f.root, "data", "swap.parquet")
	symlink(t, "a.parquet", link)
	info, err := f.b.Stat(ctx, "data/swap.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	symlink(t, "sub/b.parquet", link)
	info.Version = "" // what the planner saw is not what a reader would check here
	for _, opts := range [][]local.Option{nil, {local.WithMmap()}} {
		b, err := local.New(f.root, opts...)
		if err != nil {
			t.Fatal(err)
		}
		o, err := b.Open(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Info().Target; got != "data/sub/b.parquet" {
			t.Errorf("Target after the swap = %q, want data/sub/b.parquet", got)
		}
		o.Close()
	}
}
