package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"golang.org/x/sync/errgroup"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// Options choose the version a Table reads and what it reads with.
type Options struct {
	// Version, when not nil, is the version to read.
	Version *int64
	// AsOf, when not zero, reads the newest version committed at or
	// before it. At most one of Version and AsOf.
	AsOf time.Time
	// Cache, when set, holds snapshots across Tables (one per server).
	Cache *Cache
	// Mem allocates the checkpoint batches replay decodes (released
	// before List returns); nil is Go's allocator.
	Mem memory.Allocator
	// LastCheckpoint, when its Name is the table's
	// _delta_log/_last_checkpoint, is what a Stat of it just found
	// (Locate): the table opens it by that size and version instead of
	// asking the store again.
	LastCheckpoint storage.Info
}

// Table is a Delta table at one location, read as a source.Source.
type Table struct {
	bucket   storage.Bucket
	location string // canonical, without a trailing "/" ("" is the bucket's root)
	opts     Options
}

var _ source.Source = (*Table)(nil)

// New returns the Delta table at location: a directory holding
// _delta_log/, named as bucket names objects (a root-relative path, or a
// URI such as s3://bucket/path/to/table).
func New(bucket storage.Bucket, location string, opts Options) (*Table, error) {
	if opts.Version != nil && !opts.AsOf.IsZero() {
		return nil, &source.Error{Kind: source.Invalid, Msg: "a Delta scan takes a version or an as_of time, not both"}
	}
	if opts.Version != nil && *opts.Version < 0 {
		return nil, &source.Error{Kind: source.Invalid, Msg: fmt.Sprintf("version %d: versions start at 0", *opts.Version)}
	}
	loc := strings.TrimRight(location, "/")
	if loc != "" {
		c, err := bucket.Canonical(loc)
		if err != nil {
			return nil, err
		}
		loc = strings.TrimRight(c, "/")
	}
	if loc == "." {
		loc = ""
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	return &Table{bucket: bucket, location: loc, opts: opts}, nil
}

// IsTable reports whether location is a directory holding a Delta log: a
// _delta_log/ with at least one commit or checkpoint in it, or a
// _delta_log/_last_checkpoint.
//
// The server asks it of every table request, so the common case is one
// Stat: a table with a checkpoint has _last_checkpoint, and listing a log
// of hundreds of commits (every entry read on local disk) only to find one
// of them cost a selective scan of such a table a quarter of its time
// (bench/delta). Without it the log is listed as before.
func IsTable(ctx context.Context, bucket storage.Bucket, location string) (bool, error) {
	found, _, err := Locate(ctx, bucket, location)
	return found, err
}

// Locate is IsTable, and returns what its Stat found of the log's
// _last_checkpoint (a zero Info when the table has none), for
// Options.LastCheckpoint: the table then reads it without a second Stat
// (on an object store, a HEAD round trip every plan).
func Locate(ctx context.Context, bucket storage.Bucket, location string) (bool, storage.Info, error) {
	t, err := New(bucket, location, Options{})
	if err != nil {
		return false, storage.Info{}, err
	}
	if info, err := bucket.Stat(ctx, t.name("_delta_log/_last_checkpoint")); err == nil {
		return true, info, nil
	}
	found := errors.New("found")
	err = bucket.ListPruned(ctx, t.name("_delta_log/"), storage.Pruning{
		Dir:    func(string) bool { return false },
		Object: func(name string) bool { _, ok := parseLogName(path.Base(name)); return ok },
	}, func(storage.Info) error { return found })
	switch {
	case errors.Is(err, found):
		return true, storage.Info{}, nil
	case err == nil || errors.Is(err, fs.ErrNotExist):
		return false, storage.Info{}, nil
	}
	return false, storage.Info{}, err
}

// name is the storage name of rel, a slash path relative to the table.
func (t *Table) name(rel string) string {
	if t.location == "" {
		return rel
	}
	return t.location + "/" + rel
}

// List implements source.Source.
func (t *Table) List(ctx context.Context) (*source.Listing, error) {
	l, _, err := t.ListVersion(ctx)
	return l, err
}

// ListVersion is List, also saying which version it read.
func (t *Table) ListVersion(ctx context.Context) (*source.Listing, int64, error) {
	ix, version, err := t.resolveVersion(ctx)
	if err != nil {
		return nil, 0, err
	}
	head := ix.head(version)
	if l, ok := t.opts.Cache.listing(t.location, version, head); ok {
		return cloneListing(l), version, nil
	}
	snap, err := t.replay(ctx, ix, version, head)
	if err != nil {
		return nil, 0, err
	}
	l, err := t.buildListing(snap)
	if err != nil {
		return nil, 0, err
	}
	t.statVectorFiles(ctx, l)
	t.opts.Cache.putListing(t.location, version, head, l)
	return cloneListing(l), version, nil
}

// lastCheckpoint is the _last_checkpoint file's content that replay uses.
type lastCheckpoint struct {
	Version *int64 `json:"version"`
}

// resolveVersion lists the log and picks the version to read.
func (t *Table) resolveVersion(ctx context.Context) (logIndex, int64, error) {
	// _last_checkpoint spares the listing the entries older than the
	// newest checkpoint, when the version read is at or after it. It is
	// a hint: missing, unreadable or stale, the whole log is listed.
	from := int64(-1)
	if t.opts.AsOf.IsZero() {
		if cp, ok := t.readLastCheckpoint(ctx); ok && (t.opts.Version == nil || *t.opts.Version >= cp) {
			from = cp
		}
	}
	for {
		ix, err := t.listLog(ctx, from)
		if err != nil {
			return ix, 0, err
		}
		latest := ix.latest()
		if latest < 0 {
			if from >= 0 {
				from = -1
				continue
			}
			return ix, 0, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("no Delta table at %q: %s holds no commit or checkpoint", t.location, t.name("_delta_log/"))}
		}
		version := latest
		switch {
		case t.opts.Version != nil:
			version = *t.opts.Version
			if version > latest {
				return ix, 0, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("Delta table %q has no version %d: the latest is %d", t.location, version, latest)}
			}
		case !t.opts.AsOf.IsZero():
			if version, err = t.versionAsOf(ctx, ix, latest); err != nil {
				var se *source.Error
				if errors.As(err, &se) {
					se.Msg = fmt.Sprintf("Delta table %q: %s", t.location, se.Msg)
				}
				return ix, 0, err
			}
		}
		if _, err := ix.segment(version); err != nil {
			if from >= 0 {
				from = -1 // the hint was wrong: list everything
				continue
			}
			var se *source.Error
			if errors.As(err, &se) {
				se.Msg = fmt.Sprintf("Delta table %q: %s", t.location, se.Msg)
			}
			return ix, 0, err
		}
		return ix, version, nil
	}
}

