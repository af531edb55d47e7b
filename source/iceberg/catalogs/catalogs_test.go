package catalogs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	icesql "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/source"
	"github.com/scand/scand/source/iceberg"
	"github.com/scand/scand/source/iceberg/icebergtest"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, kind, endpoint, driver, err string
	}{
		{in: "lake=rest+https://cat.example.com/api", kind: "rest", endpoint: "https://cat.example.com/api"},
		{in: "lake=rest+http://127.0.0.1:8181/?warehouse=wh", kind: "rest", endpoint: "http://127.0.0.1:8181"},
		{in: "lake=sql+sqlite:///srv/cat.db?catalog=default", kind: "sql", endpoint: "/srv/cat.db", driver: "sqlite"},
		{in: "pg=sql+postgres://scand@db:5432/iceberg?sslmode=require", kind: "sql", endpoint: "postgres://scand@db:5432/iceberg", driver: "postgres"},
		{in: "lake", err: "want name=URI"},
		{in: "a.b=rest+https://h", err: "name is letters"},
		{in: "lake=rest+https://u:secret@h", err: "password"},
		{in: "lake=rest+https://tok@h", err: "not the URI"},
		{in: "lake=sql+sqlite://rel/cat.db", err: "absolute"},
		{in: "lake=rest+https://h?warehous=x", err: `unknown URI parameter "warehous"`},
		{in: "lake=glue://", err: "Glue"},
		{in: "lake=https://h", err: "no catalog URI"},
	} {
		spec, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) = %v, want an error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || spec.Kind != c.kind || spec.Endpoint != c.endpoint || spec.Driver != c.driver {
			t.Errorf("Parse(%q) = %+v, %v", c.in, spec, err)
		}
	}
	if got := EnvName("my-lake", "TOKEN"); got != "SCAND_CATALOG_MY_LAKE_TOKEN" {
		t.Errorf("EnvName = %s", got)
	}
}

var idSchema = ice.NewSchema(0, ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64})
var idArrow = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

func ids(v ...int64) func(b *array.RecordBuilder) {
	return func(b *array.RecordBuilder) { b.Field(0).(*array.Int64Builder).AppendValues(v, nil) }
}

