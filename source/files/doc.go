// Package files is the source of plain files: a scan request's paths,
// each a file, a glob or a directory prefix (ending in "/"), expanded
// through the storage contract (storage.Expand) into distinct files in
// request order, and the hive partitions their paths name ("key=value"
// directories) inferred over all of them: Listing.Partitions are the
// inferred columns (scanner/hive.Fields), each File.Partition its path's
// values as scalars of those types (nil where a path lacks a key).
//
// Every file is checked against the caller's scope (Scope): a name asked
// for directly is checked before storage is touched, so the answer is the
// same whether it exists or not; the files a pattern matches are filtered,
// so names outside the scope look absent.
//
// Files carry no format (the reader tells it from the bytes), no row group
// choice, columns by name and no deletes: their own footers say it all.
package files
