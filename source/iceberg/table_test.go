package iceberg

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/source/iceberg/icebergtest"
	"github.com/scand/scand/storage/local"
)

// Tables for the tests are written by iceberg-go's own writer
// (icebergtest), as a catalog leaves them.

func newTestTable(t testing.TB, root, rel string, schema *ice.Schema, spec *ice.PartitionSpec, props ice.Properties) (*table.Table, *icebergtest.Catalog) {
	return icebergtest.NewTable(t, root, rel, schema, spec, props)
}

func appendRows(t testing.TB, tbl *table.Table, schema *arrow.Schema, build func(b *array.RecordBuilder)) *table.Table {
	return icebergtest.Append(t, tbl, schema, build)
}

func testBucket(t testing.TB, root string) *local.Bucket {
	t.Helper()
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
