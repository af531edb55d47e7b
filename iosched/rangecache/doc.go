// Package rangecache is scand's page cache of object-store data: aligned
// pages of objects (1 MiB by default) in two tiers, memory and local disk,
// keyed by store, object name, version (the ETag a scan is pinned to) and
// page, so a new version of an object is a new key and never meets the
// old one's pages.
//
// The parts, each its own file: the page planner (pages.go), a pure
// function that splits a read into runs of cached and missing pages so
// that each run of neighbouring missing pages is one request; the
// eviction policy (policy.go), S3-FIFO as a pure value shared by both
// tiers; the on-disk page format (format.go), a checksummed header that
// makes a torn, corrupt or misplaced page fail verification; the tiers
// (mem.go, disk.go); and Cache (cache.go), which ties them together,
// fetches missing pages through the caller's function, and makes
// concurrent reads of one page wait for a single fetch.
//
// The disk tier never fails a read: a page that cannot be read or fails
// verification is dropped and fetched again, and a disk error turns the
// tier off for a while with a warning. Its index is rebuilt at Open from
// the directory's file names and sizes alone.
//
// The IO scheduler calls Cache.Read from its fetch path
// (iosched/pagecache.go). Design, guarantees and sizing: docs/cache.md.
package rangecache
