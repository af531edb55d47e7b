package iceberg

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter/sql"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/iceberg/icebergtest"
	"github.com/scand/scand/storage"
)

var (
	idName       = icebergtest.IDNameArrow
	idNameSchema = icebergtest.IDNameSchema
)

func rows(ids ...int64) func(b *array.RecordBuilder) {
	return func(b *array.RecordBuilder) {
		for _, id := range ids {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(strings.Repeat("x", int(id%5)))
		}
	}
}

func errKind(err error) source.ErrorKind {
	var se *source.Error
	if errors.As(err, &se) {
		return se.Kind
	}
	return 0
}

func TestListSnapshots(t *testing.T) {
	root := t.TempDir()
	tbl, cat := newTestTable(t, root, "wh/db/t", idNameSchema, nil, nil)
	tbl = appendRows(t, tbl, idName, rows(1, 2, 3))
	first := tbl.Metadata().CurrentSnapshot().SnapshotID
	tbl = appendRows(t, tbl, idName, rows(10, 11))
	second := tbl.Metadata().CurrentSnapshot().SnapshotID
	b := testBucket(t, root)
	ctx := context.Background()

	for _, c := range []struct {
		name  string
		req   Request
		files int
		snap  int64
	}{
		{"location", Request{Table: "wh/db/t"}, 2, second},
		{"location with slash", Request{Table: "wh/db/t/"}, 2, second},
		{"metadata file", Request{Table: strings.TrimPrefix(cat.Files[1], root+"/")}, 1, first},
		{"absolute file URI", Request{Table: "file://" + cat.Files[2]}, 2, second},
		{"snapshot id", Request{Table: "wh/db/t", SnapshotID: first}, 1, first},
		{"as of now", Request{Table: "wh/db/t", AsOf: time.Now().Add(time.Hour)}, 2, second},
		{"main", Request{Table: "wh/db/t", Ref: "main"}, 2, second},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(b, c.req, Options{})
			l, err := s.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Files) != c.files {
				t.Fatalf("%d files, want %d", len(l.Files), c.files)
			}
			if got := s.Table().SnapshotID; got != c.snap {
				t.Fatalf("snapshot %d, want %d", got, c.snap)
			}
			for _, f := range l.Files {
				if f.Format != scanner.FormatParquet || f.Columns.Match != source.ByFieldID || !strings.HasPrefix(f.Object.Name, "wh/db/t/data/") || f.Object.Size <= 0 {
					t.Fatalf("file %+v", f)
				}
				if !strings.HasPrefix(f.TablePath, "file://"+root) {
					t.Fatalf("table path %q", f.TablePath)
				}
				if _, err := os.Stat(filepath.Join(root, f.Object.Name)); err != nil {
					t.Fatal(err)
				}
			}
			if got := l.Schema.Field(0).Metadata; got.FindKey("PARQUET:field_id") < 0 {
				t.Fatalf("schema %s has no field ids", l.Schema)
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	root := t.TempDir()
	tbl, cat := newTestTable(t, root, "wh/db/t", idNameSchema, nil, nil)
	tbl = appendRows(t, tbl, idName, rows(1))
	b := testBucket(t, root)
	ctx := context.Background()
	corrupt := filepath.Join(root, "wh/db/bad/metadata/00000-x.metadata.json")
	os.MkdirAll(filepath.Dir(corrupt), 0o755)
	os.WriteFile(corrupt, []byte(`{"format-version": 2, "table-uuid": 17}`), 0o644)
	future := filepath.Join(root, "wh/db/future/metadata/00000-x.metadata.json")
	os.MkdirAll(filepath.Dir(future), 0o755)
	os.WriteFile(future, []byte(`{"format-version": 4}`), 0o644)
	notJSON := filepath.Join(root, "wh/db/nj/metadata/v1.metadata.json")
	os.MkdirAll(filepath.Dir(notJSON), 0o755)
	os.WriteFile(notJSON, []byte(`{"format-ver`), 0o644)
	os.WriteFile(filepath.Join(root, "wh/db/nj/metadata/version-hint.text"), []byte("1\n"), 0o644)
	_ = cat

	for _, c := range []struct {
		name string
		req  Request
		kind source.ErrorKind
		is   error
	}{
		{"no table", Request{Table: "wh/db/none"}, source.NotFound, nil},
		{"no metadata file", Request{Table: "wh/db/t/metadata/00009-x.metadata.json"}, source.NotFound, nil},
		{"unknown snapshot", Request{Table: "wh/db/t", SnapshotID: 12345}, source.NotFound, nil},
		{"unknown ref", Request{Table: "wh/db/t", Ref: "nope"}, source.NotFound, nil},
		{"before first snapshot", Request{Table: "wh/db/t", AsOf: time.Unix(0, 0)}, source.NotFound, nil},
		{"two selectors", Request{Table: "wh/db/t", Ref: "main", SnapshotID: 3}, source.Invalid, nil},
		{"corrupt metadata", Request{Table: "wh/db/bad"}, source.Corrupt, nil},
		{"not JSON (version hint)", Request{Table: "wh/db/nj"}, source.Corrupt, nil},
		{"format version 4", Request{Table: "wh/db/future"}, source.Unimplemented, nil},
		{"outside the root", Request{Table: "file:///etc/t"}, 0, fs.ErrPermission},
		{"escaping the root", Request{Table: "../t"}, 0, fs.ErrPermission},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(b, c.req, Options{}).List(ctx)
			if err == nil {
				t.Fatal("no error")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("got %v, want %v", err, c.is)
			}
			if c.kind != 0 && errKind(err) != c.kind {
				t.Fatalf("got %v (kind %d), want kind %d", err, errKind(err), c.kind)
			}
		})
	}

	// A missing manifest list is a corrupt table. (iceberg-go caches
	// manifest lists by path, so this one is a table not read before.)
	tbl2, _ := newTestTable(t, root, "wh/db/t2", idNameSchema, nil, nil)
	tbl2 = appendRows(t, tbl2, idName, rows(1))
	os.Remove(strings.TrimPrefix(tbl2.Metadata().CurrentSnapshot().ManifestList, "file://"))
	if _, err := New(b, Request{Table: "wh/db/t2"}, Options{}).List(ctx); errKind(err) != source.Corrupt {
		t.Fatalf("missing manifest list: got %v", err)
	}
}

