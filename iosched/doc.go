// Package iosched sits between the format readers and storage: it decides
// which bytes of an object are fetched, when, and in how many requests, and
// counts what that cost.
//
// It serves a file to a format reader as an io.ReaderAt. One speculative
// tail read fetches the footer of a Parquet or ORC file together with its
// length and magic (a second read happens only for footers larger than the
// tail; LocalTailSize on local disk, where a second read is a system
// call), and parsed footers are kept in a metadata cache keyed by name,
// size and version (an object opened by its size alone, as S3 opens a
// table's data files, is cached under the version its first read pinned,
// and reopened at that version, without a Stat, when the cache holds an
// entry of its name and size: Scheduler.versioned). Readers announce the ranges they will read (Prefetch);
// Coalesce merges neighbours whose gap is below the hole into requests of
// at most MaxRequest bytes. The hole, unless pinned, is the hole policy's
// (holepolicy.go), by the kind of store the object declares: a few KiB on
// local files, the learned time to first byte x bandwidth on remote ones,
// and less for a selective plan's pages (PrefetchSelective). Requests are
// fetched ahead of the decoder within a per-file window and a global
// memory budget, and freed as soon as they are consumed. A decoder may also borrow planned bytes (Borrow) instead of
// copying them out: the slice points into the fetched buffer, which then
// stays put, with its budget charged, until the last borrow is released.
// Fetch buffers come from a pool of size classes (internal/sizeclass), so
// a scan's steady stream of similar requests reuses memory instead of
// paying to zero and fault in fresh pages; they are never pooled while
// lent. Every read is counted (requests, bytes fetched, bytes handed to
// the decoder, gap bytes, time spent waiting) in Stats, a plain value the
// server copies into the stream's figures (scandv1.StreamStats).
//
// Structure. What to fetch and when is a planner (plan.go): a value with
// no locks, goroutines or IO that holds a file's planned requests and
// their states (idle, fetching, ready, done), picks the readahead given
// the window, the in-flight limit and the budget (passed in as a
// function), tells a read what it finds (ready, being fetched, idle, gap,
// consumed, not planned) and says what a consumed read or returned borrow
// frees. Its steps are pinned by scripts (testdata/planner) and by a
// golden trace of the GETs for typical layouts (testdata/trace.golden).
// File (file.go) keeps the locking, the goroutines and the IO: it runs
// the planner under its one mutex and does what each step asks, starting
// and filling fetches (prefetch.go) and serving reads as a short loop of
// steps, none of which returns with the mutex held (read.go, borrow.go).
// The scheduler's memory budget (budget.go), the latency model behind the
// learned hole (adaptive.go), the metadata cache (cache.go) and mapped
// files (mapped.go) are each their own file.
//
// Object-store files may also go through a page cache in memory and on
// local disk (Options.PageCache, package rangecache): every storage read
// of such a file is split around the cached pages, and only runs of
// missing pages are fetched (pagecache.go, docs/cache.md).
//
// Design, knobs, metrics and measurements: docs/io-scheduler.md.
//
// Every storage request is a fetch span (tracing.go, docs/tracing.md),
// a child of the context the File was opened with.
package iosched