func (t *Table) readLastCheckpoint(ctx context.Context) (int64, bool) {
	var lc lastCheckpoint
	info := storage.Info{Name: t.name("_delta_log/_last_checkpoint")}
	if t.opts.LastCheckpoint.Name == info.Name {
		info = t.opts.LastCheckpoint
	}
	err := t.readAll(ctx, info, 1<<20, func(data []byte) error {
		return json.Unmarshal(data, &lc)
	})
	if err != nil || lc.Version == nil || *lc.Version < 0 {
		return 0, false
	}
	return *lc.Version, true
}

// listLog lists _delta_log/, leaving out (unstatted) the entries of
// versions below from.
func (t *Table) listLog(ctx context.Context, from int64) (logIndex, error) {
	var files []logFile
	dir := t.name("_delta_log/")
	err := t.bucket.ListPruned(ctx, dir, storage.Pruning{
		Dir: func(string) bool { return false },
		Object: func(name string) bool {
			f, ok := parseLogName(path.Base(name))
			return ok && f.version >= from
		},
	}, func(info storage.Info) error {
		rest := strings.TrimPrefix(info.Name, dir)
		if strings.Contains(rest, "/") {
			return nil
		}
		if f, ok := parseLogName(rest); ok && f.version >= from {
			f.info = info
			files = append(files, f)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return logIndex{}, err
	}
	return newLogIndex(files), nil
}

// head identifies the content of version in a listing: the commit's (or
// else the checkpoint's) name, size and version. A table deleted and
// written anew at the same place has other heads.
func (ix logIndex) head(version int64) string {
	i, found := slices.BinarySearchFunc(ix.commits, version, func(f logFile, v int64) int { return cmpInt64(f.version, v) })
	var info storage.Info
	if found {
		info = ix.commits[i].info
	} else if cps := ix.checkpoints[version]; len(cps) > 0 {
		info = cps[0][0].info
	}
	return fmt.Sprintf("%s\x00%d\x00%s\x00%d", info.Name, info.Size, info.Version, info.ModTime.UnixNano())
}

// replay builds the snapshot of version: from the newest cached snapshot
// it can start from, or from the checkpoint, then the commits after it.
func (t *Table) replay(ctx context.Context, ix logIndex, version int64, head string) (*snapshot, error) {
	seg, err := ix.segment(version)
	if err != nil {
		return nil, err
	}
	var snap *snapshot
	if base := t.opts.Cache.snapshotBelow(t.location, version, seg.cpVersion, ix); base != nil {
		if base.version == version {
			return base, nil
		}
		snap = base.clone()
	} else {
		var acts []action
		if len(seg.checkpoint) > 0 {
			if acts, err = t.readCheckpoint(ctx, seg.checkpoint); err != nil {
				return nil, err
			}
		}
		snap = newSnapshot(acts)
		snap.version = seg.cpVersion
	}
	var todo []logFile
	for _, c := range seg.commits {
		if c.version > snap.version {
			todo = append(todo, c)
		}
	}
	// Commits are fetched and decoded a window at a time, concurrently
	// (on an object store each is a round trip), and applied in order.
	for len(todo) > 0 {
		window := todo[:min(len(todo), commitWindow)]
		todo = todo[len(window):]
		acts := make([][]action, len(window))
		err := each(ctx, len(window), func(ctx context.Context, i int) error {
			c := window[i]
			return t.readAll(ctx, c.info, maxCommitBytes, func(data []byte) error {
				var err error
				if acts[i], err = parseCommit(data); err != nil {
					return corrupt(c.info.Name, err)
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
		for i, c := range window {
			if err := snap.apply(c.version, acts[i]); err != nil {
				return nil, corrupt(c.info.Name, err)
			}
		}
	}
	snap.version = version
	if snap.protocol == nil || snap.metadata == nil {
		return nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("Delta table %q: the log up to version %d has no protocol or no metaData action", t.location, version)}
	}
	t.opts.Cache.putSnapshot(t.location, version, head, snap)
	return snap, nil
}

// maxCommitBytes bounds a commit replay reads whole.
const maxCommitBytes = 1 << 30

// commitWindow is how many commits replay holds decoded at once, and
// commitReaders how many of them it reads at once.
const (
	commitWindow  = 64
	commitReaders = 16
)

func corrupt(name string, err error) error {
	return &source.Error{Kind: source.Corrupt, Msg: "Delta log " + name, Err: err}
}

// readCheckpoint reads a checkpoint's actions: every part of a multi-part
// checkpoint, and the sidecar files a v2 checkpoint names, several at
// once.
func (t *Table) readCheckpoint(ctx context.Context, parts []logFile) ([]action, error) {
	got := make([][]action, len(parts))
	err := each(ctx, len(parts), func(ctx context.Context, i int) error {
		p := parts[i].info
		var err error
		if strings.HasSuffix(p.Name, ".json") {
			err = t.readAll(ctx, p, maxCommitBytes, func(data []byte) error {
				var err error
				got[i], err = parseCommit(data)
				return err
			})
		} else {
			got[i], err = readParquetActions(ctx, t.bucket, p, t.opts.Mem)
		}
		if err != nil {
			return checkpointError(p.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	acts := slices.Concat(got...)
	var sidecars []storage.Info
	for _, a := range acts {
		if sc := a.Sidecar; sc != nil {
			rel, err := sidecarName(sc.Path)
			if err != nil {
				return nil, corrupt(parts[0].info.Name, err)
			}
			sidecars = append(sidecars, storage.Info{Name: t.name("_delta_log/_sidecars/" + rel), Size: sc.SizeInBytes})
		}
	}
	side := make([][]action, len(sidecars))
	err = each(ctx, len(sidecars), func(ctx context.Context, i int) error {
		got, err := readParquetActions(ctx, t.bucket, sidecars[i], t.opts.Mem)
		if err != nil {
			return checkpointError(sidecars[i].Name, err)
		}
		for _, a := range got {
			if a.Add != nil || a.Remove != nil { // sidecars hold file actions only
				side[i] = append(side[i], a)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(append([][]action{acts}, side...)...), nil
}

// each calls fn for 0..n-1, commitReaders at a time, and returns the
// first error.
func each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(commitReaders)
	for i := 0; i < n; i++ {
		g.Go(func() error { return fn(gctx, i) })
	}
	return g.Wait()
}

// sidecarName is the name of a sidecar action's file in
// _delta_log/_sidecars/, where the protocol keeps every sidecar: a path
// naming it elsewhere is read from there too, so a log never makes scand
// read a file outside the table.
func sidecarName(p string) (string, error) {
	d, err := url.PathUnescape(p)
	if err != nil {
		return "", fmt.Errorf("sidecar path %q: %v: %w", p, err, errAction)
	}
	d = path.Base(d)
	if d == "." || d == ".." || d == "/" {
		return "", fmt.Errorf("sidecar path %q: %w", p, errAction)
	}
	return d, nil
}

// checkpointError classifies a failure to read a checkpoint: a file the
// Parquet reader finds corrupt is a corrupt log.
func checkpointError(name string, err error) error {
	if errors.Is(err, scanner.ErrCorrupt) || errors.Is(err, errAction) || errors.Is(err, scanner.ErrNotColumnar) {
		return corrupt(name, err)
	}
	return err
}

// readAll reads a whole object of at most limit bytes and hands it to
// use, which must not keep it. The bytes are charged to the metadata
// budget ctx carries (scanner.WithMetadataBudget), if any, until use
// returns, so a huge commit waits for memory or fails instead of taking
// it.
func (t *Table) readAll(ctx context.Context, info storage.Info, limit int64, use func([]byte) error) error {
	obj, err := t.bucket.Open(ctx, info)
	if err != nil {
		return err
	}
	defer obj.Close()
	size := obj.Info().Size
	if size > limit {
		return &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("Delta log file %s is %d bytes, more than the %d scand reads", info.Name, size, limit)}
	}
	if r := scanner.MetadataBudget(ctx); r != nil && size > 0 {
		if err := r.Reserve(ctx, size); err != nil {
			return fmt.Errorf("reading %s: %w", info.Name, err)
		}
		defer r.Release(size)
	}
	buf := make([]byte, size)
	if size > 0 {
		if err := obj.ReadAt(ctx, buf, 0); err != nil {
			return err
		}
	}
	return use(buf)
}

// Reader features scand reads (PROTOCOL.md, "Valid Feature Names in Table
// Features").
var supportedReaderFeatures = map[string]bool{
	"columnMapping":       true,
	"deletionVectors":     true,
	"timestampNtz":        true,
	"v2Checkpoint":        true,
	"vacuumProtocolCheck": true,
}

// checkProtocol refuses a table whose readers must do what scand does
// not.
func checkProtocol(p *protocolAction) error {
	if p.MinReaderVersion > 3 {
		return &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("the table needs a Delta reader of version %d; scand reads versions 1 to 3", p.MinReaderVersion)}
	}
	if p.MinReaderVersion == 3 {
		var unknown []string
		for _, f := range p.ReaderFeatures {
			if !supportedReaderFeatures[f] {
				unknown = append(unknown, f)
			}
		}
		if len(unknown) > 0 {
			return &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("the table uses the Delta reader feature %s, which scand does not read (it reads columnMapping, deletionVectors, timestampNtz, v2Checkpoint and vacuumProtocolCheck)", strings.Join(unknown, ", "))}
		}
	}
	return nil
}

// mappingMode is the table's column mapping mode, honoured only where its
// protocol supports column mapping.
func mappingMode(p *protocolAction, m *metadataAction) string {
	supported := p.MinReaderVersion == 2 || p.MinReaderVersion == 3 && slices.Contains(p.ReaderFeatures, "columnMapping")
	if !supported {
		return mappingNone
	}
	switch mode := m.Configuration["delta.columnMapping.mode"]; mode {
	case mappingName, mappingID:
		return mode
	}
	return mappingNone
}

// buildListing turns a snapshot into the source contract's Listing.
func (t *Table) buildListing(snap *snapshot) (*source.Listing, error) {
	where := fmt.Sprintf("Delta table %q at version %d", t.location, snap.version)
	if err := checkProtocol(snap.protocol); err != nil {
		err.(*source.Error).Msg = where + ": " + err.(*source.Error).Msg
		return nil, err
	}
	if p := snap.metadata.Format.Provider; p != "" && !strings.EqualFold(p, "parquet") {
		return nil, &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("%s: data files in format %q; scand reads Delta tables of Parquet files", where, p)}
	}
	mode := mappingMode(snap.protocol, snap.metadata)
	ts, err := parseSchema(snap.metadata.SchemaString, mode)
	if err != nil {
		kind := source.Corrupt
		if errors.Is(err, errUnsupportedType) {
			kind = source.Unimplemented
		}
		return nil, &source.Error{Kind: kind, Msg: where + ": schema", Err: err}
	}
	if mode == mappingName && len(ts.hiddenRenames) > 0 {
		return nil, &source.Error{Kind: source.Unimplemented, Msg: fmt.Sprintf("%s: column mapping renames fields inside lists or maps (%s), which scand cannot match by name yet", where, strings.Join(ts.hiddenRenames, ", "))}
	}
	// Partition columns, by logical name, and the physical name their
	// values are keyed by in the log.
	var parts []arrow.Field
	var keys []string
	for _, pc := range snap.metadata.PartitionColumns {
		i := slices.IndexFunc(ts.arrow.Fields(), func(f arrow.Field) bool { return f.Name == pc })
		if i < 0 { // column names are unique regardless of case
			i = slices.IndexFunc(ts.arrow.Fields(), func(f arrow.Field) bool { return strings.EqualFold(f.Name, pc) })
		}
		if i < 0 {
			return nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("%s: partition column %q is not in the schema", where, pc)}
		}
		f := ts.arrow.Field(i)
		switch f.Type.(type) {
		case *arrow.StructType, *arrow.ListType, *arrow.MapType:
			return nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("%s: partition column %q is of nested type %s", where, pc, f.Type)}
		}
		parts = append(parts, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true, Metadata: f.Metadata})
		key := pc // partitionValues are keyed as partitionColumns names them
		if p, ok := ts.physical[f.Name]; ok {
			key = p
		}
		keys = append(keys, key)
	}
	cols := source.Columns{Match: source.ByName}
	switch mode {
	case mappingName:
		cols.Physical = ts.physical
	case mappingID:
		cols.Match = source.ByFieldID
	}
	l := &source.Listing{Schema: ts.arrow, Partitions: parts}
	paths := snap.sortedPaths()
	l.Files = make([]source.File, 0, len(paths))
	for _, p := range paths {
		add := snap.files[p]
		name, err := t.resolve(add.Path, true)
		if err != nil {
			return nil, err
		}
		f := source.File{
			Object:  storage.Info{Name: name, Size: add.Size, ModTime: time.UnixMilli(add.ModificationTime)},
			Format:  scanner.FormatParquet,
			Columns: cols,
		}
		if len(parts) > 0 {
			f.Partition = make([]scalar.Scalar, len(parts))
			for i, k := range keys {
				v := add.PartitionValues[k]
				if v == nil {
					continue
				}
				s, err := parsePartitionValue(*v, parts[i].Type)
				if err != nil {
					return nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("%s: file %s: partition column %q", where, add.Path, parts[i].Name), Err: err}
				}
				f.Partition[i] = s
			}
		}
		if add.DeletionVector != nil {
			d, err := dvDelete(add.DeletionVector, t.resolve)
			if err != nil {
				return nil, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("%s: file %s", where, add.Path), Err: err}
			}
			f.Deletes = []source.Delete{d}
		}
		if add.Stats != "" {
			f.Stats = &lazyStats{raw: add.Stats, schema: ts, hasDV: add.DeletionVector != nil}
		}
		l.Files = append(l.Files, f)
	}
	return l, nil
}

// maxVectorStats bounds the deletion vector files statVectorFiles asks
// about: a table whose every data file has a vector file of its own
// (writers may do that) would pay a request per file at listing time.
const maxVectorStats = 256

// statVectorFiles fills the size and version of the deletion vector files
// the listing's files name, one Stat per distinct file (a Spark DELETE
// writes one vector file for every file it touches). A stream then opens
// a vector's file without asking the store first: on an object store that
// saved one round trip per data file read (a HEAD, then the ranged GET),
// each waited out before the file's own reads (bench/delta). A Stat that
// fails leaves the fields empty: the stream asks, and reports a missing
// file as it always has (DATA_LOSS). Beyond maxVectorStats distinct files
// none is asked about.
func (t *Table) statVectorFiles(ctx context.Context, l *source.Listing) {
	at := map[string][]*source.Delete{}
	var names []string
	for i := range l.Files {
		for j := range l.Files[i].Deletes {
			d := &l.Files[i].Deletes[j]
			if d.Kind != source.DeletionVector || len(d.Inline) > 0 || d.Object.Name == "" {
				continue
			}
			if _, ok := at[d.Object.Name]; !ok {
				names = append(names, d.Object.Name)
			}
			at[d.Object.Name] = append(at[d.Object.Name], d)
		}
	}
	if len(names) == 0 || len(names) > maxVectorStats {
		return
	}
	infos := make([]storage.Info, len(names))
	_ = each(ctx, len(names), func(ctx context.Context, i int) error {
		if info, err := t.bucket.Stat(ctx, names[i]); err == nil {
			infos[i] = info
		}
		return nil
	})
	for i, name := range names {
		if infos[i].Size <= 0 {
			continue
		}
		for _, d := range at[name] {
			d.Object.Size, d.Object.Version, d.Object.ModTime = infos[i].Size, infos[i].Version, infos[i].ModTime
		}
	}
}

// resolve turns a path of the log (an add's, or a deletion vector's) into
// a storage name: a relative path (percent-encoded, as a URI reference)
// names an object below the table; with absolute allowed, a URI names an
// object of its own (file: URIs a local one).
func (t *Table) resolve(p string, absolute bool) (string, error) {
	bad := func(why string) error {
		return &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("Delta table %q: path %q %s", t.location, truncate(p, 200), why)}
	}
	if hasScheme(p) {
		if !absolute {
			return "", bad("is absolute where a relative path belongs")
		}
		u, err := url.Parse(p)
		if err != nil {
			return "", bad(err.Error())
		}
		switch strings.ToLower(u.Scheme) {
		case "file":
			return t.bucket.Canonical(u.Path)
		case "s3a", "s3n":
			u.Scheme = "s3"
		}
		return u.Scheme + "://" + u.Host + u.Path, nil
	}
	d, err := url.PathUnescape(p)
	if err != nil {
		return "", bad("is not a valid URI path")
	}
	if strings.HasPrefix(d, "/") {
		return "", bad("is absolute without a scheme")
	}
	for _, seg := range strings.Split(d, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return "", bad("is not a plain path below the table")
		}
	}
	return t.name(d), nil
}

// hasScheme reports whether p starts with a URI scheme and a colon.
func hasScheme(p string) bool {
	i := strings.IndexByte(p, ':')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := p[j]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (j == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// Table properties of in-commit timestamps (PROTOCOL.md, "In-Commit
// Timestamps").
const (
	propICT                 = "delta.enableInCommitTimestamps"
	propICTEnablementVer    = "delta.inCommitTimestampEnablementVersion"
	propICTEnablementMillis = "delta.inCommitTimestampEnablementTimestamp"
)

// versionAsOf picks the version of Options.AsOf. A commit's time is its
// file's modification time, unless the table (at its latest version) has
// in-commit timestamps: then the commits from their enablement on are
// timed by the inCommitTimestamp of their commitInfo, found by a binary
// search that reads O(log n) commits, and an as_of before the enablement
// is resolved among the older commits by modification time.
func (t *Table) versionAsOf(ctx context.Context, ix logIndex, latest int64) (int64, error) {
	asOf := t.opts.AsOf
	snap, err := t.replay(ctx, ix, latest, ix.head(latest))
	if err != nil {
		return 0, err
	}
	cfg := snap.metadata.Configuration
	if !strings.EqualFold(cfg[propICT], "true") {
		return versionAsOf(ix.commits, asOf)
	}
	enabledAt := int64(0)
	if v, err := strconv.ParseInt(cfg[propICTEnablementVer], 10, 64); err == nil {
		enabledAt = v
	}
	split, _ := slices.BinarySearchFunc(ix.commits, enabledAt, func(f logFile, v int64) int { return cmpInt64(f.version, v) })
	before, after := ix.commits[:split], ix.commits[split:]
	if ms, err := strconv.ParseInt(cfg[propICTEnablementMillis], 10, 64); err == nil && asOf.Before(time.UnixMilli(ms)) && len(before) > 0 {
		return versionAsOf(before, asOf)
	}
	if len(after) == 0 {
		return 0, &source.Error{Kind: source.NotFound, Msg: "the log holds no commits with in-commit timestamps to tell versions' times by"}
	}
	// The newest commit whose in-commit timestamp is at or before asOf.
	var searchErr error
	i, _ := slices.BinarySearchFunc(after, asOf, func(f logFile, x time.Time) int {
		if searchErr != nil {
			return 0
		}
		ts, err := t.inCommitTimestamp(ctx, f)
		if err != nil {
			searchErr = err
			return 0
		}
		if ts.After(x) {
			return 1
		}
		return -1
	})
	if searchErr != nil {
		return 0, searchErr
	}
	if i == 0 {
		return 0, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf(
			"as_of %s is before the first commit in the log with an in-commit timestamp (version %d)", asOf.UTC().Format(time.RFC3339Nano), after[0].version)}
	}
	return after[i-1].version, nil
}

// inCommitTimestamp reads a commit's in-commit timestamp: the
// commitInfo, its first action.
func (t *Table) inCommitTimestamp(ctx context.Context, f logFile) (time.Time, error) {
	var acts []action
	err := t.readAll(ctx, f.info, maxCommitBytes, func(data []byte) error {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[:i]
		}
		var err error
		if acts, err = parseCommit(data); err != nil {
			return corrupt(f.info.Name, err)
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if len(acts) != 1 || acts[0].CommitInfo == nil || acts[0].CommitInfo.InCommitTimestamp == nil {
		return time.Time{}, corrupt(f.info.Name, fmt.Errorf("the table has in-commit timestamps, but the commit does not start with a commitInfo holding one: %w", errAction))
	}
	return time.UnixMilli(*acts[0].CommitInfo.InCommitTimestamp), nil
}
