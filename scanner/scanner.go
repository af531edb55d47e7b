package scanner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/storage"
)

var (
	// ErrCorrupt marks a file whose bytes contradict its format.
	ErrCorrupt = errors.New("corrupt or truncated file")
	// ErrUnsupported marks a valid file that uses a feature scand cannot
	// decode (a codec, encryption without keys).
	ErrUnsupported = errors.New("unsupported file feature")
	// ErrNotColumnar marks a file that is neither Parquet nor ORC.
	ErrNotColumnar = errors.New("not a Parquet or ORC file")
)

// UnknownColumnError reports requested columns that no scanned file has.
type UnknownColumnError struct {
	Columns   []string
	Available []string
}

func (e *UnknownColumnError) Error() string {
	avail := e.Available
	more := ""
	if len(avail) > 40 {
		more = fmt.Sprintf(" and %d more", len(avail)-40)
		avail = avail[:40]
	}
	noun := "column"
	if len(e.Columns) > 1 {
		noun = "columns"
	}
	return fmt.Sprintf("unknown %s %s; available columns: %s%s",
		noun, quoteAll(e.Columns), strings.Join(avail, ", "), more)
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// Format names a file format.
type Format int

const (
	FormatUnknown Format = iota
	FormatParquet
	FormatORC
)

func (f Format) String() string {
	switch f {
	case FormatParquet:
		return "parquet"
	case FormatORC:
		return "orc"
	}
	return "unknown"
}

// Source is how readers get a file's bytes: an io.ReaderAt (safe for
// concurrent use) over an object of known size. What else a Source can do
// it declares: the optional interfaces below, and what its storage can do
// (Capable).
type Source interface {
	io.ReaderAt
	Size() int64
}

// Capable is an optional interface of a Source backed by a storage object
// (the IO scheduler's files): it reports the object's declared
// capabilities. Readers ask through CapabilitiesOf.
type Capable interface {
	Capabilities() storage.Capabilities
}

// CapabilitiesOf returns what src's storage declares it can do; a Source
// that is not Capable (bytes in memory, a test source) declares nothing.
func CapabilitiesOf(src Source) storage.Capabilities {
	if c, ok := src.(Capable); ok {
		return c.Capabilities()
	}
	return storage.Capabilities{}
}

// Range is a byte range [Off, Off+Len) of a file: storage's type, which
// the IO scheduler plans with too.
type Range = storage.Range

// Prefetcher is an optional interface of a Source. A reader that knows
// which byte ranges a split needs (column chunks, ORC streams, stripe
// footers) announces them, in the order it will read them, before reading;
// the source can then fetch them in a few large coalesced requests ahead
// of the reads, within its memory budget. Reads of announced ranges are
// served from those fetches; anything else is read on demand as usual.
// Announcing is a hint: correctness never depends on it.
type Prefetcher interface {
	Prefetch(ranges []Range)
}

// Prefetch announces ranges to src when it supports it, and src is not
// memory-mapped (a mapped file's reads are copies from memory already;
// storage.Capabilities.Mapped).
func Prefetch(src Source, ranges []Range) {
	if CapabilitiesOf(src).Mapped {
		return
	}
	if p, ok := src.(Prefetcher); ok && len(ranges) > 0 {
		p.Prefetch(ranges)
	}
}

// SelectivePrefetcher is an optional interface of a Prefetcher for
// announcements of a selective plan: a few pages of each column chunk,
// kept by the page index or a limit, small and far apart. The source may
// then read through less of the gaps between them than it would for
// whole chunks (iosched's hole policy).
type SelectivePrefetcher interface {
	PrefetchSelective(ranges []Range)
}

// PrefetchSelective announces the ranges of a selective plan: as
// Prefetch, through PrefetchSelective where src has it.
func PrefetchSelective(src Source, ranges []Range) {
	if CapabilitiesOf(src).Mapped || len(ranges) == 0 {
		return
	}
	if p, ok := src.(SelectivePrefetcher); ok {
		p.PrefetchSelective(ranges)
		return
	}
	Prefetch(src, ranges)
}

// Lender is an optional interface of a Source that holds some of a file's
// bytes in memory already (the IO scheduler's prefetched ranges): it lends
// them instead of copying them into the caller's buffer, so a decoder can
// build Arrow arrays that point into them (the zero-copy read path).
type Lender interface {
	// Borrow returns the n bytes at off without copying them. They stay
	// valid and unchanged until release is called, which must happen
	// exactly once; the source counts them against its memory budget
	// until then. ok is false, with a nil error, when the source does not
	// hold the range that way (not announced, already consumed, mapped, or
	// memory too short): the caller reads it with ReadAt instead. err
	// reports a failed fetch or a cancelled scan.
	Borrow(off, n int64) (b []byte, release func(), ok bool, err error)
}

// MetadataCache is an optional interface of a Source: a cache of parsed
// metadata for exactly this object (same name, size and version), shared by
// every scan, so repeated scans of a file cost no footer read. Values must
// be safe for concurrent reads.
type MetadataCache interface {
	CachedMetadata(kind string) (any, bool)
	CacheMetadata(kind string, v any, size int64)
}

// Detect tells a file's format from its magic bytes. It reads the last four
// bytes first, since a reader fetches the file's tail anyway for the footer.
func Detect(src Source) (Format, error) {
	cache, _ := src.(MetadataCache)
	if cache != nil {
		if v, ok := cache.CachedMetadata("format"); ok {
			return v.(Format), nil
		}
	}
	f, err := detect(src)
	if err == nil && cache != nil {
		cache.CacheMetadata("format", f, 64)
	}
	return f, err
}

func detect(src Source) (Format, error) {
	size := src.Size()
	if size >= 8 {
		var tail [4]byte
		if _, err := src.ReadAt(tail[:], size-4); err != nil && !errors.Is(err, io.EOF) {
			return FormatUnknown, err
		}
		if string(tail[:]) == "PAR1" || string(tail[:]) == "PARE" {
			return FormatParquet, nil
		}
	}
	var head [4]byte
	n, err := src.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return FormatUnknown, err
	}
	switch {
	case bytes.HasPrefix(head[:n], []byte("PAR1")), bytes.HasPrefix(head[:n], []byte("PARE")):
		return FormatParquet, fmt.Errorf("Parquet file without its trailing magic bytes (truncated?): %w", ErrCorrupt)
	case bytes.HasPrefix(head[:n], []byte("ORC")):
		return FormatORC, nil
	case size == 0:
		return FormatUnknown, fmt.Errorf("empty file (0 bytes): %w", ErrNotColumnar)
	}
	return FormatUnknown, fmt.Errorf("no Parquet or ORC magic bytes: %w", ErrNotColumnar)
}

