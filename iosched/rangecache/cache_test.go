package rangecache

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/scand/scand/storage"
)

const testPage = 4096

// store is an object in memory whose fetches are counted.
type store struct {
	data    []byte
	fetches atomic.Int64
	bytes   atomic.Int64
	err     error
	gate    chan struct{} // when set, fetches wait for it
}

func newStore(size int) *store {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*7 + i/testPage)
	}
	return &store{data: b}
}

func (s *store) fetch(ctx context.Context, spans []storage.Span) error {
	if s.gate != nil {
		<-s.gate
	}
	s.fetches.Add(1)
	for i, sp := range spans {
		if i > 0 && sp.Off != spans[i-1].Off+int64(len(spans[i-1].Buf)) {
			panic("fetch of spans that are not back to back")
		}
		s.bytes.Add(int64(len(sp.Buf)))
	}
	if s.err != nil {
		return s.err
	}
	for _, sp := range spans {
		copy(sp.Buf, s.data[sp.Off:])
	}
	return nil
}

func (s *store) object(version string) Object {
	return Object{Store: "test", Name: "s3://b/data", Version: version, Size: int64(len(s.data))}
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func openCache(t *testing.T, opts Options) *Cache {
	t.Helper()
	opts.PageSize = testPage
	opts.Logger = quietLog()
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// read reads [off, off+n) through c and checks the bytes.
func read(t *testing.T, c *Cache, s *store, o Object, off, n int64) int64 {
	t.Helper()
	buf := make([]byte, n)
	from, err := c.Read(context.Background(), o, []storage.Span{{Off: off, Buf: buf}}, s.fetch)
	if err != nil {
		t.Fatalf("Read(%d, %d): %v", off, n, err)
	}
	if !bytes.Equal(buf, s.data[off:off+n]) {
		t.Fatalf("Read(%d, %d) returned wrong bytes", off, n)
	}
	return from
}

// flush waits for the disk writer to write what it was given.
func flush(c *Cache) {
	if c.disk != nil {
		c.disk.close()
		d := c.disk
		d.closed = false
		d.queue = make(chan diskWrite, cap(d.queue))
		d.startWriters()
	}
}

func TestReadCachesPages(t *testing.T) {
	for name, opts := range map[string]Options{
		"memory":    {MemoryBytes: 1 << 20},
		"disk":      {Dir: "", DiskBytes: 1 << 20},
		"both":      {MemoryBytes: 1 << 20, DiskBytes: 1 << 20},
		"no memory": {DiskBytes: 1 << 20},
	} {
		t.Run(name, func(t *testing.T) {
			if opts.DiskBytes > 0 {
				opts.Dir = t.TempDir()
			}
			s := newStore(10*testPage + 100)
			c := openCache(t, opts)
			o := s.object("v1")
			if from := read(t, c, s, o, 100, 3*testPage); from != 0 {
				t.Fatalf("cold read: %d bytes from cache, want 0", from)
			}
			if got := s.fetches.Load(); got != 1 {
				t.Fatalf("cold read of 4 neighbouring pages: %d fetches, want 1", got)
			}
			if got := s.bytes.Load(); got != 4*testPage {
				t.Fatalf("cold read fetched %d bytes, want 4 aligned pages", got)
			}
			flush(c)
			if from := read(t, c, s, o, 200, 3*testPage); from != 3*testPage {
				t.Fatalf("warm read: %d bytes from cache, want all", from)
			}
			// Pages 0-3 are cached: a read of 2-6 fetches 4-6 only, once.
			read(t, c, s, o, 2*testPage+5, 4*testPage)
			if got := s.fetches.Load(); got != 2 {
				t.Fatalf("%d fetches, want 2", got)
			}
			// The short last page.
			read(t, c, s, o, 10*testPage, 100)
			flush(c)
			if from := read(t, c, s, o, 10*testPage+10, 90); from != 90 {
				t.Fatalf("short last page: %d bytes from cache, want 90", from)
			}
		})
	}
}

func TestReadSpansSkipsGapPages(t *testing.T) {
	s := newStore(10 * testPage)
	c := openCache(t, Options{MemoryBytes: 1 << 20})
	a, b := make([]byte, 10), make([]byte, 10)
	_, err := c.Read(context.Background(), s.object("v"), []storage.Span{{Off: 5, Buf: a}, {Off: 8 * testPage, Buf: b}}, s.fetch)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, s.data[5:15]) || !bytes.Equal(b, s.data[8*testPage:8*testPage+10]) {
		t.Fatal("wrong bytes")
	}
	if got := s.bytes.Load(); got != 2*testPage {
		t.Fatalf("fetched %d bytes, want the two pages only", got)
	}
}

func TestConcurrentReadsFetchOnce(t *testing.T) {
	s := newStore(8 * testPage)
	s.gate = make(chan struct{})
	c := openCache(t, Options{MemoryBytes: 1 << 20})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { read(t, c, s, s.object("v"), 0, 8*testPage) })
	}
	for c.flightsLen() == 0 {
		runtimeGosched()
	}
	close(s.gate)
	wg.Wait()
	if got := s.bytes.Load(); got != 8*testPage {
		t.Fatalf("16 concurrent cold reads fetched %d bytes, want each page once (%d)", got, 8*testPage)
	}
}

