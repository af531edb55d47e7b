package iceberg

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/scanner/filter/sql"
)

var filterSchema = ice.NewSchema(0,
	ice.NestedField{ID: 1, Name: "i", Type: ice.PrimitiveTypes.Int32},
	ice.NestedField{ID: 2, Name: "l", Type: ice.PrimitiveTypes.Int64},
	ice.NestedField{ID: 3, Name: "f", Type: ice.PrimitiveTypes.Float64},
	ice.NestedField{ID: 4, Name: "s", Type: ice.PrimitiveTypes.String},
	ice.NestedField{ID: 5, Name: "d", Type: ice.PrimitiveTypes.Date},
	ice.NestedField{ID: 6, Name: "b", Type: ice.PrimitiveTypes.Bool},
	ice.NestedField{ID: 7, Name: "st", Type: &ice.StructType{FieldList: []ice.NestedField{{ID: 8, Name: "x", Type: ice.PrimitiveTypes.Int64}}}},
	ice.NestedField{ID: 9, Name: "ts", Type: ice.PrimitiveTypes.TimestampTz},
)

func TestPruningFilter(t *testing.T) {
	as, err := table.SchemaToArrowSchema(filterSchema, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ sql, want string }{
		{"l > 5", "GreaterThan(term=Reference(name='l'), literal=5)"},
		{"i = 3", "Equal(term=Reference(name='i'), literal=3)"},
		{"NOT (l > 5)", "LessThanEqual(term=Reference(name='l'), literal=5)"},
		{"f > 1.5", "GreaterThan(term=Reference(name='f'), literal=1.5)"},
		{"NOT (f > 1.5)", "AlwaysTrue()"},  // NaN rows pass NOT, fail <=
		{"f != 1.5", "AlwaysTrue()"},       // NaN != 1.5
		{"l = i", "AlwaysTrue()"},          // two columns
		{"l > 5 OR l = i", "AlwaysTrue()"}, // OR with an untranslated side
		{"l > 5 AND l = i", "GreaterThan(term=Reference(name='l'), literal=5)"},
		{"s LIKE 'ab%'", "StartsWith(term=Reference(name='s'), literal=ab)"},
		{"s LIKE 'a_b%'", "AlwaysTrue()"},
		{"s NOT LIKE 'ab%'", "AlwaysTrue()"},
		{"l IN (1, NULL)", "Equal(term=Reference(name='l'), literal=1)"},
		{"l NOT IN (1, NULL)", "AlwaysTrue()"},
		{"l IS NULL", "IsNull(term=Reference(name='l'))"},
		{"NOT (l IS NULL)", "NotNull(term=Reference(name='l'))"},
		{"b", "Equal(term=Reference(name='b'), literal=true)"},
		{"NOT b", "Equal(term=Reference(name='b'), literal=false)"},
		{"st.x < 3", "LessThan(term=Reference(name='st.x'), literal=3)"},
		{"d >= DATE '2026-01-02'", "GreaterThanEqual(term=Reference(name='d'), literal=2026-01-02)"},
	} {
		t.Run(c.sql, func(t *testing.T) {
			e, err := sql.Parse(c.sql)
			if err != nil {
				t.Fatal(err)
			}
			p, err := filter.Bind(e, as)
			if err != nil {
				t.Fatal(err)
			}
			got := pruningFilter(p.Expr(), filterSchema)
			if got.String() != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
	_ = arrow.PrimitiveTypes.Int64
}
