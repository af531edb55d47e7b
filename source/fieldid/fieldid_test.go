package fieldid

import (
	"errors"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func field(name string, id int, t arrow.DataType) arrow.Field {
	f := arrow.Field{Name: name, Type: t, Nullable: true}
	if id != 0 {
		f.Metadata = arrow.NewMetadata([]string{Key}, []string{strconv.Itoa(id)})
	}
	return f
}

func schema(fs ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fs, nil) }

var (
	i32 = arrow.PrimitiveTypes.Int32
	i64 = arrow.PrimitiveTypes.Int64
	f32 = arrow.PrimitiveTypes.Float32
	f64 = arrow.PrimitiveTypes.Float64
	str = arrow.BinaryTypes.String
)

func TestMatch(t *testing.T) {
	type want struct {
		file int
		cast bool
	}
	for _, c := range []struct {
		name       string
		table      *arrow.Schema
		file       *arrow.Schema
		physical   map[string]string
		nameMapped bool
		want       []want
		err        bool
	}{
		{
			name:  "same",
			table: schema(field("a", 1, i64), field("b", 2, str)),
			file:  schema(field("a", 1, i64), field("b", 2, str)),
			want:  []want{{0, false}, {1, false}},
		},
		{
			name:  "renamed and reordered",
			table: schema(field("b_new", 2, str), field("a", 1, i64)),
			file:  schema(field("a", 1, i64), field("b", 2, str)),
			want:  []want{{1, false}, {0, false}},
		},
		{
			name:  "dropped and re-added under the same name",
			table: schema(field("a", 1, i64), field("b", 3, str)),
			file:  schema(field("a", 1, i64), field("b", 2, str)),
			want:  []want{{0, false}, {-1, false}},
		},
		{
			name:  "added since",
			table: schema(field("a", 1, i64), field("c", 4, f64)),
			file:  schema(field("a", 1, i64)),
			want:  []want{{0, false}, {-1, false}},
		},
		{
			name:  "promoted",
			table: schema(field("a", 1, i64), field("f", 2, f64), field("d", 3, &arrow.Decimal128Type{Precision: 12, Scale: 2})),
			file:  schema(field("a", 1, i32), field("f", 2, f32), field("d", 3, &arrow.Decimal128Type{Precision: 9, Scale: 2})),
			want:  []want{{0, true}, {1, true}, {2, true}},
		},
		{
			name:  "large string",
			table: schema(field("s", 1, str)),
			file:  schema(field("s", 1, arrow.BinaryTypes.LargeString)),
			want:  []want{{0, true}},
		},
		{
			name:  "narrowing is refused",
			table: schema(field("a", 1, i32)),
			file:  schema(field("a", 1, i64)),
			err:   true,
		},
		{
			name:  "date promoted to timestamp",
			table: schema(field("t", 1, &arrow.TimestampType{Unit: arrow.Microsecond})),
			file:  schema(field("t", 1, arrow.FixedWidthTypes.Date32)),
			want:  []want{{0, true}},
		},
		{
			name:  "date to timestamptz is refused",
			table: schema(field("t", 1, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})),
			file:  schema(field("t", 1, arrow.FixedWidthTypes.Date32)),
			err:   true,
		},
		{
			name:  "decimal scale change is refused",
			table: schema(field("d", 1, &arrow.Decimal128Type{Precision: 12, Scale: 3})),
			file:  schema(field("d", 1, &arrow.Decimal128Type{Precision: 9, Scale: 2})),
			err:   true,
		},
		{
			name:  "duplicate ids",
			table: schema(field("a", 1, i64)),
			file:  schema(field("a", 1, i64), field("b", 1, i64)),
			err:   true,
		},
		{
			name:       "no ids: name mapping",
			table:      schema(field("a_new", 1, i64), field("b", 2, str)),
			file:       schema(field("a", 0, i64), field("b", 0, str)),
			physical:   map[string]string{"a_new": "a"},
			nameMapped: true,
			want:       []want{{0, false}, {1, false}},
		},
		{
			name:  "no ids, no name mapping",
			table: schema(field("a", 1, i64)),
			file:  schema(field("a", 0, i64)),
			err:   true,
		},
		{
			name:  "arrow-go's -1 markers are no ids",
			table: schema(field("a", 1, i64)),
			file:  schema(arrow.Field{Name: "a", Type: i64, Metadata: arrow.NewMetadata([]string{Key}, []string{"-1"})}),
			err:   true,
		},
		{
			name:  "struct as written",
			table: schema(field("s", 1, arrow.StructOf(field("x", 2, i64), field("y", 3, str)))),
			file:  schema(field("s", 1, arrow.StructOf(field("x", 2, i64), field("y", 3, str)))),
			want:  []want{{0, false}},
		},
		{
			name:  "struct with a field added is not read",
			table: schema(field("s", 1, arrow.StructOf(field("x", 2, i64), field("y", 3, str)))),
			file:  schema(field("s", 1, arrow.StructOf(field("x", 2, i64)))),
			err:   true,
		},
		{
			name:  "struct with a field renamed is read by its id (NestedNames renames it)",
			table: schema(field("s", 1, arrow.StructOf(field("x2", 2, i64)))),
			file:  schema(field("s", 1, arrow.StructOf(field("x", 2, i64)))),
			want:  []want{{0, false}},
		},
		{
			name:  "struct with a field of another id under the same name is not read",
			table: schema(field("s", 1, arrow.StructOf(field("x", 3, i64)))),
			file:  schema(field("s", 1, arrow.StructOf(field("x", 2, i64)))),
			err:   true,
		},
		{
			name:  "list element names differ",
			table: schema(field("l", 1, arrow.ListOfField(field("element", 2, i64)))),
			file:  schema(field("l", 1, arrow.ListOfField(field("item", 2, i64)))),
			want:  []want{{0, false}},
		},
		{
			name:  "struct against a primitive",
			table: schema(field("s", 1, arrow.StructOf(field("x", 2, i64)))),
			file:  schema(field("s", 1, i64)),
			err:   true,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Match(c.table, c.file, c.physical, c.nameMapped)
			if c.err {
				var fe *Error
				if !errors.As(err, &fe) {
					t.Fatalf("got %v, %v; want an *Error", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %+v", got)
			}
			for i, w := range c.want {
				g := got[i]
				if g.Name != c.table.Field(i).Name || g.File != w.file || g.Cast != w.cast {
					t.Errorf("column %d: got %+v, want file %d cast %v", i, g, w.file, w.cast)
				}
				if g.File >= 0 && g.FileName != c.file.Field(g.File).Name {
					t.Errorf("column %d: file name %q", i, g.FileName)
				}
			}
		})
	}
}

func TestMatchByName(t *testing.T) {
	// Delta's column mapping in name mode: the file stores col-1 and
	// col-2, the table calls them a and b; field ids (if any) are not
	// consulted.
	table := schema(field("a", 1, i64), field("b", 2, str), field("c", 3, i64))
	file := schema(field("col-2", 9, str), field("col-1", 8, i64))
	got, err := MatchByName(table, file, map[string]string{"a": "col-1", "b": "col-2"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].File != 1 || got[1].File != 0 || got[2].File != -1 {
		t.Fatalf("got %+v", got)
	}
	if names := ColumnNames(file, got); names[0] != "b" || names[1] != "a" {
		t.Fatalf("names %q", names)
	}
}
