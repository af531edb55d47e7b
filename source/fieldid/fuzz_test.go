package fieldid

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// schemaFrom builds a schema from bytes: each field takes 3 bytes (id,
// name, type), nested structs from a type byte that says so.
func schemaFrom(b []byte, depth int) []arrow.Field {
	types := []arrow.DataType{i32, i64, f32, f64, str, arrow.BinaryTypes.LargeString, &arrow.Decimal128Type{Precision: 9, Scale: 2}, &arrow.Decimal128Type{Precision: 18, Scale: 2}}
	var out []arrow.Field
	for len(b) >= 3 && len(out) < 16 {
		id, name, typ := int(b[0]%8), string(rune('a'+b[1]%6)), b[2]
		b = b[3:]
		var t arrow.DataType
		if typ%9 == 8 && depth < 2 && len(b) >= 3 {
			n := int(b[0] % 4)
			end := min(len(b), 1+3*n)
			t = arrow.StructOf(schemaFrom(b[1:end], depth+1)...)
			b = b[end:]
		} else {
			t = types[int(typ)%len(types)]
		}
		out = append(out, field(name, id, t))
	}
	return out
}

// FuzzMatch: any pair of schemas gives an *Error or a resolution where
// every column names a real file column of a compatible type, each file
// column read at most once per id.
func FuzzMatch(f *testing.F) {
	f.Add([]byte{1, 0, 1, 2, 1, 4}, []byte{2, 3, 4, 1, 0, 0}, true)
	f.Add([]byte{1, 0, 8, 2, 1, 1, 3, 2, 4}, []byte{1, 0, 8, 2, 2, 1, 3, 2, 4}, false)
	f.Add([]byte{0, 0, 1}, []byte{0, 0, 0}, true)
	f.Fuzz(func(t *testing.T, tb, fb []byte, mapped bool) {
		table := arrow.NewSchema(schemaFrom(tb, 0), nil)
		file := arrow.NewSchema(schemaFrom(fb, 0), nil)
		got, err := Match(table, file, map[string]string{"a": "b"}, mapped)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if len(got) != table.NumFields() {
			t.Fatalf("%d columns for %d", len(got), table.NumFields())
		}
		for i, c := range got {
			if c.File < -1 || c.File >= file.NumFields() {
				t.Fatalf("column %d reads file column %d of %d", i, c.File, file.NumFields())
			}
			if c.File >= 0 {
				ft, tt := file.Field(c.File).Type, table.Field(i).Type
				if !c.Cast && !arrow.TypeEqual(ft, tt) && ft.ID() != arrow.STRUCT {
					t.Fatalf("column %d: %s read as %s without a cast", i, ft, tt)
				}
				if c.FileName != file.Field(c.File).Name {
					t.Fatalf("column %d: name %q", i, c.FileName)
				}
			}
		}
	})
}
