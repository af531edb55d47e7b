package substrait

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	pb "github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// TestBindExact: Substrait literals a column cannot hold (a decimal of a
// finer scale, a float against a decimal, an int64 beyond an int32) bind
// to exact comparisons, as SQL text does (filter/exact.go).
func TestBindExact(t *testing.T) {
	ns := testSchema(false) // i32 is field 0, i64 field 1
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i32", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	dec := func(unscaled byte, precision, scale int32) *pb.Expression {
		return lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Decimal_{Decimal: &pb.Expression_Literal_Decimal{
			Value: []byte{unscaled, 15: 0}, Precision: precision, Scale: scale}}})
	}
	fp64 := func(f float64) *pb.Expression {
		return lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Fp64{Fp64: f}})
	}
	funcs := []string{"gt:any_any", "equal:any_any"}
	for _, c := range []struct {
		name string
		expr *pb.Expression
		want string
	}{
		{"decimal of a finer scale", call(1, ref(0), dec(123, 5, 3)), "(i32 >= 0.13)"},
		{"decimal equal never", call(2, ref(0), dec(123, 5, 3)), "(i32 > 99999999.99)"},
		{"float against decimal", call(1, ref(0), fp64(100.5)), "(i32 > 100.5)"},
		{"float between decimals", call(1, ref(0), fp64(0.105)), "(i32 >= 0.11)"},
		{"int64 beyond int32", call(1, ref(1), i64(1<<40)), "(i64 > 2147483647)"},
		{"float against int32", call(1, ref(1), fp64(1.5)), "(i64 >= 2)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := Translate(message(t, ns, funcs, c.expr))
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			p, err := filter.Bind(e, schema)
			if err != nil {
				t.Fatalf("Bind(%s): %v", e, err)
			}
			if got := p.Expr().String(); got != c.want {
				t.Errorf("bound %s, want %s", got, c.want)
			}
		})
	}
}
