package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	ice "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// Request is what a scan asks of an Iceberg table.
type Request struct {
	// Table is the table's metadata file (".../metadata/00003-<uuid>.metadata.json")
	// or its location (the directory holding metadata/ and data/), as a
	// name the server's storage resolves: relative to its root, or a URI
	// (s3://...). With Catalog set, it is the catalog table's name,
	// "catalog.namespace.table" (Catalogs.Lookup).
	Table string
	// Catalog, when set, resolves Table to its metadata file.
	Catalog Catalog
	// At most one of SnapshotID, Ref and AsOf chooses the snapshot; none
	// means the current one.
	SnapshotID int64
	Ref        string
	AsOf       time.Time
	// Filter is the request's filter, unbound, or nil. Planning prunes
	// manifests and files with what of it translates to Iceberg
	// (pruningFilter); the rows are still filtered by scand.
	Filter filter.Expr
	// Tasks, when set, are what an engine planned: the listing holds
	// exactly their files and deletes, and the snapshot is not planned.
	Tasks []Task
}

// Options configure a Source.
type Options struct {
	// Authorize, when set, is asked before any object of the table is
	// read (version hint, metadata files, manifest lists, manifests):
	// with its storage name, then with what a Stat of it found (a link's
	// target); its error fails the listing. The caller checks the listed
	// files (data and delete files) itself when it opens them.
	Authorize func(info storage.Info) error
	// MaxMetadataBytes caps one metadata file, manifest list or manifest
	// read whole; 0 means DefaultMaxMetadataBytes.
	MaxMetadataBytes int64
	// Plans, when set, keeps plans between listings (a server's scans of
	// the same snapshot); nil plans every listing from the manifests.
	Plans *PlanCache
}

// DefaultMaxMetadataBytes is the largest table metadata object read whole.
const DefaultMaxMetadataBytes = 256 << 20

// manifestConcurrency is how many manifests planning reads at once.
// iceberg-go's default is GOMAXPROCS, which suits decoding, but reading a
// manifest from an object store is mostly waiting for its first byte: a
// table of 200 manifests on a store 30 ms away plans in 200/2 round trips
// with 2 cores, in 200/48 with 48 (bench/iceberg: a cold plan of 200
// manifests on versitygw at +30 ms took 2.3 s with 16, 1.5 s with 48).
const manifestConcurrency = 48

// Source lists the files of one snapshot of an Iceberg table.
type Source struct {
	bucket storage.Bucket
	req    Request
	opts   Options

	table Table
}

var _ source.Source = (*Source)(nil)

// Table says what a listing read: the metadata file and the snapshot.
type Table struct {
	// Metadata is the metadata file's storage name.
	Metadata      string
	FormatVersion int
	// SnapshotID is the snapshot listed; 0 for a table without snapshots.
	SnapshotID int64
	SchemaID   int
	// Objects are the storage names of the metadata objects read:
	// metadata file, manifest list, manifests.
	Objects []string
}

// New returns a Source of the table req names, read through bucket.
func New(bucket storage.Bucket, req Request, opts Options) *Source {
	if opts.MaxMetadataBytes <= 0 {
		opts.MaxMetadataBytes = DefaultMaxMetadataBytes
	}
	return &Source{bucket: bucket, req: req, opts: opts}
}

// Table describes what the last List read.
func (s *Source) Table() Table { return s.table }

// List implements source.Source: the data files of the chosen snapshot
// that the filter may match, in iceberg-go's planning order, each with
// its deletes, matched by field id.
func (s *Source) List(ctx context.Context) (*source.Listing, error) {
	l, err := s.list(ctx)
	if err != nil {
		return nil, classify(s.req.Table, err)
	}
	return l, nil
}