// Group is one unit of splitting: a Parquet row group or an ORC stripe.
type Group struct {
	Rows int64
	// Bytes is the compressed size of the projected columns in the group.
	Bytes int64
	// MemBytes estimates the decoded size of the projected columns.
	MemBytes int64
	// WorkBytes estimates the memory the reader holds while it decodes
	// the group, apart from the batches it emits: stream buffers, pages,
	// stripe data. The server admits streams by it (iosched.Admission).
	WorkBytes int64
}

// Projection is a file's answer to a column list.
type Projection struct {
	// Schema has the projected columns this file has, in request order.
	Schema *arrow.Schema
	// Missing lists requested columns this file does not have.
	Missing []string
	// Groups describes every row group of the file for this projection.
	Groups []Group
	// Impl is the reader's private resolution of the columns.
	Impl any
}

// ReadOptions say how to read a projection.
type ReadOptions struct {
	// Groups to read, in file order.
	Groups []int
	// BatchRows is the number of rows per batch; 0 lets the reader choose.
	BatchRows int64
	Mem       memory.Allocator
	// Budget, when set, is charged for every allocation whose size the
	// file declares (a page's uncompressed size, a dictionary, a stripe's
	// streams) before the reader makes it; nil charges nothing.
	Budget Reserver
	// Filter, when set, is the filter the caller applies to the rows it
	// gets: a reader may leave out rows it proves the filter rejects (by
	// the Parquet page index, or ORC's row index: docs/indexes.md), never
	// a row it may keep.
	Filter *filter.Predicate
	// Limit, when positive and Filter is nil, is how many rows the caller
	// needs: a reader may fetch and decode only what holds the first
	// Limit rows of the groups.
	Limit int64
	// MaxIndexBytes caps the index bytes (the Parquet page index) one
	// read fetches to decide what else to fetch; 0 lets the reader
	// choose, a negative value reads no index.
	MaxIndexBytes int64
	// Counts, when set, is told what the indexes saved.
	Counts *ReadCounts
	// LateMaterialization chooses whether a filtered read may decode the
	// filter's columns first and fetch the other columns' pages only
	// where rows survive (Parquet with a page index: docs/filters.md).
	LateMaterialization LateMode
	// RoundTripBytes is what the store transfers in one round trip's time:
	// the IO scheduler's merge hole (iosched.Scheduler.Hole), the gap it
	// would rather read through than pay a request for. LateAuto reads a
	// row group late only when the other columns' bytes exceed it: its
	// second pass costs a round trip, which must buy more than it costs.
	// 0: only the reader's own floor (1 MiB) applies.
	RoundTripBytes int64
}

