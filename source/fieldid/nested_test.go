package fieldid

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// physicalFile is a file as Delta's column mapping writes it: every
// field, nested ones too, under a physical name. p-a is a struct
// {p-x: int64, p-g: struct{p-y: int64}}, p-l a list of struct{p-z}.
func physicalFile(t *testing.T, mem memory.Allocator) scanner.File {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "p-a", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "p-x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "p-g", Nullable: true, Type: arrow.StructOf(arrow.Field{Name: "p-y", Type: arrow.PrimitiveTypes.Int64, Nullable: true})})},
		{Name: "p-l", Nullable: true, Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "p-z", Type: arrow.PrimitiveTypes.Int64, Nullable: true}))},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, bytes.NewReader([]byte(`[
		{"p-a": {"p-x": 1, "p-g": {"p-y": 10}}, "p-l": [{"p-z": 5}, {"p-z": 6}]},
		{"p-a": null, "p-l": []},
		{"p-a": {"p-x": 3, "p-g": null}, "p-l": null}
	]`)))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	return parquetFile(t, rec, mem)
}

func TestNestedNames(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f := physicalFile(t, mem)
	table := arrow.NewSchema([]arrow.Field{
		{Name: "a", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "g", Nullable: true, Type: arrow.StructOf(arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true})})},
		// Delta refuses renames below lists and maps (source/delta): the
		// list keeps its nested names, and is looked through.
		{Name: "l", Nullable: true, Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "p-z", Type: arrow.PrimitiveTypes.Int64, Nullable: true}))},
	}, nil)
	physical := map[string]string{"a": "p-a", "a.x": "p-a.p-x", "a.g": "p-a.p-g", "a.g.y": "p-a.p-g.p-y", "l": "p-l"}
	matched, err := MatchByName(table, f.Schema(), physical)
	if err != nil {
		t.Fatal(err)
	}
	nested := NestedNames(table, f.Schema(), matched)
	want := map[string]string{"p-a.p-x": "x", "p-a.p-g": "g", "p-a.p-g.p-y": "y"}
	if len(nested) != len(want) {
		t.Fatalf("nested names %v, want %v", nested, want)
	}
	for k, v := range want {
		if nested[k] != v {
			t.Fatalf("nested names %v, want %v", nested, want)
		}
	}
	r, err := Rename(f, ColumnNames(f.Schema(), matched), nested)
	if err != nil {
		t.Fatal(err)
	}
	if !arrow.TypeEqual(r.Schema().Field(0).Type, table.Field(0).Type) || r.Schema().Field(1).Name != "l" {
		t.Fatalf("renamed schema %v, want the table's names %v", r.Schema(), table)
	}
	for _, c := range []struct {
		columns []string
		want    string
	}{
		{nil, `[{"a":{"g":{"y":10},"x":1},"l":[{"p-z":5},{"p-z":6}]},{"a":null,"l":[]},{"a":{"g":null,"x":3},"l":null}]`},
		{[]string{"a.g.y"}, `[{"a":{"g":{"y":10}}},{"a":null},{"a":{"g":null}}]`},
		{[]string{"l.p-z", "a.x"}, `[{"a":{"x":1},"l":[{"p-z":5},{"p-z":6}]},{"a":null,"l":[]},{"a":{"x":3},"l":null}]`},
	} {
		p, err := r.Project(c.columns)
		if err != nil {
			t.Fatalf("%v: %v", c.columns, err)
		}
		var got []byte
		err = r.Read(context.Background(), p, scanner.ReadOptions{Groups: []int{0}, Mem: mem}, func(rec arrow.RecordBatch) error {
			defer rec.Release()
			if !rec.Schema().Equal(p.Schema) {
				t.Errorf("%v: batch schema %v, projection %v", c.columns, rec.Schema(), p.Schema)
			}
			got, err = rec.MarshalJSON()
			return err
		})
		if err != nil {
			t.Fatalf("%v: %v", c.columns, err)
		}
		var gotV, wantV any
		_ = json.Unmarshal(got, &gotV)
		_ = json.Unmarshal([]byte(c.want), &wantV)
		g, _ := json.Marshal(gotV)
		w, _ := json.Marshal(wantV)
		if string(g) != string(w) {
			t.Errorf("%v: read %s, want %s", c.columns, g, w)
		}
	}
	// A scan path under the file's own nested names finds nothing (the
	// planner refuses it as no column of the table).
	if p, err := r.Project([]string{"a.p-x"}); err == nil && len(p.Missing) == 0 {
		t.Errorf("a.p-x: the file's physical name answered a scan path: %v", p.Schema)
	}

}