// sqliteCatalog writes a SQL catalog on sqlite with iceberg-go's own SQL
// catalog, as another writer leaves it: namespace db, table db.t under
// root/wh with two appends, and db.away whose location is outside root.
func sqliteCatalog(t *testing.T, root string) (dbPath string, tbl *table.Table) {
	t.Helper()
	ctx := context.Background()
	dbPath = filepath.Join(t.TempDir(), "catalog.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := icesql.NewCatalog("lake", db, icesql.SQLite, ice.Properties{"warehouse": "file://" + root + "/wh"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close(); db.Close() })
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err = cat.CreateTable(ctx, table.Identifier{"db", "t"}, idSchema, icecatalog.WithLocation("file://"+root+"/wh/db/t"))
	if err != nil {
		t.Fatal(err)
	}
	tbl = icebergtest.Append(t, tbl, idArrow, ids(1, 2, 3))
	tbl = icebergtest.Append(t, tbl, idArrow, ids(4, 5))
	away, err := cat.CreateTable(ctx, table.Identifier{"db", "away"}, idSchema, icecatalog.WithLocation("file://"+t.TempDir()+"/away"))
	if err != nil {
		t.Fatal(err)
	}
	icebergtest.Append(t, away, idArrow, ids(9))
	return dbPath, tbl
}

func kind(err error) source.ErrorKind {
	var se *source.Error
	if errors.As(err, &se) {
		return se.Kind
	}
	return 0
}

func TestSQLiteCatalog(t *testing.T) {
	root := t.TempDir()
	dbPath, written := sqliteCatalog(t, root)
	spec, err := Parse("lake=sql+sqlite://" + dbPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(spec, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer Close(iceberg.Catalogs{"lake": c})
	ctx := context.Background()

	loc, err := c.MetadataLocation(ctx, []string{"db", "t"})
	if err != nil || loc != written.MetadataLocation() {
		t.Fatalf("MetadataLocation = %q, %v; want %q", loc, err, written.MetadataLocation())
	}
	for _, ident := range [][]string{{"db", "nope"}, {"nope", "t"}} {
		if _, err := c.MetadataLocation(ctx, ident); kind(err) != source.NotFound {
			t.Errorf("MetadataLocation(%v) = %v, want NotFound", ident, err)
		}
	}
	var listed []string
	if err := c.Tables(ctx, func(ident []string, _ string) error {
		listed = append(listed, strings.Join(ident, "."))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(listed, ",") != "db.away,db.t" {
		t.Errorf("Tables = %v", listed)
	}

	// The source reads the table the catalog names, through storage.
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	cats := iceberg.Catalogs{"lake": c}
	name, cat, ok := cats.Lookup("lake.db.t")
	if !ok || name != "lake" {
		t.Fatalf("Lookup = %q, %v", name, ok)
	}
	l, err := iceberg.New(b, iceberg.Request{Table: "lake.db.t", Catalog: cat}, iceberg.Options{}).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 2 {
		t.Errorf("listed %d files, want 2", len(l.Files))
	}
	first := written.Metadata().Snapshots()[0].SnapshotID
	l, err = iceberg.New(b, iceberg.Request{Table: "lake.db.t", Catalog: cat, SnapshotID: first}, iceberg.Options{}).List(ctx)
	if err != nil || len(l.Files) != 1 {
		t.Errorf("snapshot %d: %v files, %v", first, l, err)
	}
	if _, err := iceberg.New(b, iceberg.Request{Table: "lake.db.nope", Catalog: cat}, iceberg.Options{}).List(ctx); kind(err) != source.NotFound {
		t.Errorf("unknown table: %v, want NotFound", err)
	}
	if _, err := iceberg.New(b, iceberg.Request{Table: "lake.t", Catalog: cat}, iceberg.Options{}).List(ctx); kind(err) != source.Invalid {
		t.Errorf("no namespace: %v, want Invalid", err)
	}
	// Metadata outside the root: permission denied, naming the file.
	_, err = iceberg.New(b, iceberg.Request{Table: "lake.db.away", Catalog: cat}, iceberg.Options{}).List(ctx)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "away/metadata/") {
		t.Errorf("table outside the root: %v, want a permission error naming its metadata file", err)
	}
	// The caller's scope decides, for the table's location and every
	// object read.
	var asked []string
	deny := func(info storage.Info) error {
		asked = append(asked, info.Name)
		if info.Name == "wh/db/t" {
			return fs.ErrPermission
		}
		return nil
	}
	if _, err := iceberg.New(b, iceberg.Request{Table: "lake.db.t", Catalog: cat}, iceberg.Options{Authorize: deny}).List(ctx); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("location outside the scope: %v (asked %v)", err, asked)
	}
	if loc, err := iceberg.CatalogLocation(b, written.MetadataLocation()); err != nil || loc != "wh/db/t" {
		t.Errorf("CatalogLocation = %q, %v", loc, err)
	}
}

func TestSQLiteCatalogMissing(t *testing.T) {
	spec, err := Parse("lake=sql+sqlite://" + filepath.Join(t.TempDir(), "none.db"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(spec, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer Close(iceberg.Catalogs{"lake": c})
	if _, err := c.MetadataLocation(context.Background(), []string{"db", "t"}); kind(err) != source.Unavailable {
		t.Errorf("a catalog database that does not exist: %v, want Unavailable", err)
	}
}

// TestREST drives iceberg-go's REST client against a server answering the
// REST spec's config, namespace, table list and load table calls (the e2e
// test runs the Iceberg project's REST catalog itself).
func TestREST(t *testing.T) {
	const metadata = "s3://bucket/wh/db/t/metadata/00001-a.metadata.json"
	meta, err := table.NewMetadata(idSchema, ice.UnpartitionedSpec, table.UnsortedSortOrder, "s3://bucket/wh/db/t", nil)
	if err != nil {
		t.Fatal(err)
	}
	var token string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/config", func(w http.ResponseWriter, r *http.Request) {
		token = r.Header.Get("Authorization")
		w.Write([]byte(`{"defaults":{},"overrides":{}}`))
	})
	mux.HandleFunc("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("parent") != "" {
			w.Write([]byte(`{"namespaces":[]}`))
			return
		}
		w.Write([]byte(`{"namespaces":[["db"]]}`))
	})
	mux.HandleFunc("GET /v1/namespaces/db/tables", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"identifiers":[{"namespace":["db"],"name":"t"}]}`))
	})
	mux.HandleFunc("GET /v1/namespaces/{ns}/tables/{tbl}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("ns") != "db" || r.PathValue("tbl") != "t" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"message":"Table does not exist","type":"NoSuchTableException","code":404}}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"metadata-location": metadata, "metadata": meta})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	spec, err := Parse("rest=rest+" + srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SCAND_CATALOG_REST_TOKEN": "tok"}
	c, err := Open(spec, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer Close(iceberg.Catalogs{"rest": c})
	ctx := context.Background()
	if loc, err := c.MetadataLocation(ctx, []string{"db", "t"}); err != nil || loc != metadata {
		t.Fatalf("MetadataLocation = %q, %v", loc, err)
	}
	if token != "Bearer tok" {
		t.Errorf("the catalog saw Authorization %q, want the token from the environment", token)
	}
	if _, err := c.MetadataLocation(ctx, []string{"db", "nope"}); kind(err) != source.NotFound {
		t.Errorf("unknown table: %v, want NotFound", err)
	}
	var listed []string
	if err := c.Tables(ctx, func(ident []string, loc string) error {
		listed = append(listed, strings.Join(ident, ".")+"="+loc)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0] != "db.t="+metadata {
		t.Errorf("Tables = %v", listed)
	}

	// A catalog nobody answers at.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	spec, _ = Parse("down=rest+http://" + addr)
	down, _ := Open(spec, func(string) string { return "" })
	if _, err := down.MetadataLocation(ctx, []string{"db", "t"}); kind(err) != source.Unavailable {
		t.Errorf("unreachable catalog: %v, want Unavailable", err)
	}
}
