package local_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scand/scand/storage"
)

// Globs match listed names however the request spells them: absolute
// inside the root, with "." and ".." segments, doubled slashes. Outside
// the root they are refused, not "not found".
func TestExpandSpellings(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	root := filepath.ToSlash(f.b.Root())
	both := []string{"data/a.parquet", "data/sub/b.parquet"}
	for _, tc := range []struct {
		pattern string
		want    []string
		err     error
	}{
		{root + "/data/*.parquet", []string{"data/a.parquet"}, nil},
		{root + "/data/**/*.parquet", both, nil},
		{root + "/data/", both, nil},
		{"./data/*.parquet", []string{"data/a.parquet"}, nil},
		{"data//sub/*.parquet", []string{"data/sub/b.parquet"}, nil},
		{"data/sub/../*.parquet", []string{"data/a.parquet"}, nil},
		{"./", both, nil},
		{root + "/", both, nil},
		{root + "/data/a.parquet", []string{"data/a.parquet"}, nil},
		{filepath.ToSlash(filepath.Dir(f.b.Root())) + "/*/data/*.parquet", nil, fs.ErrPermission},
		{"../*.parquet", nil, fs.ErrPermission},
		{"data/../../*.parquet", nil, fs.ErrPermission},
	} {
		infos, err := storage.Expand(ctx, f.b, tc.pattern)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("Expand(%q) = %v, want %v", tc.pattern, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Expand(%q): %v", tc.pattern, err)
			continue
		}
		var got []string
		for _, info := range infos {
			got = append(got, info.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Expand(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}
