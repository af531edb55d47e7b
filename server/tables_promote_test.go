package server

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/scand/scand/source/iceberg/icebergtest"
)

// TestScanIcebergPromotedDecimal: a decimal column widened from (5, 2) to
// (12, 2) reads the files written before as the table's type, every value
// kept, filtered by the table's type too.
func TestScanIcebergPromotedDecimal(t *testing.T) {
	root := t.TempDir()
	schema := ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64},
		ice.NestedField{ID: 2, Name: "amount", Type: ice.DecimalTypeOf(5, 2)},
	)
	narrow := &arrow.Decimal128Type{Precision: 5, Scale: 2}
	wide := &arrow.Decimal128Type{Precision: 12, Scale: 2}
	arrowOf := func(dt arrow.DataType) *arrow.Schema {
		return arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "amount", Type: dt, Nullable: true},
		}, nil)
	}
	// amount of id i is i * 1.01 (i * 101 hundredths), null for i % 9 == 0.
	rows := func(from, to int64) func(b *array.RecordBuilder) {
		return func(b *array.RecordBuilder) {
			for i := from; i < to; i++ {
				b.Field(0).(*array.Int64Builder).Append(i)
				if i%9 == 0 {
					b.Field(1).AppendNull()
				} else {
					b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(i * 101))
				}
			}
		}
	}
	tbl, _ := icebergtest.NewTable(t, root, "wh/t", schema, nil, nil)
	tbl = icebergtest.Append(t, tbl, arrowOf(narrow), rows(0, 40))
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).UpdateColumn([]string{"amount"}, icetable.ColumnUpdate{
		FieldType: ice.Optional[ice.Type]{Val: ice.DecimalTypeOf(12, 2), Valid: true},
	}).Commit(); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	icebergtest.Append(t, tbl, arrowOf(wide), rows(40, 60))

	client := testServer(t, root, memory.NewGoAllocator())
	for _, c := range []struct {
		filter string
		keep   func(i int64) bool
	}{
		{"", func(int64) bool { return true }},
		{"amount > 30.30", func(i int64) bool { return i%9 != 0 && i*101 > 3030 }},
	} {
		req := map[string]any{"table": "wh/t"}
		if c.filter != "" {
			req["filter"] = c.filter
		}
		res, err := scanJSON(context.Background(), client, req)
		if err != nil {
			t.Fatalf("filter %q: %v", c.filter, err)
		}
		var got, want []string
		for _, r := range res.records {
			if !arrow.TypeEqual(r.Schema().Field(1).Type, wide) {
				t.Fatalf("amount is %s, want the table's %s", r.Schema().Field(1).Type, wide)
			}
			amounts := r.Column(1).(*array.Decimal128)
			for i := 0; i < int(r.NumRows()); i++ {
				got = append(got, fmt.Sprintf("%d=%s", r.Column(0).(*array.Int64).Value(i), unscaled(amounts, i)))
			}
		}
		res.release()
		for i := int64(0); i < 60; i++ {
			if !c.keep(i) {
				continue
			}
			v := "(null)"
			if i%9 != 0 {
				v = fmt.Sprint(i * 101)
			}
			want = append(want, fmt.Sprintf("%d=%s", i, v))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("filter %q:\n got %v\nwant %v", c.filter, got, want)
		}
	}
}

// unscaled is a decimal's unscaled value ("(null)" for null).
func unscaled(a *array.Decimal128, i int) string {
	if a.IsNull(i) {
		return "(null)"
	}
	return a.Value(i).BigInt().String()
}
