package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/scand/scand/storage/local"
)

// testCatalog commits a table by writing each new metadata file next to
// the last, numbered as catalogs number them (00001-<uuid>.metadata.json),
// so that the tests read tables as a catalog leaves them, written by
// iceberg-go's own writer.
type testCatalog struct {
	t        testing.TB
	location string
	meta     table.Metadata
	version  int
	files    []string
}

func (c *testCatalog) LoadTable(context.Context, table.Identifier) (*table.Table, error) {
	return nil, fmt.Errorf("not implemented")
}

func (c *testCatalog) CommitTable(_ context.Context, _ table.Identifier, _ []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	meta, err := table.UpdateTableMetadata(c.meta, updates, "")
	if err != nil {
		return nil, "", err
	}
	c.meta = meta
	return meta, c.write(), nil
}

func (c *testCatalog) write() string {
	c.t.Helper()
	b, err := json.Marshal(c.meta)
	if err != nil {
		c.t.Fatal(err)
	}
	dir := filepath.Join(c.location, "metadata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	name := filepath.Join(dir, fmt.Sprintf("%05d-%s.metadata.json", c.version, uuid.New()))
	c.version++
	if err := os.WriteFile(name, b, 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.files = append(c.files, name)
	return name
}

// newTestTable creates an empty table at root/rel.
func newTestTable(t testing.TB, root, rel string, schema *ice.Schema, spec *ice.PartitionSpec, props ice.Properties) (*table.Table, *testCatalog) {
	t.Helper()
	location := filepath.Join(root, rel)
	if spec == nil {
		spec = iceberg_unpartitioned()
	}
	meta, err := table.NewMetadata(schema, spec, table.UnsortedSortOrder, "file://"+location, props)
	if err != nil {
		t.Fatal(err)
	}
	cat := &testCatalog{t: t, location: location, meta: meta}
	name := cat.write()
	fsF := func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }
	return table.New(table.Identifier{"db", "t"}, meta, name, fsF, cat), cat
}

func iceberg_unpartitioned() *ice.PartitionSpec {
	s := ice.UnpartitionedSpec
	return s
}

// appendRows commits one append of rows (id int64, name string).
func appendRows(t testing.TB, tbl *table.Table, schema *arrow.Schema, build func(b *array.RecordBuilder)) *table.Table {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	build(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer at.Release()
	tx := tbl.NewTransaction()
	if err := tx.AppendTable(context.Background(), at, 1024, nil); err != nil {
		t.Fatal(err)
	}
	out, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testBucket(t testing.TB, root string) *local.Bucket {
	t.Helper()
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
