package rangecache

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// markerFile marks a directory as a scand page cache: Open refuses a
// non-empty directory without it rather than delete files it does not own.
const markerFile = "SCAND-CACHE"

// Degradation: a failed or slow disk operation turns the disk tier off
// for disableFor (reads and writes), with one warning; scans go on
// reading from the store.
const (
	disableFor = 30 * time.Second
	slowDisk   = 2 * time.Second // a page read or write slower than this
	// diskWriters drain the queue: two, so that one page's open, write
	// and rename overlap another's.
	diskWriters = 2
)

// diskTier keeps pages as files under dir, within capacity bytes (file
// sizes, header included, temporary files too). It is safe for concurrent
// use. Writes go through diskWriters goroutines fed by a queue bounded in
// bytes (queueCap, part of the cache's memory): a page is charged to it
// when queued and released when its write is done, and a page that finds
// no room is not written (a slow disk sheds writes rather than slowing
// scans or holding more memory).
type diskTier struct {
	fsys     FS
	dir      string
	pageSize int64
	log      *slog.Logger
	slow     time.Duration // slowDisk; tests shorten it

	mu       sync.Mutex
	pol      *s3fifo
	versions versionSet
	offUntil time.Time
	closed   bool

	queue    chan diskWrite
	queueCap int64 // bytes of pages queued or being written, at most
	queued   int64 // bytes of pages queued or being written now
	writers  sync.WaitGroup
	seq      atomic.Int64

	evictions, written, writesDropped, corrupt, failures atomic.Int64
}

type diskWrite struct {
	key  pageKey
	sum  keySum
	data []byte
}

// openDisk opens or creates the cache directory and rebuilds the index
// from it: page files are listed (names and sizes, no content read), so a
// restart costs one directory read per subdirectory and no page reads;
// pages are verified when read. Temporary files, and files that cannot be
// pages, are removed. Pages beyond capacity (a smaller --cache-size) are
// evicted, oldest first. The pages queued for writing, and being written,
// hold at most queueBytes of memory.
func openDisk(fsys FS, dir string, capacity, pageSize, queueBytes int64, log *slog.Logger) (*diskTier, error) {
	d := &diskTier{fsys: fsys, dir: dir, pageSize: pageSize, log: log, slow: slowDisk, pol: newS3FIFO(capacity), versions: versionSet{}, queueCap: queueBytes}
	if err := d.rebuild(); err != nil {
		return nil, err
	}
	// A slot per whole page the bytes allow: the byte count, checked
	// first, is the bound; a queue of short pages (objects' last) is
	// simply full sooner.
	d.queue = make(chan diskWrite, queueBytes/pageSize)
	d.startWriters()
	return d, nil
}

func (d *diskTier) startWriters() {
	for range diskWriters {
		d.writers.Go(d.writer)
	}
}

