package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/storagetest"
)

// expectedFile is what deltalake (delta-rs) reads of one file, recorded by
// testdata/gen.py.
type expectedFile struct {
	Path       string             `json:"path"`
	Size       int64              `json:"size"`
	NumRecords int64              `json:"num_records"`
	Partition  map[string]*string `json:"partition"`
}

type expectedVersion struct {
	Files []expectedFile `json:"files"`
	Rows  int64          `json:"rows"`
}

func loadExpected(t *testing.T) map[string]map[string]expectedVersion {
	data, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]expectedVersion
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// render spells a partition value as gen.py does (Python's str and
// isoformat).
func render(s scalar.Scalar) *string {
	if s == nil || !s.IsValid() {
		return nil
	}
	var out string
	switch v := s.(type) {
	case *scalar.Date32:
		out = v.Value.ToTime().Format("2006-01-02")
	case *scalar.Timestamp:
		t := time.UnixMicro(int64(v.Value)).UTC()
		layout := "2006-01-02T15:04:05"
		if t.Nanosecond() != 0 {
			layout += ".000000"
		}
		out = t.Format(layout)
		if v.Type.(*arrow.TimestampType).TimeZone != "" {
			out += "+00:00"
		}
	default:
		out = s.String()
	}
	return &out
}

func rowsOf(f source.File) int64 {
	l, ok := f.Stats.(*lazyStats)
	if !ok {
		return -1
	}
	m := l.decoded()
	for _, cs := range m {
		return cs.Rows
	}
	return -1
}

func list(t *testing.T, b storage.Bucket, location string, opts Options) (*source.Listing, int64) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	opts.Mem = mem
	tbl, err := New(b, location, opts)
	if err != nil {
		t.Fatal(err)
	}
	l, v, err := tbl.ListVersion(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", location, err)
	}
	return l, v
}

