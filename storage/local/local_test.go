package local_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/storagetest"
)

// write creates the files of objects under dir.
func write(t *testing.T, dir string, objects map[string][]byte) {
	t.Helper()
	for name, data := range objects {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newBucket(t *testing.T, objects map[string][]byte) *local.Bucket {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, objects)
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAcceptance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		return newBucket(t, objects)
	})
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string][]byte{"f": nil})
	if _, err := local.New(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("New(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := local.New(filepath.Join(dir, "f")); err == nil {
		t.Errorf("New(a file) succeeded")
	}
	// The root is resolved: a root reached through a symlink still
	// contains its files.
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip("symlinks:", err)
	}
	b, err := local.New(link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Stat(context.Background(), "f"); err != nil {
		t.Errorf("Stat(f) under a symlinked root: %v", err)
	}
}

// outside is a directory next to the root, with a file the bucket must
// never serve.
type fixture struct {
	b       *local.Bucket
	root    string // as the test created it
	outside string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	write(t, root, map[string][]byte{
		"data/a.parquet":     []byte("aaaa"),
		"data/sub/b.parquet": []byte("bbbbbb"),
	})
	write(t, outside, map[string][]byte{"secret.parquet": []byte("secret")})
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{b: b, root: root, outside: outside}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("symlinks:", err)
	}
}

// noRoot fails the test if err's message shows where the root lives.
func (f fixture) noRoot(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, p := range []string{f.root, f.b.Root()} {
		if strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q shows the server's path %q", what, err, p)
		}
	}
}

func TestEscapes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	symlink(t, filepath.Join(f.outside, "secret.parquet"), filepath.Join(f.root, "data", "file-out.parquet"))
	symlink(t, f.outside, filepath.Join(f.root, "data", "dir-out"))
	for _, name := range []string{
		"..",
		"../outside/secret.parquet",
		"a/../../outside/secret.parquet",
		"data/../../outside/secret.parquet",
		"./../outside/secret.parquet",
		filepath.ToSlash(filepath.Join(f.outside, "secret.parquet")),
		"/",
		"/etc/passwd",
		"data/file-out.parquet",
		"data/dir-out/secret.parquet",
		"data/dir-out/",
	} {
		_, err := f.b.Stat(ctx, name)
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("Stat(%q) = %v, want fs.ErrPermission", name, err)
		}
		f.noRoot(t, "Stat("+name+")", err)
		o, err := f.b.Open(ctx, storage.Info{Name: name})
		if err == nil {
			o.Close()
		}
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("Open(%q) = %v, want fs.ErrPermission", name, err)
		}
		f.noRoot(t, "Open("+name+")", err)
	}
	for _, prefix := range []string{"../", "../outside/", "data/dir-out/"} {
		err := f.b.List(ctx, prefix, func(storage.Info) error { return nil })
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("List(%q) = %v, want fs.ErrPermission", prefix, err)
		}
		f.noRoot(t, "List("+prefix+")", err)
	}
	// Symlinks that leave the root are not listed.
	if got, want := listNames(t, f.b, ""), []string{"data/a.parquet", "data/sub/b.parquet"}; !slices.Equal(got, want) {
		t.Errorf("List(\"\") = %q, want %q", got, want)
	}
	if _, err := storage.Expand(ctx, f.b, "data/**/secret.parquet"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Expand(data/**/secret.parquet) = %v, want fs.ErrNotExist", err)
	}
}

func listNames(t *testing.T, b storage.Bucket, prefix string) []string {
	t.Helper()
	var names []string
	if err := b.List(context.Background(), prefix, func(info storage.Info) error {
		names = append(names, info.Name)
		return nil
	}); err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return names
}

func TestSymlinkInside(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	symlink(t, "a.parquet", filepath.Join(f.root, "data", "link.parquet"))
	symlink(t, filepath.Join(f.root, "data", "sub"), filepath.Join(f.root, "sublink"))
	for name, size := range map[string]int64{"data/link.parquet": 4, "sublink/b.parquet": 6} {
		info, err := f.b.Stat(ctx, name)
		if err != nil {
			t.Errorf("Stat(%q): %v", name, err)
			continue
		}
		if info.Name != name || info.Size != size {
			t.Errorf("Stat(%q) = %+v, want its own name and size %d", name, info, size)
		}
		o, err := f.b.Open(ctx, info)
		if err != nil {
			t.Errorf("Open(%q): %v", name, err)
			continue
		}
		p := make([]byte, size)
		if err := o.ReadAt(ctx, p, 0); err != nil {
			t.Errorf("ReadAt(%q): %v", name, err)
		}
		o.Close()
	}
	// A symlink to a file is listed under its own name; a symlinked
	// directory is not walked into, but can be listed by naming it.
	if got, want := listNames(t, f.b, "data/"), []string{"data/a.parquet", "data/link.parquet", "data/sub/b.parquet"}; !slices.Equal(got, want) {
		t.Errorf("List(data/) = %q, want %q", got, want)
	}
	if got, want := listNames(t, f.b, "sublink/"), []string{"sublink/b.parquet"}; !slices.Equal(got, want) {
		t.Errorf("List(sublink/) = %q, want %q", got, want)
	}
}

