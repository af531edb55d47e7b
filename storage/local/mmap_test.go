package local_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/storagetest"
)

func newMmapBucket(t *testing.T, objects map[string][]byte) (*local.Bucket, string) {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, objects)
	b, err := local.New(dir, local.WithMmap())
	if err != nil {
		t.Fatal(err)
	}
	return b, dir
}

// The mapped bucket passes the same acceptance suite as the pread one.
func TestMmapAcceptance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		b, _ := newMmapBucket(t, objects)
		return b
	})
}

// Objects of a WithMmap bucket say they are mapped, also through the
// metrics wrapper; pread objects and empty files (which cannot be mapped)
// do not.
func TestMmapObjectsAreMapped(t *testing.T) {
	objects := map[string][]byte{"a.parquet": []byte("PAR1 data PAR1"), "empty.parquet": nil}
	ctx := context.Background()
	mapped, _ := newMmapBucket(t, objects)
	pread := newBucket(t, objects)
	for _, tc := range []struct {
		name   string
		bucket storage.Bucket
		object string
		want   bool
	}{
		{"mmap", mapped, "a.parquet", true},
		{"mmap with metrics", storage.WithMetrics(mapped, nil, "local"), "a.parquet", true},
		{"mmap, empty file", mapped, "empty.parquet", false},
		{"pread", pread, "a.parquet", false},
		{"pread with metrics", storage.WithMetrics(pread, nil, "local"), "a.parquet", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.bucket.Open(ctx, storage.Info{Name: tc.object})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if got := o.Capabilities(); got != (storage.Capabilities{Mapped: tc.want, Local: true}) {
				t.Errorf("Capabilities = %+v, want Local, and Mapped %v", got, tc.want)
			}
			want := objects[tc.object]
			got := make([]byte, len(want))
			if err := o.ReadAt(ctx, got, 0); err != nil || !bytes.Equal(got, want) {
				t.Errorf("ReadAt = %q, %v; want %q", got, err, want)
			}
		})
	}
}

// A mapped file truncated under an open handle raises SIGBUS when a read
// touches a page it no longer has. The read fails with storage.ErrChanged,
// the process goes on, and other files still read.
func TestMmapTruncatedFileFailsTheRead(t *testing.T) {
	const size = 256 << 10
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	b, dir := newMmapBucket(t, map[string][]byte{"big.parquet": data, "other.parquet": []byte("other")})
	ctx := context.Background()
	o, err := b.Open(ctx, storage.Info{Name: "big.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := os.Truncate(filepath.Join(dir, "big.parquet"), 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		off, n  int64
		wantErr error
	}{
		{"first page", 0, 100, storage.ErrChanged},
		{"middle", size / 2, 64 << 10, storage.ErrChanged},
		{"last byte", size - 1, 1, storage.ErrChanged},
		{"past the mapped end", size, 1, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := o.ReadAt(ctx, make([]byte, tc.n), tc.off)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("ReadAt [%d, %d) of the truncated file = %v, want %v", tc.off, tc.off+tc.n, err, tc.wantErr)
			}
		})
	}
	if err := o.Recheck(ctx); !errors.Is(err, storage.ErrChanged) || !strings.Contains(err.Error(), "big.parquet") {
		t.Errorf("Recheck of the truncated file = %v, want storage.ErrChanged naming it", err)
	}
	// The fault left this goroutine's setting as it was.
	other, err := b.Open(ctx, storage.Info{Name: "other.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	got := make([]byte, 5)
	if err := other.ReadAt(ctx, got, 0); err != nil || string(got) != "other" {
		t.Errorf("ReadAt of another file after the fault = %q, %v", got, err)
	}
}

// Close waits for reads in progress, then unmaps; reads after Close fail
// with fs.ErrClosed instead of touching unmapped memory.
func TestMmapCloseWaitsForReads(t *testing.T) {
	data := bytes.Repeat([]byte{7}, 4<<20)
	b, _ := newMmapBucket(t, map[string][]byte{"a.parquet": data})
	ctx := context.Background()
	o, err := b.Open(ctx, storage.Info{Name: "a.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			buf := make([]byte, 1<<20)
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := o.ReadAt(ctx, buf, 1<<20)
				if errors.Is(err, fs.ErrClosed) {
					return
				}
				if err != nil || buf[0] != 7 || buf[len(buf)-1] != 7 {
					t.Errorf("ReadAt during Close = %v", err)
					return
				}
			}
		})
	}
	time.Sleep(10 * time.Millisecond)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if err := o.ReadAt(ctx, make([]byte, 1), 0); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("ReadAt after Close = %v, want fs.ErrClosed", err)
	}
	if err := o.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}