func TestFailedSharedFetchIsRetried(t *testing.T) {
	s := newStore(2 * testPage)
	c := openCache(t, Options{MemoryBytes: 1 << 20})
	o := s.object("v")
	k := pageKey{page: 0}
	k.obj, k.ver = o.hashes()
	f := &flight{done: make(chan struct{}), err: context.Canceled}
	c.flights[k] = f // another scan's fetch, about to fail
	go func() { c.flightsMu.Lock(); delete(c.flights, k); c.flightsMu.Unlock(); close(f.done) }()
	read(t, c, s, o, 0, 2*testPage)
}

func TestFetchErrorReturned(t *testing.T) {
	s := newStore(2 * testPage)
	s.err = errors.New("store down")
	c := openCache(t, Options{MemoryBytes: 1 << 20, DiskBytes: 1 << 20, Dir: t.TempDir()})
	_, err := c.Read(context.Background(), s.object("v"), []storage.Span{{Off: 0, Buf: make([]byte, 10)}}, s.fetch)
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("Read = %v, want the store's error", err)
	}
	s.err = nil
	read(t, c, s, s.object("v"), 0, 10)
}

func TestNewVersionIsNewKey(t *testing.T) {
	dir := t.TempDir()
	s := newStore(4 * testPage)
	c := openCache(t, Options{MemoryBytes: 1 << 20, DiskBytes: 1 << 20, Dir: dir})
	read(t, c, s, s.object("v1"), 0, 4*testPage)
	flush(c)
	s2 := newStore(4 * testPage)
	for i := range s2.data {
		s2.data[i] ^= 0xff
	}
	if from := read(t, c, s2, s2.object("v2"), 0, 4*testPage); from != 0 {
		t.Fatalf("new version: %d bytes from cache, want 0", from)
	}
	if st := c.Stats(); st.StaleVersions != 1 {
		t.Fatalf("StaleVersions = %d, want 1", st.StaleVersions)
	}
	flush(c)
	if n := countPages(t, dir); n != 4 {
		t.Fatalf("%d page files after the overwrite, want the new version's 4", n)
	}
}

func countPages(t *testing.T, dir string) (n int) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, pageExt) {
			n++
		}
		return nil
	})
	return n
}

func dirBytes(t *testing.T, dir string) (n int64) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			n += info.Size()
		}
		return nil
	})
	return n
}

