// Package storage is scand's access to objects: files under a local root
// today, S3 and S3-compatible stores next. It owns naming (what a path or URI
// means), listing and glob expansion, and ranged reads. It knows nothing of
// Parquet, ORC or Arrow, so the IO layer can be tested without them.
//
// The contract every backend keeps:
//   - Names are slash-separated. A Bucket resolves them; a name that would
//     leave the bucket's root (through "..", an absolute path or a symlink)
//     fails with an error that wraps fs.ErrPermission.
//   - A missing object wraps fs.ErrNotExist.
//   - Object.ReadAt is all-or-nothing: it fills p completely or returns an
//     error (io.ErrUnexpectedEOF when the range runs past the end). Reads may
//     run concurrently on one Object.
//   - Open checks the version the caller planned with; a changed object wraps
//     ErrChanged, so a scan never mixes two versions of a file.
//
// Errors are wrapped with the object's name; the server maps them to gRPC
// status codes once, at its edge.
package storage