func (d *diskTier) rebuild() error {
	if err := d.fsys.MkdirAll(d.dir); err != nil {
		return fmt.Errorf("cache directory %s: %w", d.dir, err)
	}
	top, err := d.fsys.ReadDir(d.dir)
	if err != nil {
		return fmt.Errorf("cache directory %s: %w", d.dir, err)
	}
	marked := slices.ContainsFunc(top, func(e fs.DirEntry) bool { return e.Name() == markerFile })
	if !marked {
		for _, e := range top {
			if e.Name() != "lost+found" {
				return fmt.Errorf("cache directory %s is not empty and holds no %s file: refusing to use (and clean) a directory scand did not create", d.dir, markerFile)
			}
		}
		if err := d.fsys.WriteFile(filepath.Join(d.dir, markerFile), []byte("scand page cache; files here are removed at will\n")); err != nil {
			return fmt.Errorf("cache directory %s: %w", d.dir, err)
		}
	}
	type found struct {
		key  pageKey
		size int64
		mod  time.Time
	}
	var pages []found
	for _, e := range top {
		name := e.Name()
		switch {
		case len(name) > len(tmpPrefix) && name[:len(tmpPrefix)] == tmpPrefix:
			d.removeFile(filepath.Join(d.dir, name)) // a write cut short by a crash
			continue
		case !e.IsDir() || len(name) != 2 || !isHex(name):
			continue
		}
		sub := filepath.Join(d.dir, name)
		files, err := d.fsys.ReadDir(sub)
		if err != nil {
			return fmt.Errorf("cache directory %s: %w", sub, err)
		}
		for _, f := range files {
			path := filepath.Join(sub, f.Name())
			k, ok := parseFileName(name, f.Name())
			info, err := f.Info()
			if !ok || err != nil || f.IsDir() || info.Size() < headerSize || info.Size() > headerSize+d.pageSize {
				d.removeFile(path)
				continue
			}
			pages = append(pages, found{key: k, size: info.Size(), mod: info.ModTime()})
		}
	}
	slices.SortFunc(pages, func(a, b found) int { return a.mod.Compare(b.mod) })
	for _, p := range pages {
		for _, ev := range d.pol.add(p.key, p.size, true) {
			d.versions.del(ev)
			d.removeFile(filepath.Join(d.dir, ev.fileName()))
		}
		if d.pol.contains(p.key) {
			d.versions.add(p.key)
		}
	}
	return nil
}

func isHex(s string) bool {
	_, err := strconv.ParseUint(s, 16, 64)
	return err == nil
}

func (d *diskTier) path(k pageKey) string { return filepath.Join(d.dir, k.fileName()) }

func (d *diskTier) removeFile(path string) {
	if err := d.fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.log.Debug("cache: remove failed", "path", path, "err", err)
	}
}

// off reports whether the tier is degraded now. Callers hold d.mu.
func (d *diskTier) offLocked() bool { return time.Now().Before(d.offUntil) }

// fail turns the tier off for a while after a disk error, with a warning.
func (d *diskTier) fail(op string, err error) {
	d.mu.Lock()
	wasOff := d.offLocked()
	d.offUntil = time.Now().Add(disableFor)
	d.mu.Unlock()
	if !wasOff { // counted and logged once per outage
		d.failures.Add(1)
		d.log.Warn("cache: disk tier off, scans read from the store", "op", op, "dir", d.dir, "for", disableFor, "err", err)
	}
}

// get reads page k into dst (the page's length: the file is read straight
// into it) and verifies it; it reports false when the page is not held or
// cannot be served (missing, unreadable or corrupt: then dropped), and
// dst's bytes are then undefined.
func (d *diskTier) get(k pageKey, sum keySum, dst []byte) bool {
	d.mu.Lock()
	if d.offLocked() || !d.pol.hit(k) {
		d.mu.Unlock()
		return false
	}
	d.mu.Unlock()
	path := d.path(k)
	start := time.Now()
	var hdr [headerSize]byte
	err := d.fsys.ReadFileInto(path, hdr[:], dst)
	if took := time.Since(start); took > d.slow {
		// Served this once, but a disk this slow is no cache: off a while.
		d.fail("read", fmt.Errorf("reading a page took %s", took))
	}
	if err == nil {
		if err = verifyPage(hdr[:], dst, sum); err == nil {
			return true
		}
	} else if errors.Is(err, ErrFileSize) {
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	d.drop(k)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Evicted or replaced while we looked: a miss.
	case errors.Is(err, ErrCorrupt):
		d.corrupt.Add(1)
		d.log.Warn("cache: corrupt page dropped; fetching it again", "path", path, "err", err)
		d.removeFile(path)
	default:
		d.removeFile(path)
		d.fail("read", err)
	}
	return false
}

// drop forgets page k (its file is the caller's to remove).
func (d *diskTier) drop(k pageKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pol.remove(k) {
		d.versions.del(k)
	}
}