func testdataBucket(t *testing.T) storage.Bucket {
	b, err := local.New("testdata/tables")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTablesMatchDeltalake replays every version of the tables gen.py
// wrote with deltalake and compares the files, partition values and row
// counts with what deltalake itself reads.
func TestTablesMatchDeltalake(t *testing.T) {
	b := testdataBucket(t)
	exp := loadExpected(t)
	// The hand-made checkpoints hold the state of appends' own.
	exp["multipart"], exp["v2"] = exp["appends"], exp["appends"]
	cache := NewCache(64 << 20)
	for _, name := range mapsKeys(exp) {
		for vs, want := range exp[name] {
			v, _ := strconv.ParseInt(vs, 10, 64)
			for _, c := range []*Cache{nil, cache} {
				l, got := list(t, b, name, Options{Version: &v, Cache: c})
				if got != v {
					t.Errorf("%s: read version %d, asked %d", name, got, v)
				}
				compareListing(t, fmt.Sprintf("%s@%d", name, v), name, l, want)
			}
		}
		// The latest version, without one asked.
		latest := int64(-1)
		for vs := range exp[name] {
			v, _ := strconv.ParseInt(vs, 10, 64)
			latest = max(latest, v)
		}
		_, got := list(t, b, name, Options{Cache: cache})
		if got != latest {
			t.Errorf("%s: latest read as %d, want %d", name, got, latest)
		}
	}
}

func mapsKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func compareListing(t *testing.T, what, location string, l *source.Listing, want expectedVersion) {
	t.Helper()
	if len(l.Files) != len(want.Files) {
		t.Errorf("%s: %d files, want %d", what, len(l.Files), len(want.Files))
		return
	}
	var rows int64
	for i, f := range l.Files {
		w := want.Files[i]
		dec, _ := url.PathUnescape(w.Path)
		if f.Object.Name != location+"/"+dec || f.Object.Size != w.Size {
			t.Errorf("%s: file %d is %s (%d bytes), want %s (%d)", what, i, f.Object.Name, f.Object.Size, location+"/"+dec, w.Size)
		}
		if n := rowsOf(f); n != w.NumRecords {
			t.Errorf("%s: %s has %d rows by its stats, want %d", what, w.Path, n, w.NumRecords)
		}
		rows += w.NumRecords
		if len(f.Partition) != len(l.Partitions) || len(l.Partitions) != len(w.Partition) {
			t.Errorf("%s: %d partition values of %d columns, want %d", what, len(f.Partition), len(l.Partitions), len(w.Partition))
			continue
		}
		for j, p := range l.Partitions {
			got, exp := render(f.Partition[j]), w.Partition[p.Name]
			if (got == nil) != (exp == nil) || got != nil && *got != *exp {
				t.Errorf("%s: %s: partition %s = %v, want %v", what, w.Path, p.Name, deref(got), deref(exp))
			}
			if f.Partition[j] != nil && !arrow.TypeEqual(f.Partition[j].DataType(), p.Type) {
				t.Errorf("%s: partition %s typed %s, column %s", what, p.Name, f.Partition[j].DataType(), p.Type)
			}
		}
	}
	if rows != want.Rows {
		t.Errorf("%s: %d rows by the stats, deltalake read %d", what, rows, want.Rows)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return strconv.Quote(*s)
}

func TestColumnMappingListing(t *testing.T) {
	l, _ := list(t, testdataBucket(t), "colmap", Options{})
	names := []string{}
	for _, f := range l.Schema.Fields() {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"Key", "part", "rec"}) {
		t.Errorf("schema names %v", names)
	}
	if len(l.Partitions) != 1 || l.Partitions[0].Name != "part" {
		t.Errorf("partitions %v", l.Partitions)
	}
	f := l.Files[0]
	if f.Columns.Match != source.ByName || !strings.HasPrefix(f.Columns.Physical["Key"], "col-") || !strings.HasPrefix(f.Columns.Physical["rec.a"], f.Columns.Physical["rec"]+".col-") {
		t.Errorf("columns %+v", f.Columns)
	}
	// Statistics are keyed by physical names in the log, by logical names
	// here.
	if cs, ok := f.Stats.ColumnStats("Key"); !ok || cs.Min == nil || cs.Max == nil {
		t.Errorf("stats of Key: %+v %v", cs, ok)
	}
}

func TestTypesListing(t *testing.T) {
	l, _ := list(t, testdataBucket(t), "types", Options{})
	got := map[string]string{}
	for _, f := range l.Schema.Fields() {
		got[f.Name] = f.Type.String()
	}
	for k, v := range map[string]string{"i8": "int8", "dec": "decimal(9, 2)", "ts": "timestamp[us, tz=UTC]", "ntz": "timestamp[us]", "d": "date32", "bin": "binary"} {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	// Statistics of every type deltalake writes them for decode.
	var f source.File
	for _, x := range l.Files {
		if rowsOf(x) == 2 {
			f = x
		}
	}
	for _, col := range []string{"i8", "i16", "f32", "dec", "ts", "ntz"} {
		if cs, ok := f.Stats.ColumnStats(col); !ok || cs.Min == nil || cs.Max == nil {
			t.Errorf("stats of %s: %+v %v", col, cs, ok)
		}
	}
	cs, _ := f.Stats.ColumnStats("ts")
	if cs.Min.String() != "2026-01-02 03:04:05.123Z" && cs.Min.String() != "2026-01-02 03:04:05.123456Z" {
		t.Errorf("ts min %s", cs.Min)
	}
}

// memTable writes a log into a fresh in-memory bucket under "t".
func memTable(commits ...[]string) *storagetest.Mem {
	objs := map[string][]byte{}
	for v, lines := range commits {
		objs[fmt.Sprintf("t/_delta_log/%020d.json", v)] = []byte(strings.Join(lines, "\n") + "\n")
	}
	return storagetest.NewMem(objs)
}

const (
	protoV1 = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`
	metaV1  = `{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"p\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["p"],"configuration":{},"createdTime":1}}`
)

func errKind(err error) source.ErrorKind {
	var se *source.Error
	if errors.As(err, &se) {
		return se.Kind
	}
	return 0
}

func TestListErrors(t *testing.T) {
	ctx := context.Background()
	listErr := func(b storage.Bucket, loc string, opts Options) error {
		tbl, err := New(b, loc, opts)
		if err != nil {
			return err
		}
		_, err = tbl.List(ctx)
		return err
	}
	// No log at all.
	if err := listErr(memTable(), "t", Options{}); errKind(err) != source.NotFound || !strings.Contains(err.Error(), "_delta_log") {
		t.Errorf("missing log: %v", err)
	}
	// A corrupt commit names its file.
	b := memTable([]string{protoV1, metaV1}, []string{`{"add":{"path":"a.parquet","size":`})
	err := listErr(b, "t", Options{})
	if errKind(err) != source.Corrupt || !strings.Contains(err.Error(), "t/_delta_log/00000000000000000001.json") {
		t.Errorf("corrupt commit: %v", err)
	}
	// ... but the version before it reads.
	v := int64(0)
	if err := listErr(b, "t", Options{Version: &v}); err != nil {
		t.Errorf("version 0: %v", err)
	}
	v = 5
	if err := listErr(b, "t", Options{Version: &v}); errKind(err) != source.NotFound || !strings.Contains(err.Error(), "latest is 1") {
		t.Errorf("version 5: %v", err)
	}
	// An unknown reader feature is named.
	b = memTable([]string{`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","typeWidening"],"writerFeatures":[]}}`, metaV1})
	if err := listErr(b, "t", Options{}); errKind(err) != source.Unimplemented || !strings.Contains(err.Error(), "typeWidening") {
		t.Errorf("unknown feature: %v", err)
	}
	// No metaData.
	if err := listErr(memTable([]string{protoV1}), "t", Options{}); errKind(err) != source.Corrupt {
		t.Errorf("no metaData: %v", err)
	}
	// A partition value that is not of its column's type.
	b = memTable([]string{protoV1, metaV1, `{"add":{"path":"a.parquet","size":1,"partitionValues":{"p":"x"}}}`})
	if err := listErr(b, "t", Options{}); errKind(err) != source.Corrupt || !strings.Contains(err.Error(), `partition column "p"`) {
		t.Errorf("bad partition value: %v", err)
	}
	// Another data format.
	b = memTable([]string{protoV1, strings.Replace(metaV1, `"provider":"parquet"`, `"provider":"orc"`, 1)})
	if err := listErr(b, "t", Options{}); errKind(err) != source.Unimplemented {
		t.Errorf("orc: %v", err)
	}
	// A corrupt checkpoint.
	b = memTable([]string{protoV1, metaV1})
	b.Put("t/_delta_log/00000000000000000001.checkpoint.parquet", []byte("PAR1 not really PAR1"))
	if err := listErr(b, "t", Options{}); errKind(err) != source.Corrupt || !strings.Contains(err.Error(), "checkpoint.parquet") {
		t.Errorf("corrupt checkpoint: %v", err)
	}
	if _, err := New(b, "t", Options{Version: &v, AsOf: time.Now()}); errKind(err) != source.Invalid {
		t.Errorf("version and as_of: %v", err)
	}
}

func TestIsTable(t *testing.T) {
	ctx := context.Background()
	b := memTable([]string{protoV1, metaV1})
	b.Put("plain/x.parquet", []byte("x"))
	for loc, want := range map[string]bool{"t": true, "t/": true, "plain": false, "nothing": false} {
		got, err := IsTable(ctx, b, loc)
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", loc, got, err, want)
		}
	}
}

// countingLists counts a bucket's listings.
type countingLists struct {
	storage.Bucket
	lists int
}

func (c *countingLists) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	c.lists++
	return c.Bucket.ListPruned(ctx, prefix, p, fn)
}

// TestIsTableByLastCheckpoint: a log with _last_checkpoint is told by it,
// without listing the log; one without is listed; a directory holding
// only other files is no table.
func TestIsTableByLastCheckpoint(t *testing.T) {
	ctx := context.Background()
	mem := memTable([]string{protoV1, metaV1})
	mem.Put("c/_delta_log/_last_checkpoint", []byte(`{"version":10,"size":3}`))
	mem.Put("other/_delta_log/readme.txt", []byte("x"))
	for _, tc := range []struct {
		loc   string
		want  bool
		lists int
	}{{"c", true, 0}, {"t", true, 1}, {"other", false, 1}} {
		b := &countingLists{Bucket: mem}
		got, err := IsTable(ctx, b, tc.loc)
		if err != nil || got != tc.want || b.lists != tc.lists {
			t.Errorf("%s: %v %v after %d listings, want %v after %d", tc.loc, got, err, b.lists, tc.want, tc.lists)
		}
	}
}

func TestDeletionVectorsListed(t *testing.T) {
	proto := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}`
	b := memTable(
		[]string{proto, metaV1,
			`{"add":{"path":"a.parquet","size":10,"partitionValues":{"p":"1"},"stats":"{\"numRecords\":30,\"nullCount\":{\"a\":0}}"}}`,
			`{"add":{"path":"b.parquet","size":10,"partitionValues":{"p":null}}}`},
		[]string{
			`{"remove":{"path":"a.parquet"}}`,
			`{"add":{"path":"a.parquet","size":10,"partitionValues":{"p":"1"},"stats":"{\"numRecords\":30,\"nullCount\":{\"a\":0}}","deletionVector":{"storageType":"i","pathOrInlineDv":"` + specInlineDV + `","sizeInBytes":40,"cardinality":6}}}`,
			`{"remove":{"path":"b.parquet"}}`,
			`{"add":{"path":"b.parquet","size":10,"partitionValues":{"p":""},"deletionVector":{"storageType":"u","pathOrInlineDv":"` + specRelativeDV + `","offset":1,"sizeInBytes":40,"cardinality":6}}}`,
		})
	l, _ := list(t, b, "t", Options{})
	if len(l.Files) != 2 {
		t.Fatalf("%d files", len(l.Files))
	}
	a, bb := l.Files[0], l.Files[1]
	if len(a.Deletes) != 1 || a.Deletes[0].Inline == nil || a.Deletes[0].Cardinality != 6 {
		t.Errorf("a: %+v", a.Deletes)
	}
	if cs, _ := a.Stats.ColumnStats("a"); cs.Rows != -1 || cs.Nulls != 0 {
		t.Errorf("a's stats under a deletion vector: %+v", cs)
	}
	if d := bb.Deletes; len(d) != 1 || d[0].Object.Name != "t/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin" || d[0].Offset != 1 || d[0].Length != 48 {
		t.Errorf("b: %+v", d)
	}
	if a.Partition[0].String() != "1" || bb.Partition[0] != nil {
		t.Errorf("partitions %v %v", a.Partition, bb.Partition)
	}
	// The vector file is missing: its size and version are left for the
	// stream to ask (and fail on). Once there, the listing carries them.
	if d := bb.Deletes[0]; d.Object.Size != 0 || d.Object.Version != "" {
		t.Errorf("a missing vector file has size %d, version %q", d.Object.Size, d.Object.Version)
	}
	b.Put(bb.Deletes[0].Object.Name, make([]byte, 60))
	want, err := b.Stat(context.Background(), bb.Deletes[0].Object.Name)
	if err != nil {
		t.Fatal(err)
	}
	l, _ = list(t, b, "t", Options{})
	if d := l.Files[1].Deletes[0]; d.Object.Size != 60 || d.Object.Version != want.Version || d.Offset != 1 || d.Length != 48 {
		t.Errorf("vector file: %+v, want size 60, version %q", d, want.Version)
	}
	if d := l.Files[0].Deletes[0]; d.Object.Size != 0 || d.Inline == nil {
		t.Errorf("an inline vector: %+v", d)
	}
	// Version 0 has the files without their vectors.
	v := int64(0)
	l, _ = list(t, b, "t", Options{Version: &v})
	if len(l.Files) != 2 || len(l.Files[0].Deletes)+len(l.Files[1].Deletes) != 0 {
		t.Errorf("version 0: %+v", l.Files)
	}
}

// TestCache checks that a cached version is answered without reading the
// log again, and that a newer version replays only the commits after it.
func TestCache(t *testing.T) {
	ctx := context.Background()
	b := memTable([]string{protoV1, metaV1, `{"add":{"path":"a.parquet","size":1,"partitionValues":{"p":"1"}}}`})
	var reads []string
	hooked := storagetest.WithReadHook(b, func(_ context.Context, name string, _ int64, _ int) error {
		reads = append(reads, filepath.Base(name))
		return nil
	})
	cache := NewCache(1 << 20)
	listNames := func() []string {
		tbl, err := New(hooked, "t", Options{Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		l, err := tbl.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range l.Files {
			out = append(out, f.Object.Name)
		}
		if len(l.Files) > 0 {
			l.Files[0].Object.Name = "changed by the caller"
		}
		return out
	}
	if got := listNames(); !slices.Equal(got, []string{"t/a.parquet"}) {
		t.Errorf("first: %v", got)
	}
	reads = nil
	if got := listNames(); !slices.Equal(got, []string{"t/a.parquet"}) || slices.Contains(reads, "00000000000000000000.json") {
		t.Errorf("cached: %v, read %v", got, reads)
	}
	b.Put("t/_delta_log/00000000000000000001.json", []byte(`{"add":{"path":"b.parquet","size":1,"partitionValues":{"p":"2"}}}`))
	reads = nil
	if got := listNames(); !slices.Equal(got, []string{"t/a.parquet", "t/b.parquet"}) || slices.Contains(reads, "00000000000000000000.json") || !slices.Contains(reads, "00000000000000000001.json") {
		t.Errorf("incremental: %v, read %v", got, reads)
	}
	// A table written anew at the same place is not answered from the
	// cache.
	b.Put("t/_delta_log/00000000000000000001.json", []byte(`{"remove":{"path":"a.parquet"}}`))
	if got := listNames(); !slices.Equal(got, nil) {
		t.Errorf("rewritten: %v", got)
	}
}

func TestAsOf(t *testing.T) {
	// By modification time (a local table, its commits' times set).
	dir := t.TempDir()
	logDir := filepath.Join(dir, "t", "_delta_log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commits := [][]string{
		{protoV1, metaV1, `{"add":{"path":"a.parquet","size":1,"partitionValues":{"p":"1"}}}`},
		{`{"add":{"path":"b.parquet","size":1,"partitionValues":{"p":"1"}}}`},
		{`{"add":{"path":"c.parquet","size":1,"partitionValues":{"p":"1"}}}`},
	}
	for v, lines := range commits {
		name := filepath.Join(logDir, fmt.Sprintf("%020d.json", v))
		if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(v) * time.Minute)
		if err := os.Chtimes(name, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at    time.Duration
		files int
	}{{0, 1}, {30 * time.Second, 1}, {time.Minute, 2}, {90 * time.Second, 2}, {time.Hour, 3}} {
		l, v := list(t, b, "t", Options{AsOf: base.Add(c.at)})
		if len(l.Files) != c.files || v != int64(c.files-1) {
			t.Errorf("as of +%v: version %d with %d files, want %d", c.at, v, len(l.Files), c.files)
		}
	}
	tbl, _ := New(b, "t", Options{AsOf: base.Add(-time.Second)})
	if _, err := tbl.List(context.Background()); errKind(err) != source.NotFound {
		t.Errorf("before the first commit: %v", err)
	}

	// By in-commit timestamps, enabled at version 1: version 0 is timed by
	// its file, the others by their commitInfo.
	ict := func(ms int64) string { return fmt.Sprintf(`{"commitInfo":{"timestamp":1,"inCommitTimestamp":%d}}`, ms) }
	meta := strings.Replace(metaV1, `"configuration":{}`, `"configuration":{"delta.enableInCommitTimestamps":"true","delta.inCommitTimestampEnablementVersion":"1","delta.inCommitTimestampEnablementTimestamp":"5000"}`, 1)
	mb := memTable(
		[]string{protoV1, metaV1, `{"add":{"path":"a.parquet","size":1,"partitionValues":{"p":"1"}}}`},
		[]string{ict(5000), meta, `{"add":{"path":"b.parquet","size":1,"partitionValues":{"p":"1"}}}`},
		[]string{ict(7000), `{"add":{"path":"c.parquet","size":1,"partitionValues":{"p":"1"}}}`},
		[]string{ict(9000), `{"add":{"path":"d.parquet","size":1,"partitionValues":{"p":"1"}}}`},
	)
	for _, c := range []struct {
		ms   int64
		want int64
	}{{5000, 1}, {6999, 1}, {7000, 2}, {8000, 2}, {9000, 3}, {1 << 40, 3}} {
		_, v := list(t, mb, "t", Options{AsOf: time.UnixMilli(c.ms)})
		if v != c.want {
			t.Errorf("in-commit as of %d ms: version %d, want %d", c.ms, v, c.want)
		}
	}
}

func TestColumnMappingIDMode(t *testing.T) {
	schema := strings.ReplaceAll(strings.ReplaceAll(mappedSchema, "\n", ""), `"`, `\"`)
	meta := `{"metaData":{"id":"x","format":{"provider":"parquet"},"schemaString":"` + schema + `","partitionColumns":["part"],"configuration":{"delta.columnMapping.mode":"id"}}}`
	proto := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["columnMapping"],"writerFeatures":["columnMapping"]}}`
	b := memTable([]string{proto, meta,
		`{"add":{"path":"f.parquet","size":1,"partitionValues":{"col-p":"u"},"stats":"{\"numRecords\":2,\"minValues\":{\"col-k\":5,\"col-r\":{\"col-a\":1}},\"nullCount\":{\"col-k\":0}}"}}`})
	l, _ := list(t, b, "t", Options{})
	f := l.Files[0]
	if f.Columns.Match != source.ByFieldID || f.Columns.Physical != nil {
		t.Errorf("columns %+v", f.Columns)
	}
	if got := render(f.Partition[0]); got == nil || *got != "u" {
		t.Errorf("partition by physical key: %v", deref(got))
	}
	md := l.Schema.Field(0).Metadata
	if i := md.FindKey(fieldIDKey); i < 0 || md.Values()[i] != "1" {
		t.Errorf("field id of Key: %v", md)
	}
	if cs, ok := f.Stats.ColumnStats("Key"); !ok || cs.Min.String() != "5" || cs.Nulls != 0 || cs.Rows != 2 {
		t.Errorf("stats of Key: %+v %v", cs, ok)
	}
	if cs, ok := f.Stats.ColumnStats("rec.a"); !ok || cs.Min.String() != "1" {
		t.Errorf("stats of rec.a: %+v %v", cs, ok)
	}
}

// TestCheckpointReads counts the reads of a Parquet checkpoint on an
// object store (span reads, no local disk): the footer comes with the
// tail read and the projected column chunks in one coalesced request,
// not one request after another (magic, footer length, footer, then each
// chunk: 28 round trips for bench/delta's 520-commit table).
func TestCheckpointReads(t *testing.T) {
	const dir = "testdata/tables/appends"
	objs := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		objs["t/"+filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b := storagetest.NewMem(objs)
	b.SetCapabilities(storage.Capabilities{SpanReads: true})
	var mu sync.Mutex
	reads := 0
	hooked := storagetest.WithReadHook(b, func(_ context.Context, name string, _ int64, _ int) error {
		if strings.HasSuffix(name, ".checkpoint.parquet") {
			mu.Lock()
			reads++
			mu.Unlock()
		}
		return nil
	})
	want, _ := list(t, b, "t", Options{})
	got, _ := list(t, hooked, "t", Options{})
	if len(got.Files) != len(want.Files) || len(got.Files) == 0 {
		t.Fatalf("listed %d files through the hook, %d without", len(got.Files), len(want.Files))
	}
	if reads == 0 || reads > 2 {
		t.Errorf("the checkpoint took %d reads, want the tail and one more at most", reads)
	}
}

// TestLocateHandsOverLastCheckpoint: what Locate's Stat found of
// _last_checkpoint is what the table opens it by (a size and version, so
// that an object store needs no HEAD), and the listing is the same.
func TestLocateHandsOverLastCheckpoint(t *testing.T) {
	ctx := context.Background()
	mem := memTable([]string{protoV1, metaV1})
	mem.Put("t/_delta_log/_last_checkpoint", []byte(`{"version":0}`))
	want, _ := list(t, mem, "t", Options{})

	b := storagetest.Record(mem)
	found, info, err := Locate(ctx, b, "t")
	if err != nil || !found || info.Version == "" || info.Size == 0 {
		t.Fatalf("Locate: %v %+v %v", found, info, err)
	}
	got, _ := list(t, b, "t", Options{LastCheckpoint: info})
	if len(got.Files) != len(want.Files) {
		t.Fatalf("listed %d files, %d without the hand-over", len(got.Files), len(want.Files))
	}
	opened := false
	for _, o := range b.Opens() {
		if strings.HasSuffix(o.Name, "_last_checkpoint") {
			opened = true
			if o != info {
				t.Errorf("_last_checkpoint opened by %+v, want what Locate found: %+v", o, info)
			}
		}
	}
	if !opened {
		t.Error("_last_checkpoint was not read")
	}
}