func TestRestartRebuildsIndex(t *testing.T) {
	dir := t.TempDir()
	s := newStore(6 * testPage)
	c := openCache(t, Options{DiskBytes: 1 << 20, Dir: dir})
	read(t, c, s, s.object("v"), 0, 6*testPage)
	c.Close()
	// Leftovers of a crash: a temporary file, junk in a page directory, a
	// truncated page.
	os.WriteFile(filepath.Join(dir, tmpPrefix+"99"), []byte("half"), 0o644)
	sub := filepath.Join(dir, "ab")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "junk.page"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(sub, "ab00000000000000-0000000000000000-0.page"), []byte("short"), 0o644)

	before := s.fetches.Load()
	c2 := openCache(t, Options{DiskBytes: 1 << 20, Dir: dir})
	if from := read(t, c2, s, s.object("v"), 0, 6*testPage); from != 6*testPage {
		t.Fatalf("after restart: %d bytes from cache, want all", from)
	}
	if s.fetches.Load() != before {
		t.Fatal("after restart the cached pages were fetched again")
	}
	for _, p := range []string{filepath.Join(dir, tmpPrefix+"99"), filepath.Join(sub, "junk.page")} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("leftover %s not removed", p)
		}
	}
}

func TestRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("data"), 0o644)
	if _, err := Open(Options{Dir: dir, DiskBytes: 1 << 20, Logger: quietLog()}); err == nil {
		t.Fatal("Open used a non-empty directory it did not create")
	}
}

func TestCorruptPageRefetched(t *testing.T) {
	for name, damage := range map[string]func(path string){
		"bit flip": func(path string) {
			b, _ := os.ReadFile(path)
			b[len(b)-1] ^= 1
			os.WriteFile(path, b, 0o644)
		},
		"torn": func(path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)/2], 0o644)
		},
		"empty": func(path string) { os.WriteFile(path, nil, 0o644) },
		"grown": func(path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, append(b, 0), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := newStore(2 * testPage)
			c := openCache(t, Options{DiskBytes: 1 << 20, Dir: dir})
			o := s.object("v")
			read(t, c, s, o, 0, 2*testPage)
			flush(c)
			k := pageKey{page: 1}
			k.obj, k.ver = o.hashes()
			damage(filepath.Join(dir, k.fileName()))
			if from := read(t, c, s, o, 0, 2*testPage); from != testPage {
				t.Fatalf("%d bytes from cache, want page 0's only", from)
			}
			if st := c.Stats(); st.CorruptPages != 1 {
				t.Fatalf("CorruptPages = %d, want 1", st.CorruptPages)
			}
			flush(c)
			if from := read(t, c, s, o, 0, 2*testPage); from != 2*testPage {
				t.Fatalf("after refetch: %d bytes from cache, want all", from)
			}
		})
	}
}

func TestDiskStaysWithinSize(t *testing.T) {
	dir := t.TempDir()
	const size = 16 * (testPage + headerSize)
	s := newStore(64 * testPage)
	c := openCache(t, Options{DiskBytes: size, Dir: dir})
	for off := int64(0); off < 64*testPage; off += 4 * testPage {
		read(t, c, s, s.object("v"), off, 4*testPage)
		flush(c)
		if got := dirBytes(t, dir) - markerSize(t, dir); got > size {
			t.Fatalf("cache directory holds %d bytes, more than %d", got, size)
		}
	}
	if st := c.Stats(); st.DiskEvictions == 0 || st.DiskBytes > size {
		t.Fatalf("stats %+v: want evictions and at most %d bytes", st, size)
	}
}