// put queues page k for writing; data must not be written to afterwards.
// A queue without room for the page's bytes, or a degraded tier, drops
// the write.
func (d *diskTier) put(k pageKey, sum keySum, data []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.offLocked() || d.pol.contains(k) {
		return
	}
	n := int64(len(data))
	if d.queued+n > d.queueCap {
		d.writesDropped.Add(1)
		return
	}
	select { // never blocks: held under d.mu only to not race close
	case d.queue <- diskWrite{key: k, sum: sum, data: data}:
		d.queued += n
	default:
		d.writesDropped.Add(1)
	}
}

// writer writes the queued pages, releasing each page's bytes from the
// queue's charge once its write is done.
func (d *diskTier) writer() {
	for w := range d.queue {
		d.write(w)
		d.mu.Lock()
		d.queued -= int64(len(w.data))
		d.mu.Unlock()
	}
}

// queuedBytes are the bytes of pages queued or being written.
func (d *diskTier) queuedBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queued
}

// write makes room (evicting), then writes the page to a temporary file
// and renames it into place, so that a reader never sees a partial page
// under the final name. It does not fsync: a page torn by a crash fails
// its checksum when read and is fetched again.
func (d *diskTier) write(w diskWrite) {
	size := int64(headerSize + len(w.data))
	d.mu.Lock()
	if d.offLocked() || d.pol.contains(w.key) {
		d.mu.Unlock()
		return
	}
	evicted := d.pol.add(w.key, size, false)
	for _, ev := range evicted {
		d.versions.del(ev)
	}
	admitted := d.pol.contains(w.key)
	if admitted {
		d.versions.add(w.key)
	}
	// The evicted pages' files go before this page's is written, under the
	// lock, so that the directory never holds more than the policy counts
	// while another writer is between its eviction and its write.
	for _, ev := range evicted {
		d.removeFile(d.path(ev))
	}
	d.mu.Unlock()
	d.evictions.Add(int64(len(evicted)))
	if !admitted {
		return
	}
	start := time.Now()
	final := d.path(w.key)
	tmp := filepath.Join(d.dir, fmt.Sprintf("%s%d", tmpPrefix, d.seq.Add(1)))
	err := d.fsys.WriteFile(tmp, pageHeader(w.sum, w.data), w.data)
	if err == nil {
		err = d.fsys.Rename(tmp, final)
		if errors.Is(err, fs.ErrNotExist) { // the subdirectory is made on first use
			if err = d.fsys.MkdirAll(filepath.Dir(final)); err == nil {
				err = d.fsys.Rename(tmp, final)
			}
		}
	}
	if err != nil {
		d.removeFile(tmp)
		d.drop(w.key)
		d.fail("write", err)
		return
	}
	// Another writer may have evicted this page while its file was being
	// written (its removal found no file then): a file the policy no
	// longer counts would stay on disk beyond --cache-size.
	d.mu.Lock()
	if !d.pol.contains(w.key) {
		d.removeFile(final)
	}
	d.mu.Unlock()
	d.written.Add(size)
	if took := time.Since(start); took > d.slow {
		d.fail("write", fmt.Errorf("writing a %d-byte page took %s", size, took))
	}
}

// dropStale removes the pages of obj's versions other than ver.
func (d *diskTier) dropStale(obj, ver uint64) int {
	d.mu.Lock()
	stale := d.versions.others(obj, ver)
	var keys []pageKey
	if len(stale) > 0 {
		for k := range d.pol.entries {
			if k.obj == obj && stale[k.ver] {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			d.pol.remove(k)
			d.versions.del(k)
		}
	}
	d.mu.Unlock()
	for _, k := range keys {
		d.removeFile(d.path(k))
	}
	return len(stale)
}

func (d *diskTier) bytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pol.bytes()
}

// close stops the writer after the queued writes.
func (d *diskTier) close() {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		close(d.queue)
	}
	d.mu.Unlock()
	d.writers.Wait()
}