func (s *Source) list(ctx context.Context) (*source.Listing, error) {
	if err := s.checkSelectors(); err != nil {
		return nil, err
	}
	var name string
	var err error
	if s.req.Catalog != nil {
		name, err = s.catalogMetadata(ctx) // catalog.go
	} else {
		name, err = objectName(s.bucket, strings.TrimSuffix(s.req.Table, "/"))
	}
	if err != nil {
		return nil, err
	}
	if s.req.Catalog == nil && !isMetadataFile(name) {
		if name, err = s.locate(ctx, name); err != nil {
			return nil, err
		}
	}
	raw, metaInfo, err := s.readMetadata(ctx, name, s.opts.MaxMetadataBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("no Iceberg metadata file %s", name), Err: err}
		}
		return nil, err
	}
	meta, err := parseMetadata(name, raw)
	if err != nil {
		return nil, err
	}
	if err := checkSupported(meta); err != nil {
		return nil, err
	}
	if s.req.Catalog != nil {
		if err := s.checkLocation(meta.Location(), name); err != nil {
			return nil, err
		}
	}
	s.table = Table{Metadata: name, FormatVersion: meta.Version()}

	fsys := &bucketIO{ctx: ctx, bucket: s.bucket, authorize: s.opts.Authorize, maxBytes: s.opts.MaxMetadataBytes}
	fsF := func(context.Context) (iceio.IO, error) { return fsys, nil }
	tbl := table.New(table.Identifier{name}, meta, name, fsF, nil)
	scan, err := s.scan(tbl, meta)
	if err != nil {
		return nil, err
	}
	defer scan.Close()
	snap, err := scan.ResolveSnapshot()
	if err != nil {
		return nil, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("table %s: %s", s.req.Table, snapshotError(s.req, err)), Err: err}
	}
	schema, err := scan.Projection()
	if err != nil {
		return nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("table %s: schema", s.req.Table), Err: err}
	}
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	arrowSchema, err := table.SchemaToArrowSchema(schema, nil, true, false)
	if err != nil {
		return nil, &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("table %s: a column type scand does not read", s.req.Table), Err: err}
	}
	s.table.SchemaID = schema.ID
	listing := &source.Listing{Schema: arrowSchema}
	if snap == nil {
		return listing, nil // a table without snapshots: no rows
	}
	s.table.SnapshotID = snap.SnapshotID
	if list, err := objectName(s.bucket, snap.ManifestList); err == nil {
		fsys.mu.Lock()
		fsys.keep = list
		fsys.mu.Unlock()
	}

	// Plans handed over by an engine are its own: only planned listings
	// are cached.
	var prune ice.BooleanExpression
	var key planKey
	planned := len(s.req.Tasks) == 0
	if planned {
		prune = s.pruning(arrowSchema, schema)
		key = planKey{metadata: name, version: metaInfo.Version, size: metaInfo.Size, snapshot: snap.SnapshotID, schema: schema.ID}
		if prune != nil {
			key.filter = prune.String()
		}
		if hit, ok := s.opts.Plans.get(key); ok {
			// The objects were read (and allowed) when the plan was made;
			// the caller's scope may differ from that scan's, so it is
			// asked again about each as it was then: by name, then by what
			// its stat found (where a link led).
			if s.opts.Authorize != nil {
				for i, r := range hit.read {
					if err := s.opts.Authorize(storage.Info{Name: r}); err != nil {
						return nil, err
					}
					if i < len(hit.infos) {
						if err := s.opts.Authorize(hit.infos[i]); err != nil {
							return nil, err
						}
					}
				}
			}
			s.table.Objects = append([]string{name}, hit.read...)
			if err := s.files(listing, meta, schema, hit.tasks); err != nil {
				return nil, err
			}
			plan := hit.plan
			listing.Table = &plan
			return listing, nil
		}
	}

	// The snapshot's manifests, read here before planning reads them: the
	// files each names size what decoding it is charged (bucketIO.Open),
	// and planCounts counts those planning opened.
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, err
	}
	byName, _ := ice.IndexByName(schema) // every field, nested ones too
	fsys.expect(manifests, len(byName))

	var tasks []table.FileScanTask
	var taskGroups map[string][]int // tasks.go: row groups of files engine tasks cover in part
	if !planned {
		if tasks, taskGroups, err = s.decodeTasks(meta, schema); err != nil {
			return nil, err
		}
	} else if e := prune; e != nil {
		filtered, err := s.scan(tbl, meta, table.WithRowFilter(e))
		if err != nil {
			return nil, err
		}
		defer filtered.Close()
		tasks, err = filtered.PlanFiles(ctx)
		if err != nil && !reportable(err) {
			// Pruning only saves reading: a filter iceberg-go cannot
			// evaluate on this table's statistics (bounds written before a
			// type promotion, say) plans without it.
			tasks, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	if tasks == nil && len(s.req.Tasks) == 0 {
		if tasks, err = scan.PlanFiles(ctx); err != nil {
			return nil, err
		}
	}
	fsys.mu.Lock()
	read, infos := slices.Clone(fsys.read), slices.Clone(fsys.infos)
	fsys.mu.Unlock()
	s.table.Objects = append([]string{name}, read...)
	if err := s.files(listing, meta, schema, tasks); err != nil {
		return nil, err
	}
	for i, f := range listing.Files {
		listing.Files[i].RowGroups = taskGroups[f.TablePath]
	}
	if listing.Table, err = s.planCounts(snap, manifests, read, listing.Files); err != nil {
		return nil, err
	}
	if planned {
		s.opts.Plans.put(key, &planEntry{tasks: tasks, read: read, infos: infos, plan: *listing.Table})
	}
	return listing, nil
}

func (s *Source) checkSelectors() error {
	n := 0
	for _, set := range []bool{s.req.SnapshotID != 0, s.req.Ref != "", !s.req.AsOf.IsZero()} {
		if set {
			n++
		}
	}
	if n > 1 {
		return &source.Error{Kind: source.Invalid, Msg: "snapshot_id, ref and as_of choose a snapshot each: give at most one"}
	}
	return nil
}

// scan is the table's scan of the chosen snapshot.
func (s *Source) scan(tbl *table.Table, meta table.Metadata, extra ...table.ScanOption) (*table.Scan, error) {
	opts := extra
	switch {
	case s.req.SnapshotID != 0:
		if meta.SnapshotByID(s.req.SnapshotID) == nil {
			return nil, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("table %s has no snapshot %d", s.req.Table, s.req.SnapshotID)}
		}
		opts = append(opts, table.WithSnapshotID(s.req.SnapshotID))
	case !s.req.AsOf.IsZero():
		opts = append(opts, table.WithSnapshotAsOf(s.req.AsOf.UnixMilli()))
	}
	opts = append(opts, table.WithMaxConcurrency(manifestConcurrency))
	scan := tbl.Scan(opts...)
	if s.req.Ref != "" {
		if meta.SnapshotByName(s.req.Ref) == nil {
			return nil, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("table %s has no branch or tag %q", s.req.Table, s.req.Ref)}
		}
		ref, err := scan.UseRef(s.req.Ref)
		if err != nil {
			return nil, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("table %s: ref %q", s.req.Table, s.req.Ref), Err: err}
		}
		scan.Close()
		scan = ref
	}
	return scan, nil
}

