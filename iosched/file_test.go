package iosched_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

// read is one request that reached storage.
type read struct {
	off int64
	n   int
}

// recorder records the reads that reach storage and fails them with err
// when set.
type recorder struct {
	mu    sync.Mutex
	reads []read
	err   error
}

func (r *recorder) hook(_ context.Context, _ string, off int64, n int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, read{off, n})
	return r.err
}

func (r *recorder) get() []read {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]read(nil), r.reads...)
}

// open returns a File of size bytes (storagetest.Content) read through a
// scheduler with the given tail size, and the recorder behind it.
func open(t *testing.T, ctx context.Context, size int, tail int64) (*iosched.File, []byte, *recorder) {
	t.Helper()
	const name = "f.parquet"
	data := storagetest.Content(name, size)
	rec := &recorder{}
	b := storagetest.WithReadHook(storagetest.NewMem(map[string][]byte{name: data}), rec.hook)
	info, err := b.Stat(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := iosched.New(b, iosched.Options{TailSize: tail}).Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, data, rec
}

// readAt reads n bytes at off and checks them against data.
func readAt(t *testing.T, f *iosched.File, data []byte, off int64, n int) {
	t.Helper()
	p := make([]byte, n)
	got, err := f.ReadAt(p, off)
	if err != nil || got != n {
		t.Fatalf("ReadAt(%d bytes at %d) = %d, %v", n, off, got, err)
	}
	if !bytes.Equal(p, data[off:off+int64(n)]) {
		t.Fatalf("ReadAt(%d bytes at %d) read the wrong bytes", n, off)
	}
}

func TestTailRead(t *testing.T) {
	ctx := context.Background()
	f, data, rec := open(t, ctx, 1000, 100)
	if f.Size() != 1000 || f.Info().Name != "f.parquet" || f.Info().Version == "" {
		t.Fatalf("Info() = %+v", f.Info())
	}

	// The footer length and magic: one read of the whole tail.
	readAt(t, f, data, 992, 8)
	if got, want := rec.get(), []read{{900, 100}}; !equal(got, want) {
		t.Fatalf("reads after the first tail read = %v, want %v", got, want)
	}
	if got := f.Stats(); got.BytesFetched != 100 || got.BytesUsed != 8 || got.BytesUnused != 92 {
		t.Errorf("Stats() after the first tail read = %+v, want 100 bytes fetched, 8 used, 92 unused", got)
	}
	// The footer itself, and anything else in the tail: no more reads,
	// and bytes read twice are used once.
	readAt(t, f, data, 900, 92)
	readAt(t, f, data, 999, 1)
	readAt(t, f, data, 950, 50)
	if got := f.Stats(); got.Reads != 1 || got.BytesFetched != 100 || got.BytesUsed != 100 || got.BytesUnused != 0 {
		t.Errorf("Stats() after tail reads = %+v, want 1 read, 100 bytes fetched, 100 used", got)
	}

	// Before the tail, and straddling its start: one read each, of exactly
	// what was asked.
	readAt(t, f, data, 100, 50)
	readAt(t, f, data, 880, 40)
	if got, want := rec.get(), []read{{900, 100}, {100, 50}, {880, 40}}; !equal(got, want) {
		t.Errorf("reads = %v, want %v", got, want)
	}
	got := f.Stats()
	if got.Reads != 3 || got.BytesFetched != 190 || got.BytesUsed != 190 {
		t.Errorf("Stats() = %+v, want 3 reads, 190 bytes fetched, 190 used", got)
	}
	if got.IOSeconds < 0 {
		t.Errorf("IOSeconds = %v", got.IOSeconds)
	}
	if err := f.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
}

func equal(a, b []read) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDefaultTailSize(t *testing.T) {
	f, data, rec := open(t, context.Background(), 200_000, 0)
	readAt(t, f, data, 200_000-8, 8)
	if got, want := rec.get(), []read{{200_000 - iosched.DefaultTailSize, iosched.DefaultTailSize}}; !equal(got, want) {
		t.Errorf("reads = %v, want %v", got, want)
	}
}

func TestSmallerThanTail(t *testing.T) {
	f, data, rec := open(t, context.Background(), 50, 100)
	readAt(t, f, data, 10, 5)
	readAt(t, f, data, 0, 50)
	readAt(t, f, data, 42, 8)
	if got, want := rec.get(), []read{{0, 50}}; !equal(got, want) {
		t.Errorf("reads = %v, want %v: the whole file once", got, want)
	}
	if got := f.Stats(); got.Reads != 1 || got.BytesFetched != 50 || got.BytesUsed != 50 || got.BytesUnused != 0 {
		t.Errorf("Stats() = %+v", got)
	}
}

func TestZeroSize(t *testing.T) {
	f, _, rec := open(t, context.Background(), 0, 100)
	for _, tt := range []struct {
		off     int64
		n       int
		wantErr error
	}{
		{0, 0, nil},
		{0, 1, io.EOF},
		{10, 1, io.EOF},
	} {
		n, err := f.ReadAt(make([]byte, tt.n), tt.off)
		if n != 0 || err != tt.wantErr {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v; want 0, %v", tt.n, tt.off, n, err, tt.wantErr)
		}
	}
	if got := rec.get(); len(got) != 0 {
		t.Errorf("reads = %v, want none", got)
	}
	if err := iotest.TestReader(io.NewSectionReader(f, 0, 0), nil); err != nil {
		t.Error(err)
	}
}

// TestReadAtContract checks io.ReaderAt's rules at and past the end: n
// bytes copied and a non-nil error whenever n < len(p); io.EOF is returned
// as is.
func TestReadAtContract(t *testing.T) {
	const size = 1000
	tests := map[string]struct {
		off     int64
		n       int
		wantN   int
		wantErr error // errAny: any non-nil error
	}{
		"whole file":           {off: 0, n: size, wantN: size},
		"middle":               {off: 100, n: 200, wantN: 200},
		"zero length":          {off: 500, n: 0, wantN: 0},
		"zero length at end":   {off: size, n: 0, wantN: 0},
		"zero length past end": {off: size + 5, n: 0, wantN: 0},
		"runs past end":        {off: size - 10, n: 20, wantN: 10, wantErr: io.EOF},
		"from before the tail": {off: 500, n: 1000, wantN: 500, wantErr: io.EOF},
		"whole file plus one":  {off: 0, n: size + 1, wantN: size, wantErr: io.EOF},
		"at end":               {off: size, n: 1, wantN: 0, wantErr: io.EOF},
		"after end":            {off: size + 100, n: 1, wantN: 0, wantErr: io.EOF},
		"negative offset":      {off: -1, n: 1, wantN: 0, wantErr: errAny},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f, data, _ := open(t, context.Background(), size, 100)
			p := make([]byte, tt.n)
			n, err := f.ReadAt(p, tt.off)
			if n != tt.wantN {
				t.Errorf("n = %d, want %d", n, tt.wantN)
			}
			switch {
			case tt.wantErr == errAny:
				if err == nil {
					t.Errorf("err = nil, want an error")
				}
			case err != tt.wantErr:
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if n > 0 && !bytes.Equal(p[:n], data[tt.off:tt.off+int64(n)]) {
				t.Errorf("the %d bytes read are wrong", n)
			}
			if err := f.Err(); err != nil {
				t.Errorf("Err() = %v, want nil: reading past the end is no storage failure", err)
			}
		})
	}
}

