package planner

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// The planner refuses a plan whose tickets would rebuild another schema
// than the FlightInfo's, naming both: here a file's projection has a
// column the scan's schema lacks, which no delta can drop.
func TestPlanRefusesASchemaItsTicketsCannotRebuild(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	file := arrow.NewSchema([]arrow.Field{
		{Name: "trip_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "pickup", Type: arrow.StructOf(arrow.Field{Name: "lat", Type: arrow.PrimitiveTypes.Float64, Nullable: true}), Nullable: true},
	}, nil)
	planned := arrow.NewSchema(file.Fields()[:1], nil)
	err := CheckPlannedSchema("trips/city=a/part-0.parquet", file, SchemaDelta(file, planned, mem), planned, mem)
	if err == nil {
		t.Fatal("a plan whose stream would send pickup too was accepted")
	}
	var mismatch *SchemaMismatchError
	if !errors.As(err, &mismatch) { // the server leaves it INTERNAL
		t.Errorf("error %T, want a *SchemaMismatchError", err)
	}
	for _, want := range []string{"trips/city=a/part-0.parquet", "field 1, pickup: struct<lat: float64 nullable>, is not planned", "planned: {trip_id: int64 not null}"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err.Error(), want)
		}
	}
	if err := CheckPlannedSchema("a", file, SchemaDelta(file, file, mem), file, mem); err != nil {
		t.Errorf("a delta that rebuilds the plan: %v", err)
	}
}

// A list whose element a file's reader names otherwise than the scan's
// type (ORC's item, Parquet's element) is stated in the delta, so that the
// stream's schema is the scan's to the element's name; the plan's check
// tells the two apart.
func TestDeltaStatesNestedNames(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	list := func(elem string) *arrow.Schema {
		return arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOfField(arrow.Field{Name: elem, Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true}}, nil)
	}
	orc, scan := list("item"), list("element")
	if SchemasEqual(orc, scan) {
		t.Fatal("list<item> and list<element> are equal")
	}
	d := SchemaDelta(orc, scan, mem)
	if d == nil || len(d.Positions) != 1 {
		t.Fatalf("delta %v: want l stated", d)
	}
	if err := CheckPlannedSchema("a.orc", orc, d, scan, mem); err != nil {
		t.Error(err)
	}
	if err := CheckPlannedSchema("a.orc", orc, nil, scan, mem); err == nil || !strings.Contains(err.Error(), "field 0 is l: list<item: int64, nullable>") {
		t.Errorf("no delta: %v", err)
	}
}

