// Package delta is the source for Delta Lake tables: a directory holding a
// _delta_log/, local (relative to the server's root) or in an object
// store, read at its latest version, at a version, or as of a time.
//
// List replays the table's log, as the Delta protocol (delta-io/delta
// PROTOCOL.md) defines it, through the storage contract:
//   - the _delta_log/ listing names the commits (NNN.json), the checkpoints
//     (classic NNN.checkpoint.parquet, multi-part
//     NNN.checkpoint.PPP.QQQ.parquet, and v2 NNN.checkpoint.UUID.json or
//     .parquet whose sidecar actions name files in _delta_log/_sidecars/),
//     and, for time travel, each commit's timestamp (its modification time,
//     made non-decreasing as Delta's readers do); _last_checkpoint only
//     spares the listing the stats of older entries;
//   - the newest complete checkpoint at or below the version is read with
//     scand's own Parquet reader (scanner/parquet), projected to the
//     columns replay needs;
//   - the JSON commits after it are decoded and reconciled in order: the
//     newest protocol and metaData win, an add replaces the add of the same
//     path, a remove drops the add of its (path, deletion vector id).
//
// The snapshot that results is checked before anything is read: a reader
// version above 3, or a reader feature other than columnMapping,
// deletionVectors, timestampNtz, v2Checkpoint and vacuumProtocolCheck, is
// refused as Unimplemented naming it; a data format other than Parquet
// likewise.
//
// The Listing it returns has the table's schema with logical names (Delta
// types mapped to Arrow: long int64, timestamp timestamp[us, UTC],
// timestamp_ntz timestamp[us], decimal decimal128, and so on), the
// partition columns typed by that schema with each file's values parsed
// from the log (never from its path), each file's statistics from its
// add's stats JSON (File.Stats, keyed by logical name, typed like the
// schema), its columns' mapping (column mapping "name" mode: physical
// names; "id" mode: by field id, the ids in the schema's
// PARQUET:field_id metadata), and its deletion vector as a
// source.Delete.
//
// Everything that decodes (actions, schema, partition values, statistics,
// deletion vector descriptors, log file names, version choice) is pure and
// table-tested; the IO is in table.go and checkpoint.go. Snapshots are
// cached per table and version (Cache), so repeated scans of one version
// replay nothing, and a newer version replays only the commits since the
// newest cached one.
package delta
