//go:build unix

package local_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
)

// TestSymlinkRace flips a link inside the root between a file inside and
// a file outside, as fast as it can, while Open/ReadAt and Stat run on the
// link's name. No read may return the outside file's bytes: the check that
// the link stays inside and the open are one step (os.Root), not two.
func TestSymlinkRace(t *testing.T) {
	f := newFixture(t)
	secret := filepath.Join(f.outside, "secret.parquet") // "secret"
	link := filepath.Join(f.root, "data", "race.parquet")
	symlink(t, "a.parquet", link)
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Second)

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		tmp := link + ".tmp"
		for i := 0; !stop.Load(); i++ {
			target := "a.parquet"
			switch i % 3 {
			case 1:
				target = secret // absolute, outside
			case 2:
				target = "../../outside/secret.parquet" // relative, outside
			}
			os.Remove(tmp)
			if err := os.Symlink(target, tmp); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, link); err != nil { // atomic swap
				t.Error(err)
				return
			}
		}
	})
	var opens, inside4, refused int
	for time.Now().Before(deadline) {
		opens++
		o, err := f.b.Open(ctx, storage.Info{Name: "data/race.parquet"})
		if err != nil {
			if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Open during the race = %v, want success or fs.ErrPermission", err)
			}
			f.noRoot(t, "Open", err)
			refused++
			continue
		}
		p := make([]byte, o.Info().Size)
		err = o.ReadAt(ctx, p, 0)
		o.Close()
		if bytes.Contains(p, []byte("secret")) || o.Info().Size == 6 {
			t.Fatalf("read the outside file through the link: %q", p)
		}
		if err == nil && string(p) == "aaaa" {
			inside4++
		}
		if info, err := f.b.Stat(ctx, "data/race.parquet"); err == nil && info.Size == 6 {
			t.Fatalf("Stat reported the outside file: %+v", info)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d opens: %d read the inside file, %d refused", opens, inside4, refused)
	if inside4 == 0 || refused == 0 {
		t.Errorf("the race did not show both outcomes (inside %d, refused %d)", inside4, refused)
	}
}

// A symlink loop is the client's mistake (fs.ErrInvalid), not an internal
// error.
func TestSymlinkLoop(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	symlink(t, "loop-b", filepath.Join(f.root, "data", "loop-a"))
	symlink(t, "loop-a", filepath.Join(f.root, "data", "loop-b"))
	for _, name := range []string{"data/loop-a", "data/loop-a/x.parquet"} {
		_, err := f.b.Stat(ctx, name)
		if !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%q) = %v, want fs.ErrInvalid", name, err)
		}
		f.noRoot(t, "Stat", err)
		o, err := f.b.Open(ctx, storage.Info{Name: name})
		if err == nil {
			o.Close()
		}
		if !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%q) = %v, want fs.ErrInvalid", name, err)
		}
	}
	// A listing skips the loop.
	if got := listNames(t, f.b, "data/"); len(got) != 2 {
		t.Errorf("List(data/) = %q, want the two files", got)
	}
}

// A FIFO is not a file: Open refuses it at once instead of blocking.
func TestFIFORefused(t *testing.T) {
	f := newFixture(t)
	if err := syscall.Mkfifo(filepath.Join(f.root, "data", "fifo.parquet"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		o, err := f.b.Open(context.Background(), storage.Info{Name: "data/fifo.parquet"})
		if err == nil {
			o.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Open(fifo) = %v, want fs.ErrInvalid", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Open of a FIFO blocked")
	}
}

// rewriteInPlace writes same-size content into p and restores its
// modification time, the rewrite the old size+mtime version missed.
func rewriteInPlace(t *testing.T, p string, content []byte) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // let the change time move on coarse clocks
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// A same-size rewrite that restores the modification time changes the
// version (the change time moves), so a scan planned before it does not
// open the new bytes, and an open handle's Recheck reports it.
func TestRewriteInPlaceDetected(t *testing.T) {
	ctx := context.Background()
	for _, mmap := range []bool{false, true} {
		f := newFixture(t)
		b := f.b
		if mmap {
			b = mmapBucketAt(t, f.root)
		}
		p := filepath.Join(f.root, "data", "a.parquet")
		info, err := b.Stat(ctx, "data/a.parquet")
		if err != nil {
			t.Fatal(err)
		}
		o, err := b.Open(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if err := o.Recheck(ctx); err != nil {
			t.Fatalf("mmap %v: Recheck of an unchanged file = %v", mmap, err)
		}
		rewriteInPlace(t, p, []byte("AAAA"))
		err = o.Recheck(ctx)
		if !errors.Is(err, storage.ErrChanged) || !strings.Contains(err.Error(), "data/a.parquet") {
			t.Errorf("mmap %v: Recheck after a rewrite in place = %v, want storage.ErrChanged naming the file", mmap, err)
		}
		f.noRoot(t, "Recheck", err)
		if o2, err := b.Open(ctx, info); !errors.Is(err, storage.ErrChanged) {
			if err == nil {
				o2.Close()
			}
			t.Errorf("mmap %v: Open with the version from before the rewrite = %v, want storage.ErrChanged", mmap, err)
		}
	}
}

// Replacing a file by rename is safe: the open handle keeps the old file
// and its Recheck passes; a new Stat sees a new version.
func TestReplaceByRename(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	info, err := f.b.Stat(ctx, "data/a.parquet")
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.b.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	tmp := filepath.Join(f.root, "data", ".a.parquet.tmp")
	if err := os.WriteFile(tmp, []byte("AAAA"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.root, "data", "a.parquet")); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4)
	if err := o.ReadAt(ctx, p, 0); err != nil || string(p) != "aaaa" {
		t.Errorf("ReadAt of the old handle = %q, %v", p, err)
	}
	if err := o.Recheck(ctx); err != nil {
		t.Errorf("Recheck of the old handle = %v", err)
	}
	if now, err := f.b.Stat(ctx, "data/a.parquet"); err != nil || now.Version == info.Version {
		t.Errorf("Stat after the rename = %+v, %v; want a new version", now, err)
	}
}

func mmapBucketAt(t *testing.T, dir string) *local.Bucket {
	t.Helper()
	b, err := local.New(dir, local.WithMmap())
	if err != nil {
		t.Fatal(err)
	}
	return b
}
