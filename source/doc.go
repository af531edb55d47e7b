// Package source is the contract between what a scan request names and the
// planner: a Source turns a name (paths, globs and prefixes today; an
// Iceberg or Delta table next) into the files to scan, each described by a
// File.
//
// A File says everything the planner and the stream need to read one
// object correctly, beyond what the object's own footer says:
//   - the object and the version the scan is pinned to (storage.Info);
//   - its format, when the source knows it (a table's metadata does);
//   - the row groups or stripes the source chose, when it chose any;
//   - its partition values, when they live outside the file (hive paths,
//     a table's manifests or log);
//   - how its columns map to the scan's (by name, or by field id with
//     physical names where they differ from logical ones);
//   - the deletes to apply (position deletes, equality deletes, deletion
//     vectors), empty for plain files.
//
// The planner's steps (describe the files, prune by partition, statistics
// and bloom filters, unify the schemas, split into tasks, sign) take a
// Listing and never ask which kind of source produced it. A new source
// lives in its own package under source/ (source/files is the first: globs,
// prefixes and hive directories) and touches no planning step.
//
// Sources sit above the scanner and the storage contract in the map:
// server -> planner -> source -> scanner -> iosched -> storage. A source
// may read metadata through storage (a table's manifests, a Delta log) and
// decode it with the scanner's readers; it never imports gRPC, Flight or
// the server.
package source
