// Package iceberg is the source of Apache Iceberg tables: it loads a
// table's metadata, chooses a snapshot, and plans which data files a scan
// reads, each with its deletes and partition values, as a source.Listing.
//
// Metadata and planning are iceberg-go's (github.com/apache/iceberg-go):
// metadata parsing, snapshot selection (current, snapshot id, branch or
// tag, as of a time), and PlanFiles, which prunes manifests by partition
// summaries and data files by partition values and column statistics, and
// matches delete files to data files by partition, path and sequence
// number. Reading the data stays scand's: iceberg-go reads only the
// metadata objects, through scand's storage (bucketIO), so the server's
// root, scopes and object-store settings decide what a table may read.
//
// What the package decides itself:
//   - where a table's metadata is: a metadata file named directly, or the
//     newest in a location's metadata/ directory (version-hint.text first,
//     as Hadoop tables write it; else the highest version number);
//   - how names in metadata map to scand's storage: file:///abs/path to a
//     path under the server's root (anything else is fs.ErrPermission),
//     object-store URIs as they are (objectName);
//   - which part of the request's filter goes to iceberg-go's pruning:
//     what translates exactly, and never a part that could prune a file
//     holding a matching row (pruningFilter);
//   - what is refused: format versions above 3, encrypted tables, column
//     initial-defaults, data files in Avro (source.Error Unimplemented);
//     an unknown table, snapshot or ref (NotFound); metadata that does not
//     decode or names missing manifests (Corrupt).
//
// Every listed file is matched by field id (source.ByFieldID) against the
// listing's schema (the snapshot's schema for a snapshot id, tag or time,
// the current one otherwise, as iceberg-go and PyIceberg choose), with the
// table's name mapping as physical names for files written without field
// ids. Identity partition columns that every listed file's spec has are
// the listing's partitions, their values from the manifests.
//
// A table may also be named through a Catalog (catalog.go):
// "catalog.namespace.table", told from a path by Catalogs.Lookup. The
// catalog only says where the current metadata file is (the REST and SQL
// catalogs are in source/iceberg/catalogs, configured by cmd/scand); the
// source reads it through storage as any other, and asks Authorize about
// the table's location too, so a caller's scope covers a catalog table as
// it covers one named by location.
//
// Planning reads each manifest whole in one request, 48 at a time (on an
// object store a manifest costs a round trip, not its decoding). A
// PlanCache (Options.Plans) keeps a snapshot's plan for a metadata file,
// its version, the snapshot, the schema and the pruning filter: the
// manifest list and manifests are immutable, so a later scan of that
// snapshot reads neither again; the metadata file is read every time, so a
// commit is seen at once. A cached plan's objects are authorized again,
// by name and as their stats found them when the plan was made (a link's
// target included), without being stat'ed again. Plans an
// engine hands over (Request.Tasks) are not cached.
package iceberg