func TestAbsoluteInsideRoot(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	abs := filepath.ToSlash(filepath.Join(f.b.Root(), "data", "a.parquet"))
	info, err := f.b.Stat(ctx, abs)
	if err != nil {
		t.Fatalf("Stat(%q): %v", abs, err)
	}
	if info.Name != "data/a.parquet" || info.Size != 4 {
		t.Errorf("Stat(%q) = %+v, want the root-relative name data/a.parquet and size 4", abs, info)
	}
	o, err := f.b.Open(ctx, storage.Info{Name: abs, Version: info.Version})
	if err != nil {
		t.Fatalf("Open(%q): %v", abs, err)
	}
	o.Close()
	dir := filepath.ToSlash(filepath.Join(f.b.Root(), "data")) + "/"
	if got, want := listNames(t, f.b, dir), []string{"data/a.parquet", "data/sub/b.parquet"}; !slices.Equal(got, want) {
		t.Errorf("List(%q) = %q, want %q", dir, got, want)
	}
	if got, want := listNames(t, f.b, dir+"a"), []string{"data/a.parquet"}; !slices.Equal(got, want) {
		t.Errorf("List(%q) = %q, want %q", dir+"a", got, want)
	}
	infos, err := storage.Expand(ctx, f.b, dir)
	if err != nil || len(infos) != 2 {
		t.Errorf("Expand(%q) = %v, %v; want both files", dir, infos, err)
	}
}

// TestUncleanNames checks that names and prefixes mean the same object
// however they are spelled.
func TestUncleanNames(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, name := range []string{"./data/a.parquet", "data//a.parquet", "data/sub/../a.parquet", "data/./a.parquet"} {
		info, err := f.b.Stat(ctx, name)
		if err != nil {
			t.Errorf("Stat(%q): %v", name, err)
		} else if info.Name != "data/a.parquet" {
			t.Errorf("Stat(%q).Name = %q, want data/a.parquet", name, info.Name)
		}
	}
	for _, prefix := range []string{"./data/", "data//", "data/sub/../", "./data/a", "data/sub/../a"} {
		if got, want := listNames(t, f.b, prefix), []string{"data/a.parquet"}; !strings.HasSuffix(prefix, "/") && !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		} else if strings.HasSuffix(prefix, "/") && len(got) != 2 {
			t.Errorf("List(%q) = %q, want both files below data/", prefix, got)
		}
	}
	for _, pattern := range []string{"./data/*.parquet", "./data/"} {
		if _, err := storage.Expand(ctx, f.b, pattern); err != nil {
			t.Errorf("Expand(%q): %v", pattern, err)
		}
	}
}

func TestDirectoryName(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, name := range []string{"data", "data/sub", "", "."} {
		_, err := f.b.Stat(ctx, name)
		if !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Stat(%q) = %v, want fs.ErrInvalid", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "trailing /") {
			t.Errorf("Stat(%q) = %q, want a hint to add a trailing /", name, err)
		}
		f.noRoot(t, "Stat("+name+")", err)
		o, err := f.b.Open(ctx, storage.Info{Name: name})
		if err == nil {
			o.Close()
		}
		if !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want fs.ErrInvalid", name, err)
		}
	}
	// Expand names a directory with or without the slash the same way to
	// the client: as an error that tells it what to do.
	if _, err := storage.Expand(ctx, f.b, "data"); !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), "trailing /") {
		t.Errorf("Expand(data) = %v, want fs.ErrInvalid suggesting a trailing /", err)
	}
}

func TestNotFoundMessages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, name := range []string{"missing.parquet", "data/missing.parquet", "nodir/x.parquet", "data/a.parquet/x"} {
		_, err := f.b.Stat(ctx, name)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%q) = %v, want fs.ErrNotExist", name, err)
		}
		f.noRoot(t, "Stat("+name+")", err)
		if !strings.Contains(err.Error(), name) {
			t.Errorf("Stat(%q) = %q, want the name in the message", name, err)
		}
		o, err := f.b.Open(ctx, storage.Info{Name: name})
		if err == nil {
			o.Close()
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%q) = %v, want fs.ErrNotExist", name, err)
		}
		f.noRoot(t, "Open("+name+")", err)
	}
	_, err := storage.Expand(ctx, f.b, "data/*.orc")
	f.noRoot(t, "Expand", err)
	if _, err := f.b.Stat(ctx, "a\x00b"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Stat(NUL) = %v, want fs.ErrInvalid", err)
	}
}

