package storage_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

func TestAcceptanceMux(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		return &storage.Mux{Default: storagetest.NewMem(objects)}
	})
}

func TestMuxKeepsCapabilities(t *testing.T) {
	storagetest.RunWrapper(t, func(b storage.Bucket) storage.Bucket { return &storage.Mux{Default: b} })
}

func infoNames(infos []storage.Info) []string {
	var names []string
	for _, info := range infos {
		names = append(names, info.Name)
	}
	return names
}

func TestMuxRoutes(t *testing.T) {
	ctx := context.Background()
	local := storagetest.NewMem(map[string][]byte{"a.parquet": []byte("local")})
	s3 := storagetest.NewMem(map[string][]byte{
		"s3://b/top.parquet":          []byte("top"),
		"s3://b/dir/part-0.parquet":   []byte("p0"),
		"s3://b/dir/part-1.parquet":   []byte("p1"),
		"s3://b/dir/_SUCCESS":         nil,
		"s3://b/dir/sub/x.parquet":    []byte("x"),
		"s3://b/dir/sub/.x.crc":       []byte("crc"),
		"s3://other/dir/y.parquet":    []byte("y"),
		"s3://b/_hidden/part.parquet": []byte("h"),
	})
	m := &storage.Mux{Default: local}

	// Names without a scheme go to Default.
	info, err := m.Stat(ctx, "a.parquet")
	if err != nil || info.Size != 5 {
		t.Fatalf("Stat(a.parquet) = %+v, %v", info, err)
	}
	o, err := m.Open(ctx, info)
	if err != nil {
		t.Fatalf("Open(a.parquet): %v", err)
	}
	o.Close()
	if infos, err := storage.Expand(ctx, m, "*.parquet"); err != nil || !slices.Equal(infoNames(infos), []string{"a.parquet"}) {
		t.Errorf("Expand(*.parquet) = %v, %v", infoNames(infos), err)
	}

	// A scheme nobody serves.
	unsupported := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrUnsupported) {
			t.Errorf("%s = %v, want storage.ErrUnsupported", what, err)
		} else if !strings.Contains(err.Error(), "s3://") {
			t.Errorf("%s = %q, want the scheme in the message", what, err)
		}
	}
	_, err = m.Stat(ctx, "s3://b/top.parquet")
	unsupported("Stat(s3://b/top.parquet)", err)
	_, err = m.Open(ctx, storage.Info{Name: "s3://b/top.parquet"})
	unsupported("Open(s3://b/top.parquet)", err)
	err = m.List(ctx, "s3://b/", func(storage.Info) error { return nil })
	unsupported("List(s3://b/)", err)
	for _, pattern := range []string{"s3://b/top.parquet", "s3://b/dir/", "s3://b/dir/*.parquet"} {
		_, err = storage.Expand(ctx, m, pattern)
		unsupported("Expand("+pattern+")", err)
	}

	// Once registered, s3:// names go there, and only there.
	m.Handle("s3", s3)
	if info, err := m.Stat(ctx, "s3://b/top.parquet"); err != nil || info.Size != 3 || info.Name != "s3://b/top.parquet" {
		t.Errorf("Stat(s3://b/top.parquet) = %+v, %v", info, err)
	}
	if _, err := m.Stat(ctx, "s3://b/a.parquet"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(s3://b/a.parquet) = %v, want fs.ErrNotExist from the s3 backend", err)
	}
	if _, err := m.Stat(ctx, "dir/part-0.parquet"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(dir/part-0.parquet) = %v, want fs.ErrNotExist from Default", err)
	}
	if _, err := m.Stat(ctx, "gs://b/top.parquet"); !errors.Is(err, storage.ErrUnsupported) {
		t.Errorf("Stat(gs://...) = %v, want storage.ErrUnsupported", err)
	}
	o, err = m.Open(ctx, storage.Info{Name: "s3://b/top.parquet"})
	if err != nil {
		t.Fatalf("Open(s3://b/top.parquet): %v", err)
	}
	p := make([]byte, 3)
	if err := o.ReadAt(ctx, p, 0); err != nil || string(p) != "top" {
		t.Errorf("ReadAt = %q, %v", p, err)
	}
	o.Close()

	// Expand compares patterns and names without scheme and bucket.
	for pattern, want := range map[string][]string{
		"s3://b/top.parquet":       {"s3://b/top.parquet"},
		"s3://b/dir/":              {"s3://b/dir/part-0.parquet", "s3://b/dir/part-1.parquet", "s3://b/dir/sub/x.parquet"},
		"s3://b/dir/*.parquet":     {"s3://b/dir/part-0.parquet", "s3://b/dir/part-1.parquet"},
		"s3://b/dir/part-[1].*":    {"s3://b/dir/part-1.parquet"},
		"s3://b/**/x.parquet":      {"s3://b/dir/sub/x.parquet"},
		"s3://b/*/":                {"s3://b/dir/part-0.parquet", "s3://b/dir/part-1.parquet", "s3://b/dir/sub/x.parquet"},
		"s3://b/_hidden/*.parquet": {"s3://b/_hidden/part.parquet"},
		"s3://other/**":            {"s3://other/dir/y.parquet"},
	} {
		infos, err := storage.Expand(ctx, m, pattern)
		if err != nil || !slices.Equal(infoNames(infos), want) {
			t.Errorf("Expand(%q) = %q, %v; want %q", pattern, infoNames(infos), err, want)
		}
	}
	for _, pattern := range []string{"s3://b/nothing/", "s3://b/dir/*.orc", "s3://b/missing"} {
		if _, err := storage.Expand(ctx, m, pattern); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Expand(%q) = %v, want fs.ErrNotExist", pattern, err)
		}
	}
}

func TestMuxNoDefault(t *testing.T) {
	var m storage.Mux
	if _, err := m.Stat(context.Background(), "a.parquet"); !errors.Is(err, storage.ErrUnsupported) {
		t.Errorf("Stat without a Default = %v, want storage.ErrUnsupported", err)
	}
	if _, err := m.Stat(context.Background(), "s3://b/k"); !errors.Is(err, storage.ErrUnsupported) {
		t.Errorf("Stat(s3://b/k) on a zero Mux = %v, want storage.ErrUnsupported", err)
	}
}

func TestIsPattern(t *testing.T) {
	for name, want := range map[string]bool{
		"a.parquet":        false,
		"dir/a.parquet":    false,
		"s3://b/k.parquet": false,
		"":                 false,
		"dir/":             true,
		"s3://b/dir/":      true,
		"*.parquet":        true,
		"part-?.parquet":   true,
		"part-[ab]":        true,
		"**/x":             true,
	} {
		if got := storage.IsPattern(name); got != want {
			t.Errorf("IsPattern(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsNotFound(t *testing.T) {
	_, err := storagetest.NewMem(nil).Stat(context.Background(), "x")
	if !storage.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	if storage.IsNotFound(storage.ErrChanged) || storage.IsNotFound(nil) {
		t.Errorf("IsNotFound is true for other errors")
	}
}

// TestExpandCancelled checks that a cancelled listing fails Expand with the
// context's error rather than "no files match".
func TestExpandCancelled(t *testing.T) {
	b := storagetest.NewMem(map[string][]byte{"dir/a": []byte("a")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, pattern := range []string{"dir/", "dir/*", "dir/a"} {
		if _, err := storage.Expand(ctx, b, pattern); !errors.Is(err, context.Canceled) {
			t.Errorf("Expand(%q) with a cancelled ctx = %v, want context.Canceled", pattern, err)
		}
	}
}
