// Package storage is scand's access to objects: files under a local root,
// S3 and S3-compatible stores (storage/s3), Google Cloud Storage
// (storage/gcs) and Azure Blob Storage (storage/azure). It owns naming (what a path or URI means),
// listing and glob expansion, and ranged reads. It knows nothing of
// Parquet, ORC or Arrow, so the IO layer can be tested without them.
//
// The contract every backend keeps:
//   - Names are slash-separated. A Bucket resolves them; a name that would
//     leave the bucket's root (through "..", an absolute path or a symlink,
//     even one swapped in while it is opened) fails with an error that
//     wraps fs.ErrPermission. A symlink loop wraps fs.ErrInvalid.
//   - A missing object wraps fs.ErrNotExist.
//   - Object.ReadAt is all-or-nothing: it fills p completely or returns an
//     error (io.ErrUnexpectedEOF when the range runs past the end the
//     object had at Open; ErrChanged when bytes it had then are gone).
//     Reads may run concurrently on one Object.
//   - Open checks the version the caller planned with; a changed object wraps
//     ErrChanged. Object.Recheck checks it again after reading, so a scan
//     does not return a mix of two versions of a file (see below for what
//     local files cannot promise).
//   - A store that cannot be reached once the backend's retries are spent
//     wraps ErrUnavailable, naming the object: worth retrying later.
//
// # Capabilities are declared
//
// What an object can do beyond ReadAt is declared by Object.Capabilities,
// not discovered by type assertions: Mapped (reads are memory copies, so
// nothing gains by prefetching them), SpanReads (ReadSpans is one
// request that drops the gaps between spans) and Local (no round trip to
// save, so nothing gains by reading through gaps). ReadSpans works on every
// object, span by span where it is not one request. Buckets declare their
// name spelling (Canonical) and take pruning hints for listings
// (ListPruned). Because these are methods of the interfaces, a wrapper
// that embeds the inner Object or Bucket (WithMetrics, Mux,
// storagetest.WithReadHook) passes them on unchanged; one that overrides
// them must report its inner object's exactly, and storagetest.RunWrapper
// checks that it does.
//
// # Versions of local files
//
// A local file's version is its size, modification time, change time and
// inode, so a same-size rewrite that restores the modification time is
// still seen (the change time cannot be set back without privileges).
// What cannot be caught: a same-size write in place with every timestamp
// restored, and so data bytes of two versions read by one scan before a
// Recheck that would have failed. Replacing files by rename is the safe
// way to update a served dataset: open handles keep the old file, and new
// scans see the new one.
//
// Errors are wrapped with the object's name; the server maps them to gRPC
// status codes once, at its edge.
package storage
