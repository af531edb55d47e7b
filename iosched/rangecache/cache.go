package rangecache

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/scand/scand/storage"
)

// DefaultPageSize is the page the cache stores and fetches: 1 MiB, as
// Alluxio's local cache and Trino's file-system cache use. Larger pages
// cost more read amplification at range edges, smaller ones more files
// and requests.
const DefaultPageSize = 1 << 20

// Options configure a Cache. Zero values mean the defaults.
type Options struct {
	// Dir is the disk tier's directory; empty: no disk tier.
	Dir string
	// DiskBytes bounds the disk tier (page files, headers included).
	DiskBytes int64
	// MemoryBytes bounds the memory tier; 0: no memory tier.
	MemoryBytes int64
	// PageSize is the page (DefaultPageSize).
	PageSize int64
	// Logger gets the warnings of a degraded disk (slog.Default()).
	Logger *slog.Logger
	// FS is the disk tier's file system (OSFS).
	FS FS
}

// FetchFunc fills spans from the store, all or nothing, as
// storage.Object.ReadSpans does. The spans are back to back (one run of
// pages, a buffer each), so they are meant to be one request.
type FetchFunc func(ctx context.Context, spans []storage.Span) error

// Cache is a range cache of object pages in two tiers, memory and local
// disk. It is safe for concurrent use.
type Cache struct {
	pageSize int64
	mem      *memTier  // nil: no memory tier
	disk     *diskTier // nil: no disk tier

	flightsMu sync.Mutex
	flights   map[pageKey]*flight

	memHits, memHitBytes, memMisses, memMissBytes     atomic.Int64
	diskHits, diskHitBytes, diskMisses, diskMissBytes atomic.Int64
	fetched, fetchedBytes, shared, stale              atomic.Int64
}

// flight is a fetch of one page in progress: concurrent reads of a page
// wait for the one fetch instead of sending their own.
type flight struct {
	done chan struct{}
	data []byte // set before done closes, when err is nil
	err  error
}