func TestListAuthorize(t *testing.T) {
	root := t.TempDir()
	tbl, _ := newTestTable(t, root, "wh/db/t", idNameSchema, nil, nil)
	appendRows(t, tbl, idName, rows(1))
	b := testBucket(t, root)
	var asked []string
	deny := errors.New("denied")
	_, err := New(b, Request{Table: "wh/db/t"}, Options{Authorize: func(info storage.Info) error {
		asked = append(asked, info.Name)
		if strings.HasSuffix(info.Name, ".avro") {
			return deny
		}
		return nil
	}}).List(context.Background())
	if !errors.Is(err, deny) {
		t.Fatalf("got %v, want the authorizer's error", err)
	}
	if !slices.ContainsFunc(asked, func(n string) bool { return strings.HasSuffix(n, "version-hint.text") }) {
		t.Fatalf("asked %v", asked)
	}
}

func TestListFilterPrunes(t *testing.T) {
	root := t.TempDir()
	tbl, _ := newTestTable(t, root, "wh/db/t", idNameSchema, nil, nil)
	tbl = appendRows(t, tbl, idName, rows(1, 2, 3))
	tbl = appendRows(t, tbl, idName, rows(100, 200))
	b := testBucket(t, root)
	for _, c := range []struct {
		filter string
		files  int
	}{
		{"id > 50", 1},
		{"id < 50", 1},
		{"id > 500", 0},
		{"id = 2 OR id = 200", 2},
		{"NOT (id < 50)", 1},
		{"id > 50 OR id = id", 2}, // an OR with an untranslated side: no pruning
		{"name LIKE 'x%' AND id > 50", 1},
		{"id IN (1, 2)", 1},
		{"id NOT IN (1, 2, 3)", 2},
	} {
		t.Run(c.filter, func(t *testing.T) {
			e, err := sql.Parse(c.filter)
			if err != nil {
				t.Skipf("%s does not parse: %v", c.filter, err)
			}
			l, err := New(b, Request{Table: "wh/db/t", Filter: e}, Options{}).List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Files) != c.files {
				t.Fatalf("%d files, want %d", len(l.Files), c.files)
			}
		})
	}
}