func markerSize(t *testing.T, dir string) int64 {
	info, err := os.Stat(filepath.Join(dir, markerFile))
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// faultFS fails operations as told: full disk, EIO, torn writes.
type faultFS struct {
	OSFS
	writeErr, readErr error
	torn              bool
}

func (f *faultFS) WriteFile(path string, parts ...[]byte) error {
	data := bytes.Join(parts, nil)
	if f.writeErr != nil && strings.Contains(path, tmpPrefix) {
		os.WriteFile(path, data[:len(data)/3], 0o644) // what a full disk leaves
		return f.writeErr
	}
	if f.torn {
		data = data[:len(data)/2]
	}
	return f.OSFS.WriteFile(path, data)
}

func (f *faultFS) ReadFileInto(path string, parts ...[]byte) error {
	if f.readErr != nil {
		return f.readErr
	}
	return f.OSFS.ReadFileInto(path, parts...)
}

func TestDiskFaultsDegrade(t *testing.T) {
	tests := map[string]struct {
		fs          *faultFS
		wantFailure bool
		wantCorrupt bool
	}{
		"disk full":    {fs: &faultFS{writeErr: syscall.ENOSPC}, wantFailure: true},
		"unwritable":   {fs: &faultFS{writeErr: fs.ErrPermission}, wantFailure: true},
		"EIO on write": {fs: &faultFS{writeErr: syscall.EIO}, wantFailure: true},
		"torn writes":  {fs: &faultFS{torn: true}, wantCorrupt: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := newStore(4 * testPage)
			c := openCache(t, Options{DiskBytes: 1 << 20, Dir: dir, FS: tc.fs})
			for range 3 {
				read(t, c, s, s.object("v"), 0, 4*testPage)
				flush(c)
			}
			st := c.Stats()
			if (st.DiskFailures > 0) != tc.wantFailure || (st.CorruptPages > 0) != tc.wantCorrupt {
				t.Fatalf("stats %+v", st)
			}
			if tc.wantFailure {
				if st.DiskFailures != 1 {
					t.Fatalf("DiskFailures = %d, want 1 (the tier turns off at the first)", st.DiskFailures)
				}
				if n := countPages(t, dir); n != 0 || dirBytes(t, dir) != markerSize(t, dir) {
					t.Fatalf("failed writes left %d pages or temporary files", n)
				}
			}
		})
	}
	t.Run("EIO on read", func(t *testing.T) {
		f := &faultFS{}
		s := newStore(4 * testPage)
		c := openCache(t, Options{DiskBytes: 1 << 20, Dir: t.TempDir(), FS: f})
		read(t, c, s, s.object("v"), 0, 4*testPage)
		flush(c)
		f.readErr = syscall.EIO
		if from := read(t, c, s, s.object("v"), 0, 4*testPage); from != 0 {
			t.Fatalf("%d bytes from a failing disk", from)
		}
		if st := c.Stats(); st.DiskFailures != 1 {
			t.Fatalf("DiskFailures = %d, want 1", st.DiskFailures)
		}
	})
}

func TestMemoryTierBounded(t *testing.T) {
	s := newStore(64 * testPage)
	c := openCache(t, Options{MemoryBytes: 8 * testPage})
	read(t, c, s, s.object("v"), 0, 64*testPage)
	if st := c.Stats(); st.MemBytes > 8*testPage || st.MemEvictions == 0 {
		t.Fatalf("stats %+v: memory tier over its %d bytes", st, 8*testPage)
	}
}

// TestDroppedWriteRetriedOnMemoryHit: a page the disk writer had no room
// for is written when it is next read from memory.
func TestDroppedWriteRetriedOnMemoryHit(t *testing.T) {
	dir := t.TempDir()
	s := newStore(4 * testPage)
	c := openCache(t, Options{MemoryBytes: 1 << 20, DiskBytes: 1 << 20, Dir: dir})
	c.disk.close() // no writer: every page is dropped
	c.disk.closed = false
	c.disk.queue = make(chan diskWrite)
	read(t, c, s, s.object("v"), 0, 4*testPage)
	if st := c.Stats(); st.DiskWritesDropped != 4 {
		t.Fatalf("DiskWritesDropped = %d, want 4", st.DiskWritesDropped)
	}
	c.disk.queue = make(chan diskWrite, 8)
	c.disk.startWriters()
	read(t, c, s, s.object("v"), 0, 4*testPage)
	flush(c)
	if n := countPages(t, dir); n != 4 {
		t.Fatalf("%d pages on disk after the memory hits, want 4", n)
	}
}