// LateMode is ReadOptions.LateMaterialization.
type LateMode int

const (
	// LateAuto reads late while it pays: it stops, for the rest of the
	// read, once a row group showed that most of the other columns' bytes
	// hold surviving rows.
	LateAuto LateMode = iota
	// LateOff reads every projected column at once.
	LateOff
	// LateAlways reads late wherever it can (tests, benchmarks).
	LateAlways
)

var lateModeNames = [...]string{LateAuto: "auto", LateOff: "off", LateAlways: "always"}

func (m LateMode) String() string {
	if m >= 0 && int(m) < len(lateModeNames) {
		return lateModeNames[m]
	}
	return fmt.Sprintf("LateMode(%d)", int(m))
}

// LatePlanner is an optional interface of a File: how a filtered read of
// groups of p would use late materialization, predicted from the footer
// alone (no IO) with the decision the reader itself makes per row group.
// The server reports it in the plan (explain); the read's outcome is
// StreamStats.late_row_groups.
type LatePlanner interface {
	PlanLate(p *Projection, groups []int, filterColumns []string, mode LateMode, roundTripBytes int64) LatePlan
}

// LatePlan is a LatePlanner's prediction.
type LatePlan struct {
	// Strategy is "yes" (every row group read late, as far as the footer
	// tells), "no" (none), or "while reading" (some groups: the reader
	// decides each).
	Strategy string
	// Reason says why, for people: "filter on fare; 12 of 20 columns
	// deferred", "projection is only the filter columns".
	Reason string
	// LateGroups of Groups would be read late.
	LateGroups, Groups int
}

// ParseLateMode parses auto, off or always.
func ParseLateMode(s string) (LateMode, error) {
	for m, name := range lateModeNames {
		if s == name {
			return LateMode(m), nil
		}
	}
	return 0, fmt.Errorf("late materialization %q: want auto, off or always", s)
}

// ReadCounts are what a read's indexes saved, for the stream's figures.
type ReadCounts struct {
	// PagesSkipped counts data pages neither fetched nor decoded, over
	// every column read.
	PagesSkipped int64
	// LateGroups counts the row groups whose filter columns were decoded
	// and evaluated before the other columns' pages were chosen.
	LateGroups int64
	// LateGaveUp says that LateAuto found, on a row group read late, that
	// most of its pages held survivors, and read the rest in one pass; a
	// caller reading more files of the same scan may pass LateOff to them
	// (the server does, for the files of one stream).
	LateGaveUp bool
}