var errAny = errors.New("any error")

func TestIOTest(t *testing.T) {
	for _, tt := range []struct {
		size int
		tail int64
	}{
		{1, 100}, {99, 100}, {100, 100}, {101, 100}, {10_000, 100}, {10_000, 4096}, {100_003, 0},
	} {
		t.Run(fmt.Sprintf("size=%d,tail=%d", tt.size, tt.tail), func(t *testing.T) {
			f, data, _ := open(t, context.Background(), tt.size, tt.tail)
			if err := iotest.TestReader(io.NewSectionReader(f, 0, int64(tt.size)), data); err != nil {
				t.Error(err)
			}
			// A section that ends inside the tail.
			mid := int64(tt.size / 3)
			if err := iotest.TestReader(io.NewSectionReader(f, mid, int64(tt.size)-mid-1), data[mid:tt.size-1]); err != nil {
				t.Error(err)
			}
			// A section that runs past the end reads what there is.
			got, err := io.ReadAll(io.NewSectionReader(f, mid, int64(tt.size)))
			if err != nil || !bytes.Equal(got, data[mid:]) {
				t.Errorf("ReadAll of a section past the end = %d bytes, %v; want %d bytes", len(got), err, len(data[mid:]))
			}
		})
	}
}

func TestStorageFailure(t *testing.T) {
	boom := errors.New("connection reset")
	t.Run("tail", func(t *testing.T) {
		f, _, rec := open(t, context.Background(), 1000, 100)
		rec.err = boom
		if _, err := f.ReadAt(make([]byte, 8), 992); !errors.Is(err, boom) {
			t.Errorf("ReadAt in the tail = %v, want the storage error", err)
		}
		if _, err := f.ReadAt(make([]byte, 8), 950); !errors.Is(err, boom) {
			t.Errorf("second ReadAt in the tail = %v, want the storage error", err)
		}
		if err := f.Err(); !errors.Is(err, boom) {
			t.Errorf("Err() = %v, want the storage error", err)
		}
		if got := f.Stats(); got.BytesFetched != 0 {
			t.Errorf("BytesFetched = %d after failed reads, want 0", got.BytesFetched)
		}
	})
	t.Run("before the tail", func(t *testing.T) {
		f, data, rec := open(t, context.Background(), 1000, 100)
		readAt(t, f, data, 995, 5)
		if _, err := f.ReadAt(make([]byte, 1), 1000); err != io.EOF {
			t.Errorf("ReadAt at the end = %v, want io.EOF", err)
		}
		if err := f.Err(); err != nil {
			t.Errorf("Err() after io.EOF = %v, want nil", err)
		}
		rec.err = boom
		if _, err := f.ReadAt(make([]byte, 10), 0); !errors.Is(err, boom) {
			t.Errorf("ReadAt = %v, want the storage error", err)
		}
		rec.err = errors.New("a later failure")
		f.ReadAt(make([]byte, 10), 0)
		if err := f.Err(); !errors.Is(err, boom) {
			t.Errorf("Err() = %v, want the first storage error", err)
		}
		// Reads in the tail were fetched before the failure and still work.
		readAt(t, f, data, 990, 10)
	})
}