// Open returns a cache as opts says, rebuilding the disk tier's index from
// its directory. It fails only when the directory cannot be used at all.
func Open(opts Options) (*Cache, error) {
	opts.PageSize = cmp.Or(opts.PageSize, DefaultPageSize)
	if opts.PageSize < 4096 || opts.PageSize > 64<<20 {
		return nil, fmt.Errorf("cache page size %d out of range [4KiB, 64MiB]", opts.PageSize)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.FS == nil {
		opts.FS = OSFS{}
	}
	c := &Cache{pageSize: opts.PageSize, flights: map[pageKey]*flight{}}
	if opts.MemoryBytes > 0 {
		c.mem = newMemTier(opts.MemoryBytes)
	}
	if opts.Dir != "" && opts.DiskBytes > 0 {
		d, err := openDisk(opts.FS, opts.Dir, opts.DiskBytes, opts.PageSize, opts.Logger)
		if err != nil {
			return nil, err
		}
		c.disk = d
	}
	return c, nil
}

// Close stops the disk writer after the queued writes.
func (c *Cache) Close() error {
	if c.disk != nil {
		c.disk.close()
	}
	return nil
}

// PageSize is the cache's page.
func (c *Cache) PageSize() int64 { return c.pageSize }

// Read fills every span (in order, not overlapping, within o.Size) with
// o's bytes: from cached pages where it can, else by fetching the missing
// pages, whole and aligned, in one request per run of neighbouring missing
// pages, and caching them. A page another Read is fetching is waited for,
// not fetched again. It returns how many of the spans' bytes came from
// the cache. A fetch error is returned as is; the cache's own failures
// (disk errors, corrupt pages) never are: they cost a fetch.
func (c *Cache) Read(ctx context.Context, o Object, spans []storage.Span, fetch FetchFunc) (fromCache int64, err error) {
	obj, ver := o.hashes()
	c.dropStale(obj, ver)
	ranges := make([]Range, 0, len(spans))
	for _, s := range spans {
		if s.Off < 0 || s.Off+int64(len(s.Buf)) > o.Size {
			return 0, fmt.Errorf("read %q: span [%d, %d) outside the object's %d bytes", o.Name, s.Off, s.Off+int64(len(s.Buf)), o.Size)
		}
		ranges = append(ranges, Range{Off: s.Off, Len: int64(len(s.Buf))})
	}
	// A page that lies whole within a span is read straight into it from
	// either tier (filled); the others are gathered in got and copied out.
	got := map[int64][]byte{}
	hit := map[int64]bool{}
	filled := map[int64]bool{}
	var need []int64
	for _, r := range PlanPages(ranges, o.Size, c.pageSize, func(int64) bool { return false }) {
		for p := r.First; p <= r.Last; p++ {
			need = append(need, p)
		}
	}
	si := 0
	for _, p := range need {
		data, inDst := c.lookup(o, obj, ver, p, pageIn(spans, &si, p, o.Size, c.pageSize))
		switch {
		case inDst:
			filled[p], hit[p] = true, true
		case data != nil:
			got[p], hit[p] = data, true
		}
	}
	for attempt := 0; ; attempt++ {
		var missing []int64
		for _, p := range need {
			if !filled[p] && got[p] == nil {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			break
		}
		shared, err := c.fetchPages(ctx, o, obj, ver, missing, got, fetch)
		if err == nil {
			for _, p := range shared {
				hit[p] = true
			}
			continue
		}
		// Another Read's fetch of a page we waited for failed (its scan
		// may have been cancelled): fetch it ourselves, once.
		if ctx.Err() != nil || attempt > 0 || !isShared(err) {
			return 0, unshare(err)
		}
	}
	for _, s := range spans {
		for pos := s.Off; pos < s.Off+int64(len(s.Buf)); {
			p := pos / c.pageSize
			pOff, pEnd := pageBounds(p, o.Size, c.pageSize)
			var n int
			if filled[p] { // in place already, whole
				n = int(pEnd - pos)
			} else {
				n = copy(s.Buf[pos-s.Off:], got[p][pos-pOff:])
			}
			if hit[p] {
				fromCache += int64(n)
			}
			pos += int64(n)
		}
	}
	return fromCache, nil
}

// pageIn returns the part of spans that is exactly page p, when the page
// lies whole within one span, else nil. Pages are asked for in increasing
// order; *si is where the search resumes.
func pageIn(spans []storage.Span, si *int, p, size, pageSize int64) []byte {
	off, end := pageBounds(p, size, pageSize)
	for *si < len(spans) && spans[*si].Off+int64(len(spans[*si].Buf)) <= off {
		*si++
	}
	if *si == len(spans) {
		return nil
	}
	s := spans[*si]
	if s.Off > off || s.Off+int64(len(s.Buf)) < end {
		return nil
	}
	return s.Buf[off-s.Off : end-s.Off : end-s.Off]
}

// lookup finds page p in the memory tier, then on disk, counting hits and
// misses per tier. With dst (the page's place in the caller's span) the
// page is copied or read into it and lookup reports inDst; without, it
// returns the page's bytes. A page read from disk into dst is not kept in
// memory: the operating system's page cache already keeps a recently read
// page file in memory, and copying each page a scan reads from disk into
// the memory tier would churn the memory tier whenever the scan is larger
// than it (S3-FIFO's main queue keeps the pages hit in memory). A page
// read from disk without dst has a buffer of its own, and is kept.
func (c *Cache) lookup(o Object, obj, ver uint64, p int64, dst []byte) (data []byte, inDst bool) {
	k := pageKey{obj: obj, ver: ver, page: p}
	off, end := pageBounds(p, o.Size, c.pageSize)
	n := end - off
	if c.mem != nil {
		if data := c.mem.get(k); data != nil && int64(len(data)) == n {
			c.memHits.Add(1)
			c.memHitBytes.Add(n)
			if c.disk != nil {
				// A page whose write was dropped (the writer behind) gets
				// another chance each time it is read from memory.
				c.disk.put(k, o.keySum(p, c.pageSize), data)
			}
			if dst != nil {
				copy(dst, data)
				return nil, true
			}
			return data, false
		}
		c.memMisses.Add(1)
		c.memMissBytes.Add(n)
	}
	if c.disk != nil {
		buf := dst
		if buf == nil {
			buf = make([]byte, n)
		}
		if c.disk.get(k, o.keySum(p, c.pageSize), buf) {
			c.diskHits.Add(1)
			c.diskHitBytes.Add(n)
			if dst != nil {
				return nil, true
			}
			c.keepInMemory(k, o.keySum(p, c.pageSize), buf)
			return buf, false
		}
		c.diskMisses.Add(1)
		c.diskMissBytes.Add(n)
	}
	return nil, false
}

// sharedErr is a failure of a fetch another Read started.
type sharedErr struct{ err error }

func (e sharedErr) Error() string { return e.err.Error() }
func (e sharedErr) Unwrap() error { return e.err }

func isShared(err error) bool { _, ok := err.(sharedErr); return ok }

func unshare(err error) error {
	if s, ok := err.(sharedErr); ok {
		return s.err
	}
	return err
}

// fetchPages gets the missing pages into got: it claims those no other
// Read is fetching and fetches them, a request per run of neighbouring
// claimed pages, and waits for the others. It returns the pages that came
// from another Read's fetch.
func (c *Cache) fetchPages(ctx context.Context, o Object, obj, ver uint64, missing []int64, got map[int64][]byte, fetch FetchFunc) (shared []int64, err error) {
	mine := map[int64]*flight{}
	theirs := map[int64]*flight{}
	c.flightsMu.Lock()
	for _, p := range missing {
		k := pageKey{obj: obj, ver: ver, page: p}
		if f, ok := c.flights[k]; ok {
			theirs[p] = f
			continue
		}
		// Fetched and stored since our lookup (a flight ends after its
		// pages are stored): take it from memory rather than fetch again.
		if c.mem != nil {
			if data := c.mem.peek(k); data != nil {
				got[p] = data
				shared = append(shared, p)
				continue
			}
		}
		f := &flight{done: make(chan struct{})}
		c.flights[k] = f
		mine[p] = f
	}
	c.flightsMu.Unlock()

	if len(mine) > 0 {
		var ranges []Range
		for _, p := range missing {
			if mine[p] != nil {
				off, end := pageBounds(p, o.Size, c.pageSize)
				ranges = append(ranges, Range{Off: off, Len: end - off})
			}
		}
		// A buffer per page, so that each page the tiers keep holds its own
		// memory (a page cut from a shared run buffer would keep all of it
		// alive), and a request per run of neighbouring pages.
		runs := PlanPages(ranges, o.Size, c.pageSize, func(int64) bool { return false })
		runSpans := make([][]storage.Span, len(runs))
		g, gctx := errgroup.WithContext(ctx)
		for i, r := range runs {
			for p := r.First; p <= r.Last; p++ {
				off, end := pageBounds(p, o.Size, c.pageSize)
				runSpans[i] = append(runSpans[i], storage.Span{Off: off, Buf: make([]byte, end-off)})
			}
			g.Go(func() error { return fetch(gctx, runSpans[i]) })
		}
		err = g.Wait()
		for i, r := range runs {
			var n int64
			for j, sp := range runSpans[i] {
				p := r.First + int64(j)
				f := mine[p]
				if err != nil {
					f.err = err
					continue
				}
				f.data = sp.Buf
				got[p] = f.data
				n += int64(len(sp.Buf))
				c.store(o, pageKey{obj: obj, ver: ver, page: p}, f.data)
			}
			if err == nil {
				c.fetched.Add(1)
				c.fetchedBytes.Add(n)
			}
		}
		c.flightsMu.Lock()
		for p, f := range mine {
			delete(c.flights, pageKey{obj: obj, ver: ver, page: p})
			close(f.done)
		}
		c.flightsMu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	for p, f := range theirs {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil {
			return nil, sharedErr{f.err}
		}
		got[p] = f.data
		shared = append(shared, p)
		c.shared.Add(1)
	}
	return shared, nil
}

// store admits a fetched page to both tiers.
func (c *Cache) store(o Object, k pageKey, data []byte) {
	sum := o.keySum(k.page, c.pageSize)
	if c.disk != nil {
		c.disk.put(k, sum, data)
	}
	c.keepInMemory(k, sum, data)
}

// keepInMemory admits a page to the memory tier. A page it evicts that
// the disk tier does not hold (its write was dropped, the writer being
// behind) is offered to the disk once more: otherwise a scan larger than
// the memory tier would lose, on a busy machine, the pages the writer could
// not keep up with, and fetch them again next time.
func (c *Cache) keepInMemory(k pageKey, sum keySum, data []byte) {
	if c.mem == nil {
		return
	}
	for _, ev := range c.mem.put(k, sum, data) {
		if c.disk != nil {
			c.disk.put(ev.key, ev.sum, ev.data)
		}
	}
}

// dropStale drops the pages of an object's other versions: the object was
// overwritten, and what was cached of it is stale.
func (c *Cache) dropStale(obj, ver uint64) {
	n := 0
	if c.mem != nil {
		n = c.mem.dropStale(obj, ver)
	}
	if c.disk != nil {
		n = max(n, c.disk.dropStale(obj, ver))
	}
	c.stale.Add(int64(n))
}

// Stats are the cache's counters since Open, and its sizes now.
type Stats struct {
	// Hits and misses per tier, in pages (requests) and bytes. A page
	// missed in memory is then looked up on disk.
	MemHits, MemHitBytes, MemMisses, MemMissBytes     int64
	DiskHits, DiskHitBytes, DiskMisses, DiskMissBytes int64
	// Fetches are the requests for missing pages, FetchedBytes their
	// bytes; Shared counts pages a Read waited for instead of fetching.
	Fetches, FetchedBytes, Shared int64
	// DiskWrittenBytes are page files written; DiskWritesDropped pages not
	// written because the writer was behind.
	DiskWrittenBytes, DiskWritesDropped int64
	MemEvictions, DiskEvictions         int64
	// CorruptPages were found on disk failing verification (and dropped);
	// DiskFailures are disk errors that turned the disk tier off a while.
	CorruptPages, DiskFailures int64
	// StaleVersions are object versions dropped because a newer one was read.
	StaleVersions int64
	MemBytes      int64
	DiskBytes     int64
}

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	s := Stats{
		MemHits: c.memHits.Load(), MemHitBytes: c.memHitBytes.Load(), MemMisses: c.memMisses.Load(), MemMissBytes: c.memMissBytes.Load(),
		DiskHits: c.diskHits.Load(), DiskHitBytes: c.diskHitBytes.Load(), DiskMisses: c.diskMisses.Load(), DiskMissBytes: c.diskMissBytes.Load(),
		Fetches: c.fetched.Load(), FetchedBytes: c.fetchedBytes.Load(), Shared: c.shared.Load(),
		StaleVersions: c.stale.Load(),
	}
	if c.mem != nil {
		s.MemBytes, s.MemEvictions = c.mem.stats()
	}
	if c.disk != nil {
		s.DiskBytes = c.disk.bytes()
		s.DiskWrittenBytes, s.DiskWritesDropped = c.disk.written.Load(), c.disk.writesDropped.Load()
		s.DiskEvictions, s.CorruptPages, s.DiskFailures = c.disk.evictions.Load(), c.disk.corrupt.Load(), c.disk.failures.Load()
	}
	return s
}