// Reserver is the decode-memory account of one stream. A reader reserves
// what a file's metadata says it is about to allocate before allocating
// it, and releases it when the memory is freed, so that a file that
// declares huge pages waits for memory or fails instead of taking it.
type Reserver interface {
	// Reserve charges n more bytes, waiting while other streams hold the
	// memory. It fails when n can never fit, or ctx ends.
	Reserve(ctx context.Context, n int64) error
	// Release gives back n bytes of earlier reservations.
	Release(n int64)
}

// metadataBudgetKey carries a Reserver for file metadata in a context.
type metadataBudgetKey struct{}

// WithMetadataBudget returns ctx carrying r: a reader's Open given ctx
// reserves from r what the file's decoded metadata will take, before
// decoding it. The reservation is the caller's to release (it lasts as
// long as the caller keeps what Open built); Open never releases it.
// The planner charges planning this way (planner/planmem).
func WithMetadataBudget(ctx context.Context, r Reserver) context.Context {
	return context.WithValue(ctx, metadataBudgetKey{}, r)
}

// MetadataBudget returns the Reserver ctx carries for file metadata, or
// nil.
func MetadataBudget(ctx context.Context) Reserver {
	r, _ := ctx.Value(metadataBudgetKey{}).(Reserver)
	return r
}

// File is an opened columnar file. It is not safe for concurrent use.
type File interface {
	Format() Format
	// Schema is the whole file's Arrow schema.
	Schema() *arrow.Schema
	NumRows() int64
	// Project resolves column names (empty: all columns).
	Project(columns []string) (*Projection, error)
	// Read decodes the chosen groups of a projection and calls emit with
	// every batch, in order. emit owns the batch (it must Release it).
	// Read stops at emit's first error and returns it.
	Read(ctx context.Context, p *Projection, opts ReadOptions, emit func(arrow.RecordBatch) error) error
}

// FieldIDs is an optional interface of a File whose format keeps field
// ids outside the schema it reads (ORC's type attributes): its schema
// with each field's id in the metadata key Parquet files carry it under
// ("PARQUET:field_id"), nested fields too. Tables match columns by it.
type FieldIDs interface {
	SchemaWithFieldIDs() *arrow.Schema
}

// Statistics is an optional interface of a File: the column statistics
// its writer recorded, for pruning. GroupStats(g) describes row group
// (stripe) g of the file, GroupStats(-1) the whole file. Columns are named
// by dotted path, and statistics come typed as the column's Arrow type,
// with everything that cannot be trusted left out (see filter.ColumnStats):
// statistics of old writers with a wrong sort order, NaN bounds, INT96.
type Statistics interface {
	GroupStats(g int) filter.StatsSource
}

// Warner is an optional interface of a File that reads but has something
// to say about it (an ORC file from a future format version, read by the
// rules of the newest one scand knows). The server logs the warnings when
// it plans a scan of the file.
type Warner interface {
	Warnings() []string
}

// Recover turns a panic in a third-party decoder into an ErrCorrupt error
// naming what was being done. Use as `defer scanner.Recover(&err, "...")`.
func Recover(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: decoder failed (%v): %w", what, r, ErrCorrupt)
	}
}

// ColumnNames lists a schema's columns as a user would request them:
// top-level names, and dotted paths into structs.
func ColumnNames(s *arrow.Schema) []string {
	var out []string
	var walk func(prefix string, f arrow.Field)
	walk = func(prefix string, f arrow.Field) {
		name := prefix + f.Name
		out = append(out, name)
		if st, ok := f.Type.(*arrow.StructType); ok {
			for _, c := range st.Fields() {
				walk(name+".", c)
			}
		}
	}
	for _, f := range s.Fields() {
		walk("", f)
	}
	return out
}

