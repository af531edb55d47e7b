package source

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/storage"
)

// A Source lists the files a scan reads.
type Source interface {
	// List returns the files to scan, each once, in a stable order (the
	// order of the scan's endpoints). Errors are classified by the
	// storage and scanner sentinels, or are a *Error.
	List(ctx context.Context) (*Listing, error)
}

// Listing is what a Source found.
type Listing struct {
	Files []File
	// Partitions are the partition columns every File carries a value
	// for (File.Partition, in this order): inferred from hive paths, or a
	// table's partition spec. Empty for unpartitioned sources.
	Partitions []arrow.Field
	// Schema is the table's schema when the source has one (an Iceberg or
	// Delta table's current or chosen schema, with logical names and,
	// under ByFieldID, field ids in each field's "PARQUET:field_id"
	// metadata). Nil when the scan's schema is the files' own, unified
	// from their footers (globs and prefixes).
	Schema *arrow.Schema
	// Table is what a table's own planning did before the listing (its
	// manifests, data files and delete files); nil for sources that are
	// no tables.
	Table *TablePlan
}

// TablePlan counts a table's planning: the snapshot's manifests
// (data and delete) read and skipped by their partition summaries, its
// data files dropped by partition and column statistics (not listed), and
// the distinct delete files attached to the data files listed. A figure
// the table's metadata cannot give (a snapshot without the summary's
// total-data-files) is -1.
type TablePlan struct {
	ManifestsRead, ManifestsSkipped int64
	DataFilesPruned                 int64
	DeleteFiles                     int64
}

// File is one object to scan, and what reading it correctly needs beyond
// its own footer.
type File struct {
	// Object is the object and the version the scan is pinned to.
	Object storage.Info
	// TablePath is the file's name as a table's metadata writes it (a
	// full URI, "s3://..." or "file:///..."), when it differs from
	// Object.Name: position-delete files name the data file they delete
	// from by it. Empty for plain files.
	TablePath string
	// Format is the file's format when the source knows it;
	// scanner.FormatUnknown lets the reader tell it from the bytes.
	Format scanner.Format
	// RowGroups are the row groups (Parquet) or stripes (ORC) the source
	// chose; nil means all of them.
	RowGroups []int
	// Partition holds the file's value of each Listing.Partitions column,
	// in that order; a nil entry is null. Nil when the listing has no
	// partition columns.
	Partition []scalar.Scalar
	// Columns says how the file's columns map to the scan's.
	Columns Columns
	// Deletes are the rows to remove from this file; empty for plain files.
	Deletes []Delete
	// Stats are the file's column statistics as the source's metadata
	// records them (a Delta add's stats, an Iceberg manifest entry's
	// bounds), by logical dotted column name and typed as the scan's
	// column, holding only what is true of the file's rows once its
	// Deletes are applied (filter.ColumnStats): the planner can skip the
	// file by them before opening it, as it skips row groups by the
	// footer's. Nil when the source has none.
	Stats filter.StatsSource
}

// Match is how a file's columns are found for the scan's columns.
type Match int

const (
	// ByName matches a column by its name (after Columns.Physical).
	ByName Match = iota
	// ByFieldID matches a column by the field id the scan's schema gives
	// it (Listing.Schema, "PARQUET:field_id"), whatever its name in the
	// file: columns renamed, dropped and re-added stay apart. A scan
	// column without a match in the file reads as nulls.
	ByFieldID
)

// Columns maps the scan's columns to one file's.
type Columns struct {
	Match Match
	// Physical maps a logical column name (dotted for nested fields) to
	// the name the file stores it under, where the two differ: Delta's
	// column mapping in "name" mode, or an Iceberg name mapping for files
	// written without field ids. Nil when names are the same.
	Physical map[string]string
}

// DeleteKind is what a Delete holds.
type DeleteKind int

const (
	// PositionDeletes is a file of (file_path, pos) rows: pos is a
	// 0-based row position in the data file named by file_path.
	PositionDeletes DeleteKind = iota + 1
	// EqualityDeletes is a file of rows: a data row whose values equal
	// one of them on every EqualityFieldIDs column is deleted.
	EqualityDeletes
	// DeletionVector is a bitmap of deleted row positions (a 64-bit
	// roaring bitmap in the portable format), stored inline or in a range
	// of a file (an Iceberg Puffin blob or a Delta DV file).
	DeletionVector
)

// Delete is one set of rows to remove from a File.
type Delete struct {
	Kind DeleteKind
	// Object and Format locate a delete file (PositionDeletes,
	// EqualityDeletes, or a DeletionVector stored in a file).
	Object storage.Info
	Format scanner.Format
	// EqualityFieldIDs are the columns EqualityDeletes compares.
	EqualityFieldIDs []int
	// Offset and Length are a DeletionVector's range in Object.
	Offset, Length int64
	// Inline is a DeletionVector stored in the table's metadata itself.
	// A DeletionVector's bytes, in Object's range or Inline, are framed
	// as an Iceberg deletion-vector-v1 blob and a Delta deletion vector
	// file both store them: the length of what follows up to the checksum
	// (4 bytes, big-endian), the magic number D1 D3 39 64, the portable
	// 64-bit roaring bitmap, and the CRC-32 of the magic number and
	// bitmap (4 bytes, big-endian).
	Inline []byte
	// Cardinality is the number of rows deleted, when the metadata says
	// (-1 when it does not): it sizes what applying the delete needs.
	Cardinality int64
}

// Error is a source's refusal of a request: the table or version does not
// exist, or uses a feature scand does not read. The server maps Kind to a
// gRPC code once, at its edge.
type Error struct {
	Kind ErrorKind
	Msg  string
	Err  error
}

// ErrorKind classifies an Error.
type ErrorKind int

const (
	// Invalid: the request names something malformed.
	Invalid ErrorKind = iota + 1
	// NotFound: the table, snapshot or version does not exist.
	NotFound
	// Unimplemented: a feature of the table that scand does not read
	// (named in Msg), never read silently.
	Unimplemented
	// Corrupt: the table's metadata cannot be decoded.
	Corrupt
	// TooLarge: the request names more than one scan may read (too many
	// files); Msg says how to narrow it.
	TooLarge
	// Unavailable: a service the source asks (a table catalog) could not
	// be reached or did not answer; trying again later may work.
	Unavailable
)

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }
