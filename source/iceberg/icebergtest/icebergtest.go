// Package icebergtest writes Iceberg tables for tests, with iceberg-go's
// own writer and a catalog that leaves each commit's metadata file next
// to the last (00001-<uuid>.metadata.json), as catalogs do. It is for
// tests only.
package icebergtest

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
)

// IDName is the two-column table most tests write: id (long, field 1)
// and name (string, field 2), as Arrow and as an Iceberg schema.
var (
	IDNameArrow = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	IDNameSchema = ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64},
		ice.NestedField{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
	)
)

// Catalog commits one table by writing metadata files.
type Catalog struct {
	t        testing.TB
	location string
	meta     table.Metadata
	version  int
	// Files are the metadata files written, in order.
	Files []string
}

// LoadTable is not used by the writer.
func (c *Catalog) LoadTable(context.Context, table.Identifier) (*table.Table, error) {
	return nil, fmt.Errorf("icebergtest: LoadTable is not implemented")
}

// CommitTable applies updates and writes the next metadata file.
func (c *Catalog) CommitTable(_ context.Context, _ table.Identifier, _ []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	meta, err := table.UpdateTableMetadata(c.meta, updates, "")
	if err != nil {
		return nil, "", err
	}
	c.meta = meta
	return meta, c.write(), nil
}

func (c *Catalog) write() string {
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
	c.Files = append(c.Files, name)
	return name
}

// NewTable creates an empty table at root/rel (spec nil: unpartitioned).
func NewTable(t testing.TB, root, rel string, schema *ice.Schema, spec *ice.PartitionSpec, props ice.Properties) (*table.Table, *Catalog) {
	t.Helper()
	location := filepath.Join(root, rel)
	if spec == nil {
		s := ice.UnpartitionedSpec
		spec = s
	}
	meta, err := table.NewMetadata(schema, spec, table.UnsortedSortOrder, "file://"+location, props)
	if err != nil {
		t.Fatal(err)
	}
	cat := &Catalog{t: t, location: location, meta: meta}
	name := cat.write()
	fsF := func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }
	return table.New(table.Identifier{"db", "t"}, meta, name, fsF, cat), cat
}

// Append commits one append of the rows build writes into a batch of
// schema.
func Append(t testing.TB, tbl *table.Table, schema *arrow.Schema, build func(b *array.RecordBuilder)) *table.Table {
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