// Unify merges per-file schemas into the one schema every batch of a scan
// has, as pyarrow.dataset does (see docs/schemas.md):
//   - fields in order of first appearance; a field missing from some files
//     becomes nullable, and so does one that is nullable in any file;
//   - a field's type is the one of the first file that has it (a null-typed
//     column takes the first other type found instead); other files' columns
//     are cast to it when Promotable says they can be, checked value by value
//     when they are read, and any other disagreement is an error naming both
//     files;
//   - schema metadata (the `pandas` key included) comes from the first
//     file, and field metadata from a field's first appearance, without
//     arrow-go's PARQUET:field_id "-1" markers (see CleanField).
func Unify(names []string, schemas []*arrow.Schema) (*arrow.Schema, error) {
	type entry struct {
		field arrow.Field
		from  string
		count int
	}
	var order []string
	byName := map[string]*entry{}
	for i, s := range schemas {
		for _, f := range s.Fields() {
			e, ok := byName[f.Name]
			if !ok {
				byName[f.Name] = &entry{field: CleanField(f), from: names[i], count: 1}
				order = append(order, f.Name)
				continue
			}
			if e.field.Type.ID() == arrow.NULL && f.Type.ID() != arrow.NULL {
				e.field.Type, e.from = CleanField(f).Type, names[i]
			} else if !Promotable(f.Type, e.field.Type) || tableOnlyPromotion(f.Type, e.field.Type) {
				return nil, fmt.Errorf("column %q is %s in %s but %s in %s, and scand does not cast %s to %s (docs/schemas.md); files scanned together must agree on column types",
					f.Name, e.field.Type, e.from, f.Type, names[i], f.Type, e.field.Type)
			}
			e.field.Nullable = e.field.Nullable || f.Nullable
			e.count++
		}
	}
	fields := make([]arrow.Field, len(order))
	for i, n := range order {
		e := byName[n]
		if e.count < len(schemas) {
			e.field.Nullable = true
		}
		fields[i] = e.field
	}
	var meta *arrow.Metadata
	if len(schemas) > 0 && schemas[0].HasMetadata() {
		m := CleanSchemaMetadata(schemas[0].Metadata())
		meta = &m
	}
	return arrow.NewSchema(fields, meta), nil
}

// Promotable says whether a column of type from (a file's) may be cast to
// to (the scan's type, from the first file), as pyarrow.dataset casts it:
// integers and floats among themselves, timestamps of any unit and zone,
// string and binary types among themselves, dictionaries and their value
// types both ways, and null to anything. The cast itself is safe: a value
// it would change (an overflow, a truncated float, lost nanoseconds,
// invalid UTF-8) fails the read. Other pairs (numbers and strings, dates
// and timestamps, decimals of another precision, nested types that differ)
// pyarrow casts or not depending on its kernels; scand refuses them when it
// plans, naming both files.
//
// A table's schema (Iceberg) also promotes what its spec allows beyond
// those: a decimal to a wider precision of the same scale, and a date to a
// timestamp without a zone (midnight of that day). Files scanned together
// without a table do not unify by these (Unify refuses them, as before).
func Promotable(from, to arrow.DataType) bool {
	if arrow.TypeEqual(from, to) || from.ID() == arrow.NULL {
		return true
	}
	if d, ok := from.(*arrow.DictionaryType); ok {
		from = d.ValueType
	}
	if d, ok := to.(*arrow.DictionaryType); ok {
		to = d.ValueType
	}
	if arrow.TypeEqual(from, to) {
		return true
	}
	if tableOnlyPromotion(from, to) {
		return true
	}
	kf, kt := promotionKind(from), promotionKind(to)
	return kf != kindNone && kf == kt
}

