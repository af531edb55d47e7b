package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/source/iceberg/icebergtest"
)

// A table's nested fields named by dotted path keep, as for files, only
// the fields named: the same rows and values as iceberg-go's own read,
// pruned the same way.
func TestScanIcebergNestedColumns(t *testing.T) {
	geo := ice.StructType{FieldList: []ice.NestedField{
		{ID: 6, Name: "lat", Type: ice.PrimitiveTypes.Float64},
		{ID: 7, Name: "lon", Type: ice.PrimitiveTypes.Float64},
	}}
	address := ice.StructType{FieldList: []ice.NestedField{
		{ID: 3, Name: "city", Type: ice.PrimitiveTypes.String},
		{ID: 4, Name: "zip", Type: ice.PrimitiveTypes.Int32},
		{ID: 5, Name: "geo", Type: &geo},
	}}
	tag := ice.StructType{FieldList: []ice.NestedField{
		{ID: 10, Name: "k", Type: ice.PrimitiveTypes.String},
		{ID: 11, Name: "v", Type: ice.PrimitiveTypes.Int64},
	}}
	schema := ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64},
		ice.NestedField{ID: 2, Name: "address", Type: &address},
		ice.NestedField{ID: 8, Name: "tags", Type: &ice.ListType{ElementID: 9, Element: &tag, ElementRequired: false}},
	)
	geoArrow := arrow.StructOf(
		arrow.Field{Name: "lat", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "lon", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	addrArrow := arrow.StructOf(
		arrow.Field{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "zip", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "geo", Type: geoArrow, Nullable: true})
	tagArrow := arrow.StructOf(
		arrow.Field{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	arrowSchema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "address", Type: addrArrow, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(tagArrow), Nullable: true},
	}, nil)

	root := t.TempDir()
	tbl, _ := icebergtest.NewTable(t, root, "wh/nested", schema, nil, ice.Properties{icetable.PropertyFormatVersion: "2"})
	tbl = icebergtest.Append(t, tbl, arrowSchema, func(b *array.RecordBuilder) {
		for i := int64(0); i < 50; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
			ab := b.Field(1).(*array.StructBuilder)
			if i%9 == 0 {
				ab.AppendNull()
			} else {
				ab.Append(true)
				ab.FieldBuilder(0).(*array.StringBuilder).Append(string(rune('A' + i%4)))
				ab.FieldBuilder(1).(*array.Int32Builder).Append(int32(1000 + i))
				gb := ab.FieldBuilder(2).(*array.StructBuilder)
				gb.Append(true)
				gb.FieldBuilder(0).(*array.Float64Builder).Append(float64(i) / 2)
				gb.FieldBuilder(1).(*array.Float64Builder).Append(-float64(i))
			}
			lb := b.Field(2).(*array.ListBuilder)
			lb.Append(true)
			tb := lb.ValueBuilder().(*array.StructBuilder)
			for j := int64(0); j < i%3; j++ {
				tb.Append(true)
				tb.FieldBuilder(0).(*array.StringBuilder).Append(string(rune('k' + j)))
				tb.FieldBuilder(1).(*array.Int64Builder).Append(i*10 + j)
			}
		}
	})
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	client := testServerWith(t, onRoot(t, root, iosched.Options{}, Config{Mem: mem}))
	ctx := context.Background()

	// iceberg-go's read of the whole table, as JSON rows keyed by id.
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	whole := map[int64]map[string]any{}
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	for tr.Next() {
		for id, row := range jsonRows(t, tr.RecordBatch()) {
			whole[id] = row
		}
	}
	if len(whole) != 50 {
		t.Fatalf("iceberg-go read %d rows", len(whole))
	}

	for _, c := range []struct {
		columns []string
		// want picks each row's expected value of the scan's columns
		// from the whole row.
		want   func(row map[string]any) map[string]any
		fields string // the scan's schema as arrow-go prints it
	}{
		{
			columns: []string{"address.city", "id"},
			want: func(row map[string]any) map[string]any {
				return map[string]any{"address": pickKeys(row["address"], "city"), "id": row["id"]}
			},
			fields: "address: struct<city: utf8 nullable>, id: int64",
		},
		{
			columns: []string{"id", "address.geo.lon", "address.zip"},
			want: func(row map[string]any) map[string]any {
				a := row["address"]
				var out any
				if a != nil {
					m := a.(map[string]any)
					out = map[string]any{"zip": m["zip"], "geo": pickKeys(m["geo"], "lon")}
				}
				return map[string]any{"id": row["id"], "address": out}
			},
			fields: "id: int64, address: struct<zip: int32 nullable, geo: struct<lon: float64 nullable> nullable>",
		},
		{
			columns: []string{"id", "address.geo", "address"},
			want: func(row map[string]any) map[string]any {
				return map[string]any{"id": row["id"], "address": row["address"]}
			},
			fields: "id: int64, address: struct<city: utf8 nullable, zip: int32 nullable, geo: struct<lat: float64 nullable, lon: float64 nullable> nullable>",
		},
		{
			columns: []string{"tags.v", "id"},
			want: func(row map[string]any) map[string]any {
				tags := []any{}
				for _, e := range row["tags"].([]any) {
					tags = append(tags, pickKeys(e, "v"))
				}
				return map[string]any{"tags": tags, "id": row["id"]}
			},
			fields: "tags: list<element: struct<v: int64 nullable>, nullable>, id: int64",
		},
	} {
		res, err := scanJSON(ctx, client, map[string]any{"table": "wh/nested", "columns": c.columns})
		if err != nil {
			t.Fatalf("%v: %v", c.columns, err)
		}
		if got := fieldsText(res.records[0].Schema()); got != c.fields {
			t.Errorf("%v: schema %s, want %s", c.columns, got, c.fields)
		}
		n := 0
		for _, rec := range res.records {
			for id, row := range jsonRows(t, rec) {
				n++
				want := c.want(whole[id])
				gotJSON, _ := json.Marshal(row)
				wantJSON, _ := json.Marshal(want)
				if string(gotJSON) != string(wantJSON) {
					t.Fatalf("%v: row %d is %s, iceberg-go's pruned %s", c.columns, id, gotJSON, wantJSON)
				}
			}
		}
		if n != 50 {
			t.Errorf("%v: %d rows", c.columns, n)
		}
		res.release()
	}

	// Renamed since the files were written: a dotted path under the new
	// name reaches the file's column by its field id.
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).RenameColumn([]string{"address"}, "addr").Commit(); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := scanJSON(ctx, client, map[string]any{"table": "wh/nested", "columns": []string{"id", "addr.city"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldsText(res.records[0].Schema()), "id: int64, addr: struct<city: utf8 nullable>"; got != want {
		t.Errorf("renamed: schema %s, want %s", got, want)
	}
	n := 0
	for _, rec := range res.records {
		for id, row := range jsonRows(t, rec) {
			n++
			gotJSON, _ := json.Marshal(row["addr"])
			wantJSON, _ := json.Marshal(pickKeys(whole[id]["address"], "city"))
			if string(gotJSON) != string(wantJSON) {
				t.Fatalf("renamed: row %d addr is %s, want %s", id, gotJSON, wantJSON)
			}
		}
	}
	if n != 50 {
		t.Errorf("renamed: %d rows", n)
	}
	res.release()

	// A nested field renamed too: found by its id, read under its new name.
	tx = tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).RenameColumn([]string{"addr", "city"}, "town").Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, columns := range [][]string{{"id", "addr.town"}, {"id", "addr"}} {
		res, err = scanJSON(ctx, client, map[string]any{"table": "wh/nested", "columns": columns})
		if err != nil {
			t.Fatalf("%v after renaming city: %v", columns, err)
		}
		n = 0
		for _, rec := range res.records {
			st := rec.Schema().Field(1).Type.(*arrow.StructType)
			if st.Field(0).Name != "town" {
				t.Fatalf("%v: addr is %s, want town first", columns, st)
			}
			for id, row := range jsonRows(t, rec) {
				n++
				var got, want any = row["addr"], whole[id]["address"]
				if m, ok := want.(map[string]any); ok {
					renamed := map[string]any{"town": m["city"]}
					if len(columns) == 2 && columns[1] == "addr" {
						renamed["zip"], renamed["geo"] = m["zip"], m["geo"]
					}
					want = renamed
				}
				gotJSON, _ := json.Marshal(got)
				wantJSON, _ := json.Marshal(want)
				if string(gotJSON) != string(wantJSON) {
					t.Fatalf("%v: row %d addr is %s, want %s", columns, id, gotJSON, wantJSON)
				}
			}
		}
		if n != 50 {
			t.Errorf("%v: %d rows", columns, n)
		}
		res.release()
	}

	// A path that names nothing is an unknown column, as for files.
	if _, err := scanJSON(ctx, client, map[string]any{"table": "wh/nested", "columns": []string{"address.country"}}); err == nil {
		t.Fatal("address.country: no error")
	}
}

// jsonRows are rec's rows as JSON values keyed by the id column.
func jsonRows(t *testing.T, rec arrow.RecordBatch) map[int64]map[string]any {
	t.Helper()
	b, err := rec.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	out := map[int64]map[string]any{}
	for _, r := range rows {
		out[int64(r["id"].(float64))] = r
	}
	return out
}

// pickKeys is a JSON object with only keys (nil stays nil).
func pickKeys(v any, keys ...string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

// fieldsText prints a schema's fields as "name: type, ...".
func fieldsText(s *arrow.Schema) string {
	var parts []string
	for _, f := range s.Fields() {
		parts = append(parts, f.Name+": "+f.Type.String())
	}
	return strings.Join(parts, ", ")
}