func TestChangedAfterStat(t *testing.T) {
	ctx := context.Background()
	for name, rewrite := range map[string]func(p string) error{
		"new size": func(p string) error { return os.WriteFile(p, []byte("longer content"), 0o644) },
		"same size, new mtime": func(p string) error {
			if err := os.WriteFile(p, []byte("AAAA"), 0o644); err != nil {
				return err
			}
			later := time.Now().Add(time.Hour)
			return os.Chtimes(p, later, later)
		},
		"truncated": func(p string) error { return os.Truncate(p, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			info, err := f.b.Stat(ctx, "data/a.parquet")
			if err != nil {
				t.Fatal(err)
			}
			if err := rewrite(filepath.Join(f.root, "data", "a.parquet")); err != nil {
				t.Fatal(err)
			}
			o, err := f.b.Open(ctx, info)
			if err == nil {
				o.Close()
			}
			if !errors.Is(err, storage.ErrChanged) {
				t.Errorf("Open with the Info from before the change = %v, want storage.ErrChanged", err)
			}
			f.noRoot(t, "Open", err)
		})
	}
	t.Run("removed", func(t *testing.T) {
		f := newFixture(t)
		info, err := f.b.Stat(ctx, "data/a.parquet")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(f.root, "data", "a.parquet")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.b.Open(ctx, info); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open of a removed file = %v, want fs.ErrNotExist", err)
		}
	})
}

// TestShrunkAfterOpen checks that a file truncated under an open handle
// fails reads of bytes it had at Open with storage.ErrChanged naming the
// file: neither a short success nor a bare "unexpected EOF".
func TestShrunkAfterOpen(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	info, err := f.b.Stat(ctx, "data/sub/b.parquet")
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.b.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := os.Truncate(filepath.Join(f.root, "data", "sub", "b.parquet"), 2); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ off, n int64 }{{0, 4}, {3, 2}, {1, 5}} {
		err := o.ReadAt(ctx, make([]byte, r.n), r.off)
		if !errors.Is(err, storage.ErrChanged) || errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "data/sub/b.parquet") {
			t.Errorf("ReadAt [%d, %d) of the shrunk file = %v, want storage.ErrChanged naming it", r.off, r.off+r.n, err)
		}
		f.noRoot(t, "ReadAt", err)
	}
	// A range past the end Open saw is still the caller's mistake.
	if err := o.ReadAt(ctx, make([]byte, 4), 6); !errors.Is(err, io.EOF) {
		t.Errorf("ReadAt at the end seen at Open = %v, want io.EOF", err)
	}
	if err := o.Recheck(ctx); !errors.Is(err, storage.ErrChanged) {
		t.Errorf("Recheck of the shrunk file = %v, want storage.ErrChanged", err)
	}
}

func TestClosedReads(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	o, err := f.b.Open(ctx, storage.Info{Name: "data/a.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	err = o.ReadAt(ctx, make([]byte, 1), 0)
	if !errors.Is(err, fs.ErrClosed) {
		t.Errorf("ReadAt after Close = %v, want fs.ErrClosed", err)
	}
	f.noRoot(t, "ReadAt after Close", err)
}

func TestListCancelled(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := f.b.List(ctx, "", func(storage.Info) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("List with a cancelled ctx = %v, want context.Canceled", err)
	}
}

// ListPruned does not walk into a directory the pruning refuses, and asks
// about no object it refuses by directory.
func TestListPrunedSkipsDirectories(t *testing.T) {
	b := newBucket(t, map[string][]byte{
		"a/keep/x.parquet": nil, "a/skip/x.parquet": nil, "a/skip/deeper/y.parquet": nil, "a/z.parquet": nil,
	})
	var dirs, objects []string
	p := storage.Pruning{
		Dir:    func(dir string) bool { dirs = append(dirs, dir); return dir != "a/skip/" },
		Object: func(name string) bool { objects = append(objects, name); return true },
	}
	var got []string
	if err := b.ListPruned(context.Background(), "a/", p, func(info storage.Info) error {
		got = append(got, info.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/keep/x.parquet", "a/z.parquet"}; !slices.Equal(got, want) {
		t.Errorf("ListPruned = %q, want %q", got, want)
	}
	slices.Sort(dirs)
	if want := []string{"a/keep/", "a/skip/"}; !slices.Equal(dirs, want) {
		t.Errorf("asked about directories %q, want %q", dirs, want)
	}
	if len(objects) != 2 {
		t.Errorf("asked about objects %q, want only the two outside a/skip/", objects)
	}
}