func snapshotError(req Request, err error) string {
	if !req.AsOf.IsZero() {
		return fmt.Sprintf("no snapshot as of %s", req.AsOf.UTC().Format(time.RFC3339Nano))
	}
	return err.Error()
}

// parseMetadata decodes a metadata file. A format version iceberg-go does
// not know is Unimplemented, anything else that does not decode Corrupt.
func parseMetadata(name string, raw []byte) (table.Metadata, error) {
	var head struct {
		FormatVersion *int `json:"format-version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("table metadata %s is not JSON", name), Err: err}
	}
	if head.FormatVersion != nil && (*head.FormatVersion < 1 || *head.FormatVersion > 3) {
		return nil, &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("table metadata %s has format version %d; scand reads versions 1 to 3", name, *head.FormatVersion)}
	}
	meta, err := table.ParseMetadataBytes(raw)
	if err != nil {
		return nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("table metadata %s", name), Err: err}
	}
	return meta, nil
}

// checkSupported refuses tables that use what scand does not read.
func checkSupported(meta table.Metadata) error {
	for range meta.EncryptionKeys() {
		return &source.Error{Kind: source.Unimplemented, Msg: "the table is encrypted; scand does not read encrypted Iceberg tables"}
	}
	return nil
}

// checkSchema refuses column features scand does not read.
func checkSchema(schema *ice.Schema) error {
	var bad []string
	for _, f := range schema.Fields() {
		var walk func(path string, f ice.NestedField)
		walk = func(path string, f ice.NestedField) {
			if f.InitialDefault != nil {
				bad = append(bad, fmt.Sprintf("%s has an initial-default", path))
			}
			switch t := f.Type.(type) {
			case *ice.StructType:
				for _, c := range t.FieldList {
					walk(path+"."+c.Name, c)
				}
			}
		}
		walk(f.Name, f)
	}
	if len(bad) > 0 {
		return &source.Error{Kind: source.Unimplemented, Msg: "column defaults are not read: " + strings.Join(bad, "; ")}
	}
	return nil
}

// files turns planned tasks into the listing's files, one per data file
// (iceberg-go splits large files into several tasks by their split
// offsets; scand splits by row groups itself).
func (s *Source) files(l *source.Listing, meta table.Metadata, schema *ice.Schema, tasks []table.FileScanTask) error {
	parts := identityColumns(meta, schema, l.Schema, tasks)
	for _, p := range parts {
		l.Partitions = append(l.Partitions, p.field)
	}
	physical := physicalNames(meta.NameMapping(), schema)
	seen := map[string]bool{}
	for _, t := range tasks {
		df := t.File
		if seen[df.FilePath()] {
			continue
		}
		seen[df.FilePath()] = true
		f, err := s.file(df, t, parts, physical)
		if err != nil {
			return err
		}
		l.Files = append(l.Files, f)
	}
	return nil
}

func (s *Source) file(df ice.DataFile, t table.FileScanTask, parts []identityColumn, physical map[string]string) (source.File, error) {
	name, err := objectName(s.bucket, df.FilePath())
	if err != nil {
		return source.File{}, err
	}
	format, err := dataFormat(df)
	if err != nil {
		return source.File{}, err
	}
	f := source.File{
		Object:    storage.Info{Name: name, Size: df.FileSizeBytes()},
		TablePath: df.FilePath(),
		Format:    format,
		Columns:   source.Columns{Match: source.ByFieldID, Physical: physical},
	}
	if len(parts) > 0 {
		f.Partition = make([]scalar.Scalar, len(parts))
		values := df.Partition()
		for i, p := range parts {
			v, ok := p.specField[int(df.SpecID())]
			if !ok {
				continue
			}
			if f.Partition[i], err = partitionScalar(values[v], p.field.Type); err != nil {
				return source.File{}, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("partition value of %s in %s", p.field.Name, df.FilePath()), Err: err}
			}
		}
	}
	for _, d := range t.DeletionVectorFiles {
		del, err := s.deletionVector(df, d)
		if err != nil {
			return source.File{}, err
		}
		f.Deletes = append(f.Deletes, del)
	}
	for _, d := range t.DeleteFiles {
		del, err := s.deleteFile(d, source.PositionDeletes)
		if err != nil {
			return source.File{}, err
		}
		f.Deletes = append(f.Deletes, del)
	}
	for _, d := range t.EqualityDeleteFiles {
		del, err := s.deleteFile(d, source.EqualityDeletes)
		if err != nil {
			return source.File{}, err
		}
		del.EqualityFieldIDs = d.EqualityFieldIDs()
		if len(del.EqualityFieldIDs) == 0 {
			return source.File{}, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("equality delete file %s names no equality field ids", d.FilePath())}
		}
		f.Deletes = append(f.Deletes, del)
	}
	return f, nil
}

func dataFormat(df ice.DataFile) (scanner.Format, error) {
	switch df.FileFormat() {
	case ice.ParquetFile:
		return scanner.FormatParquet, nil
	case ice.OrcFile:
		return scanner.FormatORC, nil
	}
	return scanner.FormatUnknown, &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("%s is a %s file; scand reads Iceberg data and delete files in Parquet and ORC", df.FilePath(), df.FileFormat())}
}

func (s *Source) deleteFile(d ice.DataFile, kind source.DeleteKind) (source.Delete, error) {
	name, err := objectName(s.bucket, d.FilePath())
	if err != nil {
		return source.Delete{}, err
	}
	format, err := dataFormat(d)
	if err != nil {
		return source.Delete{}, err
	}
	return source.Delete{Kind: kind, Object: storage.Info{Name: name, Size: d.FileSizeBytes()}, Format: format, Cardinality: d.Count()}, nil
}

func (s *Source) deletionVector(data, d ice.DataFile) (source.Delete, error) {
	name, err := objectName(s.bucket, d.FilePath())
	if err != nil {
		return source.Delete{}, err
	}
	off, size := d.ContentOffset(), d.ContentSizeInBytes()
	if off == nil || size == nil || *off < 0 || *size <= 0 || *off+*size > d.FileSizeBytes() {
		return source.Delete{}, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("deletion vector of %s in %s has no valid content offset and size", data.FilePath(), d.FilePath())}
	}
	return source.Delete{Kind: source.DeletionVector, Object: storage.Info{Name: name, Size: d.FileSizeBytes()}, Offset: *off, Length: *size, Cardinality: d.Count()}, nil
}

// pruning is the request's filter as iceberg-go prunes by it, or nil for
// none. A filter that does not bind is the planner's to report.
func (s *Source) pruning(as *arrow.Schema, schema *ice.Schema) ice.BooleanExpression {
	if s.req.Filter == nil {
		return nil
	}
	bound, err := filter.Bind(s.req.Filter, as)
	if err != nil {
		return nil
	}
	if e := pruningFilter(bound.Expr(), schema); !isTrue(e) {
		return e
	}
	return nil
}

// reportable says whether a planning error is the store's or the request's
// rather than the table's: those are reported even where planning could go
// on without the filter.
func reportable(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, storage.ErrUnavailable) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errTooLarge) ||
		errors.As(err, new(*chargeError))
}

// classify gives errors a source.Error kind where storage and scanner
// sentinels do not already say what went wrong.
func classify(tableName string, err error) error {
	var se *source.Error
	var ce *chargeError
	switch {
	case errors.As(err, &se):
		return err
	case errors.As(err, &ce):
		return fmt.Errorf("table %s: %w", tableName, ce.err)
	case errors.Is(err, errTooLarge):
		return &source.Error{Kind: source.TooLarge, Msg: fmt.Sprintf("table %s", tableName), Err: err}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, storage.ErrUnavailable), errors.Is(err, storage.ErrUnsupported),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, storage.ErrChanged):
		return err
	case errors.Is(err, fs.ErrNotExist):
		// A manifest list or manifest the metadata names is missing.
		return &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("table %s names a metadata file that does not exist", tableName), Err: err}
	}
	return &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("table %s: reading its metadata", tableName), Err: err}
}

// identityColumn is a table column some files' partition specs partition
// by identity.
type identityColumn struct {
	field arrow.Field
	// specField maps a spec id to the spec's partition field id of this
	// column.
	specField map[int]int
}

// identityColumns lists the top-level columns that every listed file's
// partition spec partitions by identity: their values live in the
// manifests, so a file that lacks the column (files added from outside,
// or a reader that skips it) still reads the value. A column
// identity-partitioned in only some specs is left out: the files of other
// specs have no value for it.
func identityColumns(meta table.Metadata, schema *ice.Schema, as *arrow.Schema, tasks []table.FileScanTask) []identityColumn {
	specs := map[int]bool{}
	for _, t := range tasks {
		specs[int(t.File.SpecID())] = true
	}
	if len(specs) == 0 {
		return nil
	}
	var out []identityColumn
	for i, f := range schema.Fields() {
		col := identityColumn{field: as.Field(i), specField: map[int]int{}}
		for id := range specs {
			spec := meta.PartitionSpecByID(id)
			if spec == nil {
				break
			}
			for _, pf := range spec.FieldsBySourceID(f.ID) {
				if _, ok := pf.Transform.(ice.IdentityTransform); ok {
					col.specField[id] = pf.FieldID
				}
			}
		}
		if len(col.specField) == len(specs) {
			out = append(out, col)
		}
	}
	return out
}

// physicalNames maps the table's column names (dotted for nested fields)
// to the names its name mapping gives them in files without field ids,
// where those differ; nil when the table has no name mapping, and empty
// (not nil) when it has one that names every column as the table does:
// fieldid.Match reads files without field ids only through a mapping.
func physicalNames(nm ice.NameMapping, schema *ice.Schema) map[string]string {
	if len(nm) == 0 {
		return nil
	}
	out := map[string]string{}
	var walk func(prefix, physPrefix string, fields []ice.NestedField, mapped []ice.MappedField)
	walk = func(prefix, physPrefix string, fields []ice.NestedField, mapped []ice.MappedField) {
		byID := map[int]ice.MappedField{}
		for _, m := range mapped {
			if m.FieldID != nil {
				byID[*m.FieldID] = m
			}
		}
		for _, f := range fields {
			m, ok := byID[f.ID]
			if !ok || len(m.Names) == 0 {
				continue
			}
			name, phys := prefix+f.Name, physPrefix+m.Names[0]
			for _, n := range m.Names {
				if n == f.Name {
					phys = physPrefix + n
				}
			}
			if phys != name {
				out[name] = phys
			}
			if st, ok := f.Type.(*ice.StructType); ok {
				walk(name+".", phys+".", st.FieldList, m.Fields)
			}
		}
	}
	walk("", "", schema.Fields(), nm)
	return out
}

// planCounts counts what planning did: the snapshot's manifests that
// planning read (of those its manifest list names; iceberg-go reads one
// only when its partition summary may match), the data files it dropped
// (the snapshot summary's total-data-files less those listed), and the
// distinct delete files attached. read is the objects planning read.
func (s *Source) planCounts(snap *table.Snapshot, manifests []ice.ManifestFile, read []string, files []source.File) (*source.TablePlan, error) {
	opened := make(map[string]bool, len(read))
	for _, r := range read {
		opened[r] = true
	}
	p := &source.TablePlan{DataFilesPruned: -1}
	for _, m := range manifests {
		name, err := objectName(s.bucket, m.FilePath())
		if err == nil && opened[name] {
			p.ManifestsRead++
		} else {
			p.ManifestsSkipped++
		}
	}
	if snap.Summary != nil {
		if total, err := strconv.ParseInt(snap.Summary.Properties["total-data-files"], 10, 64); err == nil && total >= int64(len(files)) {
			p.DataFilesPruned = total - int64(len(files))
		}
	}
	deletes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Deletes {
			deletes[d.Object.Name] = true
		}
	}
	p.DeleteFiles = int64(len(deletes))
	return p, nil
}