// TestSlowDiskTurnsTierOff: a disk slower than the threshold is left
// alone a while; the reads stay exact.
func TestSlowDiskTurnsTierOff(t *testing.T) {
	s := newStore(4 * testPage)
	c := openCache(t, Options{DiskBytes: 1 << 20, Dir: t.TempDir()})
	read(t, c, s, s.object("v"), 0, 4*testPage)
	flush(c)
	c.disk.slow = 0 // every read is too slow now
	read(t, c, s, s.object("v"), 0, 4*testPage)
	read(t, c, s, s.object("v"), 0, 4*testPage)
	if st := c.Stats(); st.DiskFailures != 1 || st.DiskHits != 1 {
		t.Fatalf("stats %+v: want one outage after the first slow read", st)
	}
}

// TestScanResistant: with a cache of twice the hot set, a one-off scan
// four times the cache's size between two runs of the hot query leaves the
// hot query's hit rate at 80 % or more, in either tier (S3-FIFO: the hot
// pages were read again, so they live in the main queue, and the scan's
// pages pass through the small one).
func TestScanResistant(t *testing.T) {
	const hotPages, cachePages = 32, 64
	tests := map[string]Options{
		"memory": {MemoryBytes: cachePages * testPage},
		"disk":   {DiskBytes: cachePages * (testPage + headerSize)},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			if opts.DiskBytes > 0 {
				opts.Dir = t.TempDir()
			}
			c := openCache(t, opts)
			hot, scan := newStore(hotPages*testPage), newStore(4*cachePages*testPage)
			hotObj := hot.object("v")
			scanObj := Object{Store: "test", Name: "s3://b/one-off", Version: "v", Size: int64(len(scan.data))}
			hotQuery := func() (hitRate float64) {
				var from int64
				for p := range int64(hotPages) {
					from += read(t, c, hot, hotObj, p*testPage, testPage)
				}
				flush(c)
				return float64(from) / float64(hotPages*testPage)
			}
			hotQuery()
			if rate := hotQuery(); rate != 1 {
				t.Fatalf("the hot set's second run hit %.0f%%, want 100%%", 100*rate)
			}
			for p := range int64(4 * cachePages) {
				read(t, c, scan, scanObj, p*testPage, testPage)
			}
			flush(c)
			if rate := hotQuery(); rate < 0.8 {
				t.Fatalf("the hot query hit %.0f%% after a one-off scan 4x the cache, want >= 80%%", 100*rate)
			}
		})
	}
}

// TestDroppedWriteOfferedOnEviction: a page the disk writer had no room
// for is offered to the disk again when the memory tier evicts it, so a
// scan larger than memory does not lose it.
func TestDroppedWriteOfferedOnEviction(t *testing.T) {
	dir := t.TempDir()
	s := newStore(8 * testPage)
	c := openCache(t, Options{MemoryBytes: 4 * testPage, DiskBytes: 1 << 20, Dir: dir})
	c.disk.close() // no writer: every page is dropped
	c.disk.closed = false
	c.disk.queue = make(chan diskWrite)
	read(t, c, s, s.object("v"), 0, 4*testPage)
	if st := c.Stats(); st.DiskWritesDropped != 4 {
		t.Fatalf("DiskWritesDropped = %d, want 4", st.DiskWritesDropped)
	}
	c.disk.queue = make(chan diskWrite, 16)
	c.disk.startWriters()
	read(t, c, s, s.object("v"), 4*testPage, 4*testPage) // evicts the first four
	flush(c)
	if n := countPages(t, dir); n != 8 {
		t.Fatalf("%d pages on disk, want 8: the evicted pages were not written", n)
	}
	if from := read(t, c, s, s.object("v"), 0, 4*testPage); from != 4*testPage {
		t.Fatalf("%d bytes of the evicted pages from the cache, want %d", from, 4*testPage)
	}
}