func TestConcurrentReadAt(t *testing.T) {
	const size = 100_000
	f, data, rec := open(t, context.Background(), size, 4096)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for i := range 100 {
				off := r.Int64N(size)
				if i%2 == 0 {
					off = size - 1 - r.Int64N(4096) // in the tail
				}
				p := make([]byte, r.IntN(2048)+1)
				n, err := f.ReadAt(p, off)
				if err != nil && !(err == io.EOF && off+int64(len(p)) > size) {
					errs <- fmt.Errorf("ReadAt(%d bytes at %d) = %d, %v", len(p), off, n, err)
					return
				}
				if !bytes.Equal(p[:n], data[off:off+int64(n)]) {
					errs <- fmt.Errorf("ReadAt(%d bytes at %d) read the wrong bytes", len(p), off)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tailReads := 0
	for _, r := range rec.get() {
		if r.off == size-4096 && r.n == 4096 {
			tailReads++
		}
	}
	if tailReads != 1 {
		t.Errorf("the tail was fetched %d times, want once", tailReads)
	}
	if got := f.Stats(); got.Reads != int64(len(rec.get())) {
		t.Errorf("Stats().Reads = %d, storage saw %d", got.Reads, len(rec.get()))
	}
}

// TestCancel checks that the ctx given to Open bounds every later read,
// including reads served from the tail already fetched.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, data, rec := open(t, ctx, 1000, 100)
	readAt(t, f, data, 992, 8)
	cancel()
	for _, off := range []int64{992, 950, 0} {
		if _, err := f.ReadAt(make([]byte, 8), off); !errors.Is(err, context.Canceled) {
			t.Errorf("ReadAt at %d after cancel = %v, want context.Canceled", off, err)
		}
	}
	if err := f.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err() = %v, want context.Canceled", err)
	}
	if got := rec.get(); len(got) != 1 {
		t.Errorf("reads = %v, want only the tail read from before the cancel", got)
	}
}

func TestCancelBeforeFirstRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, _, _ := open(t, ctx, 1000, 100)
	cancel()
	if _, err := f.ReadAt(make([]byte, 8), 992); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadAt = %v, want context.Canceled", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	b := storagetest.NewMem(map[string][]byte{"a": []byte("abc")})
	s := iosched.New(b, iosched.Options{})
	if _, err := s.Open(ctx, storage.Info{Name: "a", Version: "stale"}); !errors.Is(err, storage.ErrChanged) {
		t.Errorf("Open with a stale version = %v, want storage.ErrChanged", err)
	}
	if _, err := s.Open(ctx, storage.Info{Name: "missing"}); !storage.IsNotFound(err) {
		t.Errorf("Open(missing) = %v, want not found", err)
	}
	// Size comes from the object, not from the caller's Info.
	f, err := s.Open(ctx, storage.Info{Name: "a", Size: 999})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size() != 3 {
		t.Errorf("Size() = %d, want 3", f.Size())
	}
}

func TestStatsAdd(t *testing.T) {
	s := iosched.Stats{Reads: 1, BytesFetched: 10, BytesUsed: 5, IOSeconds: 0.5}
	s.Add(iosched.Stats{Reads: 2, BytesFetched: 20, BytesUsed: 15, IOSeconds: 0.25})
	if want := (iosched.Stats{Reads: 3, BytesFetched: 30, BytesUsed: 20, IOSeconds: 0.75}); s != want {
		t.Errorf("Add = %+v, want %+v", s, want)
	}
}
