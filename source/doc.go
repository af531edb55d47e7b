// Package source is the contract between what a scan request names and the
// planner: a Source turns a name (paths, globs and prefixes; a table) into
// the files to scan, each described by a File.
//
// A File says everything the planner and the stream need to read one
// object correctly, beyond what the object's own footer says:
//   - the object and the version the scan is pinned to (storage.Info);
//   - its format, when the source knows it (a table's metadata does);
//   - the row groups or stripes the source chose, when it chose any;
//   - its partition values, when they live outside the file (hive paths,
//     a table's manifests or log), as scalars of Listing.Partitions' types;
//   - how its columns map to the scan's (by name, or by field id with
//     physical names where they differ from logical ones);
//   - the deletes to apply (position deletes, equality deletes, deletion
//     vectors), empty for plain files.
//
// The planner's steps (prune by partition, describe the files, unify the
// schemas, prune by statistics and bloom filters, split into tasks) take a
// Listing and never ask which kind of source produced it. A new source
// lives in its own package under source/ and touches no planning step.
//
// The first implementation is source/files: a request's paths, each a
// file, a glob or a directory prefix, expanded through storage in request
// order, each file checked against the caller's scope, with the hive
// partitions their "key=value" directories name inferred over all of them
// (Listing.Partitions, and each File.Partition its path's values). Plain
// files carry no format, no row group choice, columns by name and no
// deletes.
//
// A source refuses what it cannot list with a *Error (Invalid, NotFound,
// Unimplemented, Corrupt, TooLarge, Unavailable); the server maps Kind to a
// gRPC code.
//
// Sources sit above the scanner and the storage contract in the map:
// server -> planner -> source -> scanner -> iosched -> storage. A source
// may read metadata through storage (a table's manifests, a Delta log) and
// decode it with the scanner's readers; it never imports gRPC, Flight or
// the server.
package source
