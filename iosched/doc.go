// Package iosched sits between the format readers and storage: it decides
// which bytes of an object are fetched, when, and in how many requests, and
// counts what that cost.
//
// It serves a file to a format reader as an io.ReaderAt. One speculative
// tail read fetches the footer of a Parquet or ORC file together with its
// length and magic (a second read happens only for footers larger than the
// tail), and parsed footers are kept in a metadata cache keyed by name,
// size and version. Readers announce the ranges they will read (Prefetch);
// Coalesce merges neighbours whose gap is below the hole, learned per store
// as time to first byte x bandwidth unless pinned, into requests of at most
// MaxRequest bytes, which are fetched ahead of the decoder within a
// per-file window and a global memory budget, and freed as soon as they are
// consumed. A decoder may also borrow planned bytes (Borrow) instead of
// copying them out: the slice points into the fetched buffer, which then
// stays put, with its budget charged, until the last borrow is released.
// Fetch buffers come from a pool of size classes, so a scan's steady
// stream of similar requests reuses memory instead of paying to zero and
// fault in fresh pages; they are never pooled while lent. Every read is
// counted (requests, bytes fetched, bytes handed to the decoder, gap
// bytes, time spent waiting), so each scan can report its IO.
//
// Design, knobs, metrics and measurements: docs/io-scheduler.md.
package iosched