// A schema delta turns the file's projection back into the scan's schema,
// whatever the difference.
func TestSchemaDeltaRoundTrip(t *testing.T) {
	i64, str := arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String
	f := func(name string, typ arrow.DataType, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: nullable}
	}
	withMeta := func(fl arrow.Field, k, v string) arrow.Field {
		fl.Metadata = arrow.NewMetadata([]string{k}, []string{v})
		return fl
	}
	id1 := withMeta(f("a", i64, false), "PARQUET:field_id", "1")
	noID := withMeta(f("a", i64, false), "PARQUET:field_id", "-1")
	nested := arrow.StructOf(f("x", i64, true), f("y", str, false))
	nestedNoID := arrow.StructOf(withMeta(f("x", i64, true), "PARQUET:field_id", "-1"), f("y", str, false))
	nestedOther := arrow.StructOf(withMeta(f("x", i64, true), "k", "first"), f("y", str, false))
	ts := func(u arrow.TimeUnit) arrow.DataType { return &arrow.TimestampType{Unit: u} }
	pandas := arrow.NewMetadata([]string{"pandas"}, []string{`{"index_columns": ["idx"]}`})
	other := arrow.NewMetadata([]string{"pandas"}, []string{`{"index_columns": []}`})
	for _, tc := range []struct {
		name               string
		file               []arrow.Field
		scan               []arrow.Field
		wantDelta          bool
		fileMeta, scanMeta *arrow.Metadata
	}{
		{name: "same", file: []arrow.Field{f("a", i64, false), f("b", str, true)}, scan: []arrow.Field{f("a", i64, false), f("b", str, true)}},
		{name: "the file's field ids are kept", file: []arrow.Field{id1}, scan: []arrow.Field{id1}},
		{name: "arrow-go's field id -1 is dropped", file: []arrow.Field{noID}, scan: []arrow.Field{f("a", i64, false)}},
		{name: "nested field id -1 is dropped", file: []arrow.Field{f("s", nestedNoID, true)}, scan: []arrow.Field{f("s", nested, true)}},
		{name: "the first file's field metadata", file: []arrow.Field{id1}, scan: []arrow.Field{withMeta(f("a", i64, false), "k", "first")}, wantDelta: true},
		{name: "the first file's nested field metadata", file: []arrow.Field{f("s", nested, true)}, scan: []arrow.Field{f("s", nestedOther, true)}, wantDelta: true},
		{name: "promoted", file: []arrow.Field{f("a", i64, false), f("t", ts(arrow.Nanosecond), true)}, scan: []arrow.Field{f("a", i64, false), f("t", ts(arrow.Microsecond), true)}, wantDelta: true},
		{name: "the file's schema metadata", file: []arrow.Field{f("a", i64, false)}, scan: []arrow.Field{f("a", i64, false)}, fileMeta: &pandas, scanMeta: &pandas},
		{name: "the first file's schema metadata", file: []arrow.Field{f("a", i64, false)}, scan: []arrow.Field{f("a", i64, false)}, fileMeta: &other, scanMeta: &pandas, wantDelta: true},
		{name: "no schema metadata where the file has some", file: []arrow.Field{f("a", i64, false)}, scan: []arrow.Field{f("a", i64, false)}, fileMeta: &pandas, wantDelta: true},
		{name: "made nullable", file: []arrow.Field{f("a", i64, false), f("b", str, false)}, scan: []arrow.Field{f("a", i64, false), f("b", str, true)}, wantDelta: true},
		{name: "absent in the middle", file: []arrow.Field{f("a", i64, false), f("c", i64, false)}, scan: []arrow.Field{f("a", i64, false), f("b", nested, true), f("c", i64, false)}, wantDelta: true},
		{name: "absent first and last", file: []arrow.Field{f("b", i64, true)}, scan: []arrow.Field{f("a", str, true), f("b", i64, true), f("z", str, true)}, wantDelta: true},
		{name: "absent everything", file: nil, scan: []arrow.Field{f("a", str, true)}, wantDelta: true},
		{name: "other order", file: []arrow.Field{f("b", str, true), f("a", i64, false)}, scan: []arrow.Field{f("a", i64, false), f("b", str, true)}, wantDelta: true},
		{name: "nested", file: []arrow.Field{f("s", nested, true)}, scan: []arrow.Field{f("s", nested, true)}, wantDelta: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			p, u := arrow.NewSchema(tc.file, tc.fileMeta), arrow.NewSchema(tc.scan, tc.scanMeta)
			d := SchemaDelta(p, u, mem)
			if (d != nil) != tc.wantDelta {
				t.Fatalf("delta %v, want one: %v", d, tc.wantDelta)
			}
			got, err := ApplyDelta(p, d, mem)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(u) || !got.Metadata().Equal(u.Metadata()) || !sameFieldMetadata(got, u) {
				t.Fatalf("rebuilt %v, want %v", got, u)
			}
		})
	}
}

// Whatever a ticket's delta and column selection hold, applying them
// fails cleanly or yields a schema; it never panics.
func FuzzTicketDelta(f *testing.F) {
	mem := memory.NewGoAllocator()
	i64 := arrow.PrimitiveTypes.Int64
	p := arrow.NewSchema([]arrow.Field{{Name: "a", Type: i64}, {Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	u := arrow.NewSchema([]arrow.Field{{Name: "z", Type: i64, Nullable: true}, {Name: "a", Type: i64, Nullable: true}, {Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	for _, d := range []*scandv1.SchemaDelta{SchemaDelta(p, u, mem), fullDelta(u, mem), {}} {
		b, _ := proto.Marshal(&scandv1.ScanTask{SchemaDelta: d, Columns: &scandv1.ColumnSelection{Index: []uint32{0, 1, 2}, Absent: []string{"z"}}})
		f.Add(b)
	}
	names := []string{"a", "b"}
	f.Fuzz(func(t *testing.T, b []byte) {
		task := &scandv1.ScanTask{}
		if proto.Unmarshal(b, task) != nil {
			return
		}
		_, _ = SelectedColumns(task.Columns, names)
		if s, err := ApplyDelta(p, task.SchemaDelta, mem); err == nil && s == nil {
			t.Fatal("no schema and no error")
		}
	})
}

// What DoGet's schema check costs per file of a stream: the fingerprint of
// a schema of 2,000 columns.
func BenchmarkSchemaFingerprint2000Columns(b *testing.B) {
	fields := make([]arrow.Field, 2000)
	for i := range fields {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%03d", i), Type: arrow.PrimitiveTypes.Int64}
	}
	schema := arrow.NewSchema(fields, nil)
	b.ReportAllocs()
	for b.Loop() {
		SchemaFingerprint(schema)
	}
}

// sameFieldMetadata says whether a and b's fields have the same metadata,
// nested fields' included.
func sameFieldMetadata(a, b *arrow.Schema) bool {
	for i, f := range a.Fields() {
		g := b.Field(i)
		if !f.Metadata.Equal(g.Metadata) || !arrow.TypeEqual(f.Type, g.Type, arrow.CheckMetadata()) {
			return false
		}
	}
	return true
}
