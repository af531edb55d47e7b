package iosched_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/storagetest"
)

// A file of a mapped bucket is read straight from the mapping: every
// ReadAt is one read of exactly its bytes, announced ranges are not
// prefetched into buffers (scanner.Prefetch skips mapped sources), and no
// budget is held. A pread file of the same bucket layout is not mapped.
func TestMappedFileReads(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(dir, "f.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		opts   []local.Option
		mapped bool
	}{
		{"pread", nil, false},
		{"mmap", []local.Option{local.WithMmap()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := local.New(dir, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			s := iosched.New(b, iosched.Options{TailSize: 1 << 10})
			f, err := s.Open(ctx, storage.Info{Name: "f.parquet"})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Mapped() != tc.mapped {
				t.Fatalf("Mapped = %v, want %v", f.Mapped(), tc.mapped)
			}
			scanner.Prefetch(f, []scanner.Range{{Off: 0, Len: 100 << 10}, {Off: 200 << 10, Len: 50 << 10}})
			for _, r := range []struct {
				off, n int64
				err    error
			}{
				{0, 10, nil},
				{100 << 10, 64 << 10, nil},
				{int64(len(data)) - 5, 5, nil},
				{int64(len(data)) - 5, 10, io.EOF}, // cut at the end
			} {
				p := make([]byte, r.n)
				n, err := f.ReadAt(p, r.off)
				want := data[r.off:min(r.off+r.n, int64(len(data)))]
				if !errors.Is(err, r.err) && err != r.err || !bytes.Equal(p[:n], want) {
					t.Errorf("ReadAt [%d, %d) = %d, %v; want %d bytes, %v", r.off, r.off+r.n, n, err, len(want), r.err)
				}
			}
			if !tc.mapped {
				return
			}
			st := f.Stats()
			if st.Reads != 4 || st.BytesFetched != 10+64<<10+5+5 || st.BytesPlanned != 0 || s.PeakMemory() != 0 {
				t.Errorf("stats = %+v, peak memory %d: want 4 reads of exactly the bytes read, nothing planned or buffered", st, s.PeakMemory())
			}
		})
	}
}

// A mapped file truncated under the scheduler fails the read with
// storage.ErrChanged, and File.Err reports it for the server to classify.
func TestMappedFileTruncated(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.parquet")
	if err := os.WriteFile(p, make([]byte, 128<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := local.New(dir, local.WithMmap())
	if err != nil {
		t.Fatal(err)
	}
	f, err := iosched.New(b, iosched.Options{}).Open(context.Background(), storage.Info{Name: "f.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 4096), 8192); !errors.Is(err, storage.ErrChanged) {
		t.Errorf("ReadAt of the truncated mapped file = %v, want storage.ErrChanged", err)
	}
	if !errors.Is(f.Err(), storage.ErrChanged) {
		t.Errorf("Err = %v, want storage.ErrChanged", f.Err())
	}
}

// TestLocalTail checks the speculative tail read's size: LocalTailSize on
// local disk (a second read there is a system call, not a round trip),
// TailSize on other stores.
func TestLocalTail(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 256<<10)
	if err := os.WriteFile(filepath.Join(dir, "f.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	lb, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	mem := storagetest.NewMem(map[string][]byte{"f.parquet": data})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		bucket storage.Bucket
		opts   iosched.Options
		want   int64
	}{
		{"local default", lb, iosched.Options{}, iosched.DefaultLocalTailSize},
		{"local small TailSize", lb, iosched.Options{TailSize: 4 << 10}, 4 << 10},
		{"local LocalTailSize", lb, iosched.Options{LocalTailSize: 32 << 10}, 32 << 10},
		{"remote default", mem, iosched.Options{}, iosched.DefaultTailSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := iosched.New(tc.bucket, tc.opts).Open(ctx, storage.Info{Name: "f.parquet"})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.ReadAt(make([]byte, 8), int64(len(data))-8); err != nil {
				t.Fatal(err)
			}
			if st := f.Stats(); st.Reads != 1 || st.BytesFetched != tc.want {
				t.Errorf("reading the last 8 bytes: %d reads of %d bytes, want 1 of %d", st.Reads, st.BytesFetched, tc.want)
			}
		})
	}
}