func TestListIdentityPartitions(t *testing.T) {
	root := t.TempDir()
	spec := ice.NewPartitionSpec(ice.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "name", Transform: ice.IdentityTransform{}})
	tbl, _ := newTestTable(t, root, "wh/t", idNameSchema, &spec, nil)
	tbl = appendRows(t, tbl, idName, rows(1, 2, 6, 7))
	b := testBucket(t, root)
	l, err := New(b, Request{Table: "wh/t"}, Options{}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Partitions) != 1 || l.Partitions[0].Name != "name" {
		t.Fatalf("partitions %v", l.Partitions)
	}
	var values []string
	for _, f := range l.Files {
		values = append(values, f.Partition[0].String())
	}
	slices.Sort(values)
	if want := []string{"x", "xx"}; !slices.Equal(values, want) {
		t.Fatalf("partition values %v, want %v", values, want)
	}
	// A filter on the partition column prunes by partition.
	e, _ := sql.Parse("name = 'xx'")
	l, err = New(b, Request{Table: "wh/t", Filter: e}, Options{}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 1 || l.Files[0].Partition[0].String() != "xx" {
		t.Fatalf("files %+v", l.Files)
	}
	if p := l.Table; p == nil || p.ManifestsRead != 1 || p.ManifestsSkipped != 0 || p.DataFilesPruned != 1 || p.DeleteFiles != 0 {
		t.Fatalf("plan counts %+v, want 1 manifest read, 1 data file pruned", p)
	}
}

// TestListPlanCountsSkipManifests: a manifest whose partition summary
// cannot match is skipped, unread, and its files count as pruned.
func TestListPlanCountsSkipManifests(t *testing.T) {
	root := t.TempDir()
	spec := ice.NewPartitionSpec(ice.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "name", Transform: ice.IdentityTransform{}})
	tbl, _ := newTestTable(t, root, "wh/t", idNameSchema, &spec, nil)
	tbl = appendRows(t, tbl, idName, rows(1, 2))
	tbl = appendRows(t, tbl, idName, rows(6, 7, 8))
	_ = tbl
	b := testBucket(t, root)
	l, err := New(b, Request{Table: "wh/t"}, Options{}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Table; p == nil || p.ManifestsRead != 2 || p.ManifestsSkipped != 0 || p.DataFilesPruned != 0 {
		t.Fatalf("unfiltered: plan counts %+v", p)
	}
	e, _ := sql.Parse("name = 'xxx'")
	l, err = New(b, Request{Table: "wh/t", Filter: e}, Options{}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Table; len(l.Files) != 1 || p == nil || p.ManifestsRead != 1 || p.ManifestsSkipped != 1 || p.DataFilesPruned != 4 {
		t.Fatalf("filtered: %d files, plan counts %+v", len(l.Files), p)
	}
}

// TestListFilterOverPromotedColumn: a file written before int was
// promoted to long has 4-byte bounds, which iceberg-go's evaluator does
// not read as a long's; the listing plans without the filter rather than
// fail (pruning only saves reading).
func TestListFilterOverPromotedColumn(t *testing.T) {
	root := t.TempDir()
	schema := ice.NewSchema(0, ice.NestedField{ID: 1, Name: "n", Type: ice.PrimitiveTypes.Int32})
	tbl, _ := newTestTable(t, root, "wh/t", schema, nil, nil)
	small := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	tbl = appendRows(t, tbl, small, func(b *array.RecordBuilder) { b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2, 3}, nil) })
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).UpdateColumn([]string{"n"}, table.ColumnUpdate{FieldType: ice.Optional[ice.Type]{Valid: true, Val: ice.PrimitiveTypes.Int64}}).Commit(); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wide := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	appendRows(t, tbl, wide, func(b *array.RecordBuilder) { b.Field(0).(*array.Int64Builder).AppendValues([]int64{100, 200}, nil) })
	e, err := sql.Parse("n > 50")
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(testBucket(t, root), Request{Table: "wh/t", Filter: e}, Options{}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) == 0 || l.Schema.Field(0).Type.ID() != arrow.INT64 {
		t.Fatalf("files %d, schema %s", len(l.Files), l.Schema)
	}
}