// tableOnlyPromotion reports the promotions only a table's schema makes
// (Iceberg's type promotion rules): decimal(P, S) to decimal(P', S) with
// P' > P, and date to timestamp without a zone.
func tableOnlyPromotion(from, to arrow.DataType) bool {
	if d, ok := from.(*arrow.DictionaryType); ok {
		from = d.ValueType
	}
	if d, ok := to.(*arrow.DictionaryType); ok {
		to = d.ValueType
	}
	switch f := from.(type) {
	case *arrow.Decimal128Type:
		t, ok := to.(*arrow.Decimal128Type)
		return ok && f.Scale == t.Scale && f.Precision < t.Precision
	case *arrow.Date32Type:
		t, ok := to.(*arrow.TimestampType)
		return ok && t.TimeZone == ""
	}
	return false
}

// The kinds within which Promotable casts.
const (
	kindNone = iota
	kindNumber
	kindTimestamp
	kindBytes
)

func promotionKind(t arrow.DataType) int {
	switch {
	case arrow.IsInteger(t.ID()), arrow.IsFloating(t.ID()) && t.ID() != arrow.FLOAT16:
		return kindNumber
	case t.ID() == arrow.TIMESTAMP:
		return kindTimestamp
	case t.ID() == arrow.STRING, t.ID() == arrow.LARGE_STRING, t.ID() == arrow.BINARY, t.ID() == arrow.LARGE_BINARY:
		return kindBytes
	}
	return kindNone
}

// parquetFieldID is the field metadata key of a Parquet field id.
const parquetFieldID = "PARQUET:field_id"

// CleanField is f with the metadata pyarrow shows for it: arrow-go's
// pqarrow marks every field of a file without field ids with
// PARQUET:field_id "-1", nested children too, where pyarrow shows no key at
// all; real ids (written by Iceberg or Spark, or set by the user) stay, as
// pyarrow keeps them. Nested fields are cleaned throughout.
func CleanField(f arrow.Field) arrow.Field {
	out := arrow.Field{Name: f.Name, Type: cleanType(f.Type), Nullable: f.Nullable}
	if f.HasMetadata() {
		keys, values := make([]string, 0, f.Metadata.Len()), make([]string, 0, f.Metadata.Len())
		for i, k := range f.Metadata.Keys() {
			if v := f.Metadata.Values()[i]; k != parquetFieldID || v != "-1" {
				keys, values = append(keys, k), append(values, v)
			}
		}
		if len(keys) > 0 {
			out.Metadata = arrow.NewMetadata(keys, values)
		}
	}
	return out
}

// cleanType rebuilds nested types with their fields cleaned; other types
// are returned as they are.
func cleanType(t arrow.DataType) arrow.DataType {
	switch t := t.(type) {
	case *arrow.StructType:
		fs := make([]arrow.Field, t.NumFields())
		for i, f := range t.Fields() {
			fs[i] = CleanField(f)
		}
		return arrow.StructOf(fs...)
	case *arrow.MapType:
		m := arrow.MapOfFields(CleanField(t.KeyField()), CleanField(t.ItemField()))
		m.KeysSorted = t.KeysSorted
		return m
	case *arrow.ListType:
		return arrow.ListOfField(CleanField(t.ElemField()))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(CleanField(t.ElemField()))
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), CleanField(t.ElemField()))
	}
	return t
}

// CleanSchemaMetadata is a file's schema metadata as pyarrow shows it:
// without ARROW:schema, the serialized schema pyarrow and arrow-go store
// for themselves (pqarrow applies it, then keeps the stored schema's own
// metadata, which has no such key; files from other writers may still
// carry one in their key-value metadata).
func CleanSchemaMetadata(m arrow.Metadata) arrow.Metadata {
	if m.FindKey("ARROW:schema") < 0 {
		return m
	}
	keys, values := make([]string, 0, m.Len()), make([]string, 0, m.Len())
	for i, k := range m.Keys() {
		if k != "ARROW:schema" {
			keys, values = append(keys, k), append(values, m.Values()[i])
		}
	}
	return arrow.NewMetadata(keys, values)
}

// SortedUnique returns the sorted distinct strings of s.
func SortedUnique(s []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(s)))
}
