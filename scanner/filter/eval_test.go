package filter

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

func col(path ...string) *Column { return &Column{Path: path} }
func lit(v any) *Literal         { return &Literal{Value: v} }
func cmpOp(op CompareOp, l, r Expr) *Compare {
	return &Compare{Op: op, Left: l, Right: r}
}
func lits(vs ...any) []*Literal {
	out := make([]*Literal, len(vs))
	for i, v := range vs {
		out[i] = lit(v)
	}
	return out
}

// oneColumn is a batch of one nullable column "x" of type dt, from JSON.
func oneColumn(t testing.TB, mem memory.Allocator, dt arrow.DataType, js string) arrow.RecordBatch {
	t.Helper()
	arr, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
	if err != nil {
		t.Fatalf("%s from %s: %v", dt, js, err)
	}
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt, Nullable: true}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
}

// truth renders a boolean array as one letter a row: T, F, or N for null.
func truthText(a arrow.Array) string {
	b := a.(*array.Boolean)
	var sb strings.Builder
	for i := range b.Len() {
		switch {
		case b.IsNull(i):
			sb.WriteByte('N')
		case b.Value(i):
			sb.WriteByte('T')
		default:
			sb.WriteByte('F')
		}
	}
	return sb.String()
}

// evalTruth binds e against rec's schema and evaluates it, with a checked
// allocator that must end empty.
func evalTruth(t *testing.T, rec arrow.RecordBatch, e Expr) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p, err := Bind(e, rec.Schema())
	if err != nil {
		t.Fatalf("Bind(%s): %v", e, err)
	}
	out, err := p.Eval(context.Background(), rec, mem)
	if err != nil {
		t.Fatalf("Eval(%s): %v", e, err)
	}
	defer out.Release()
	if out.Len() != int(rec.NumRows()) {
		t.Fatalf("Eval(%s): %d rows, want %d", e, out.Len(), rec.NumRows())
	}
	return truthText(out)
}

func micros(s string) int64 {
	tm, err := time.Parse("2006-01-02 15:04:05.999999", s)
	if err != nil {
		panic(err)
	}
	return tm.UnixMicro()
}

type typeCase struct {
	name string
	dt   arrow.DataType
	data string
	expr Expr
	want string
}

var x = col("x")

var typeCases = []typeCase{
	{"decimal is null", &arrow.Decimal128Type{Precision: 9, Scale: 2}, `["1.5", null, "2"]`, &IsNull{Term: x}, "FTF"},
	{"decimal is not null", &arrow.Decimal128Type{Precision: 9, Scale: 2}, `["1.5", null, "2"]`, &IsNull{Term: x, Negated: true}, "TFT"},
	{"int is not null, none null", arrow.PrimitiveTypes.Int32, `[1, 2]`, &IsNull{Term: x, Negated: true}, "TT"},
	{"bool <", arrow.FixedWidthTypes.Boolean, `[true, false, null]`, cmpOp(Lt, x, lit(true)), "FTN"},
	{"bool >=", arrow.FixedWidthTypes.Boolean, `[true, false, null]`, cmpOp(Ge, x, lit(false)), "TTN"},
	{"int8 >", arrow.PrimitiveTypes.Int8, `[1, -128, 127, null]`, cmpOp(Gt, x, lit(Number("0"))), "TFTN"},
	{"int8 = min", arrow.PrimitiveTypes.Int8, `[1, -128, 127, null]`, cmpOp(Eq, x, lit(Number("-128"))), "FTFN"},
	{"int16 literal left", arrow.PrimitiveTypes.Int16, `[1, 5, null]`, cmpOp(Lt, lit(Number("3")), x), "FTN"},
	{"int32 <=", arrow.PrimitiveTypes.Int32, `[1, 2, 3]`, cmpOp(Le, x, lit(Number("2"))), "TTF"},
	{"int64 exponent", arrow.PrimitiveTypes.Int64, `[10000000000, 1]`, cmpOp(Eq, x, lit(Number("1e10"))), "TF"},
	{"uint8 >=", arrow.PrimitiveTypes.Uint8, `[0, 255, null]`, cmpOp(Ge, x, lit(Number("255"))), "FTN"},
	{"uint64 max", arrow.PrimitiveTypes.Uint64, `[0, 18446744073709551615]`, cmpOp(Eq, x, lit(Number("18446744073709551615"))), "FT"},
	{"float32 decimal", arrow.PrimitiveTypes.Float32, `[0.1, 0.2, null]`, cmpOp(Eq, x, lit(Number("0.1"))), "TFN"},
	{"float64 zero signs", arrow.PrimitiveTypes.Float64, `[-0.0, 0.0, 1]`, cmpOp(Eq, x, lit(Number("0"))), "TTF"},
	{"float64 NaN <", arrow.PrimitiveTypes.Float64, `["NaN", 1, null]`, cmpOp(Lt, x, lit(Number("2"))), "FTN"},
	{"float64 NaN >", arrow.PrimitiveTypes.Float64, `["NaN", 1, null]`, cmpOp(Gt, x, lit(Number("0"))), "FTN"},
	{"float64 NaN = NaN", arrow.PrimitiveTypes.Float64, `["NaN", 1, null]`, cmpOp(Eq, x, lit(Number("NaN"))), "FFN"},
	{"float64 NaN != NaN", arrow.PrimitiveTypes.Float64, `["NaN", 1, null]`, cmpOp(Ne, x, lit(Number("NaN"))), "TTN"},
	{"float32 NaN != 1", arrow.PrimitiveTypes.Float32, `["NaN", 1, null]`, cmpOp(Ne, x, lit(Number("1"))), "TFN"},
	{"float64 inf", arrow.PrimitiveTypes.Float64, `["Inf", 1]`, cmpOp(Gt, x, lit(Number("1e308"))), "TF"},
	{"decimal128", &arrow.Decimal128Type{Precision: 5, Scale: 2}, `["1.25", "-3.00", null]`, cmpOp(Gt, x, lit(Number("1.2"))), "TFN"},
	{"decimal128 =", &arrow.Decimal128Type{Precision: 5, Scale: 2}, `["1.25", "-3.00", null]`, cmpOp(Eq, x, lit(Number("-3"))), "FTN"},
	{"decimal256", &arrow.Decimal256Type{Precision: 40, Scale: 3}, `["123456789012345678901234567890.125", "1"]`,
		cmpOp(Ge, x, lit(Number("123456789012345678901234567890.125"))), "TF"},
	{"date32 date", arrow.FixedWidthTypes.Date32, `["2026-01-31", "2026-02-01", null]`, cmpOp(Eq, x, lit(Date("2026-01-31"))), "TFN"},
	{"date32 string", arrow.FixedWidthTypes.Date32, `["2026-01-31", "2026-02-01", null]`, cmpOp(Gt, x, lit("2026-01-31")), "FTN"},
	{"date64 date", arrow.FixedWidthTypes.Date64, `["2026-01-31", "2026-02-01"]`, cmpOp(Lt, x, lit(Date("2026-02-01"))), "TF"},
	{"date32 midnight timestamp", arrow.FixedWidthTypes.Date32, `["2026-01-31", "2026-02-01"]`, cmpOp(Eq, x, lit(Timestamp("2026-02-01 00:00:00"))), "FT"},
	{"timestamp[s] naive", &arrow.TimestampType{Unit: arrow.Second},
		fmt.Sprintf(`[%d, %d]`, micros("2026-01-31 12:00:00")/1e6, micros("2026-01-31 12:00:01")/1e6),
		cmpOp(Eq, x, lit(Timestamp("2026-01-31 12:00:00"))), "TF"},
	{"timestamp[ms] date is midnight", &arrow.TimestampType{Unit: arrow.Millisecond},
		fmt.Sprintf(`[%d, %d]`, micros("2026-01-31 00:00:00")/1e3, micros("2026-01-30 23:59:59.999")/1e3),
		cmpOp(Ge, x, lit(Date("2026-01-31"))), "TF"},
	{"timestamp[us] fraction", &arrow.TimestampType{Unit: arrow.Microsecond},
		fmt.Sprintf(`[%d, %d]`, micros("2026-01-31 12:00:00.123456"), micros("2026-01-31 12:00:00.123457")),
		cmpOp(Eq, x, lit(Timestamp("2026-01-31T12:00:00.123456"))), "TF"},
	{"timestamp[ns] string", &arrow.TimestampType{Unit: arrow.Nanosecond},
		fmt.Sprintf(`[%d, %d]`, micros("2026-01-31 12:00:00")*1000, micros("2026-01-31 12:00:00")*1000+1),
		cmpOp(Gt, x, lit("2026-01-31 12:00:00")), "FT"},
	{"timestamp[us, UTC] zoned", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		fmt.Sprintf(`[%d, %d]`, micros("2026-01-31 10:00:00"), micros("2026-01-31 12:00:00")),
		cmpOp(Eq, x, lit(Timestamp("2026-01-31 12:00:00+02:00"))), "TF"},
	{"timestamp[us, Europe/Paris] IANA", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"},
		fmt.Sprintf(`[%d, %d]`, micros("2026-07-01 10:00:00"), micros("2026-07-01 12:00:00")),
		cmpOp(Eq, x, lit(Timestamp("2026-07-01 12:00:00 Europe/Paris"))), "TF"},
	{"timestamp[s, +05:00] naive literal is UTC", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "+05:00"},
		fmt.Sprintf(`[%d, %d]`, micros("2026-01-31 12:00:00")/1e6, micros("2026-01-31 07:00:00")/1e6),
		cmpOp(Eq, x, lit(Timestamp("2026-01-31 12:00:00"))), "TF"},
	{"timestamp[ms, UTC] Z", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"},
		fmt.Sprintf(`[%d, null]`, micros("2026-01-31 12:00:00")/1e3),
		cmpOp(Le, x, lit(Timestamp("2026-01-31T12:00:00Z"))), "TN"},
	{"utf8 bytes order", arrow.BinaryTypes.String, `["a", "B", "é", null, ""]`, cmpOp(Gt, x, lit("Z")), "TFTNF"},
	{"utf8 =", arrow.BinaryTypes.String, `["a", "b", null]`, cmpOp(Eq, x, lit("b")), "FTN"},
	{"large_utf8", arrow.BinaryTypes.LargeString, `["a", "b", null]`, cmpOp(Ne, x, lit("b")), "TFN"},
	{"string_view", arrow.BinaryTypes.StringView, `["short", "a value longer than twelve", null]`, cmpOp(Eq, x, lit("a value longer than twelve")), "FTN"},
	{"binary", arrow.BinaryTypes.Binary, `["YWJj", "AP8=", null]`, cmpOp(Eq, x, lit([]byte{0, 0xff})), "FTN"},
	{"binary string literal", arrow.BinaryTypes.Binary, `["YWJj", "AP8=", null]`, cmpOp(Eq, x, lit("abc")), "TFN"},
	{"large_binary", arrow.BinaryTypes.LargeBinary, `["YWJj", "AP8="]`, cmpOp(Lt, x, lit([]byte{1})), "FT"},
	{"binary_view", arrow.BinaryTypes.BinaryView, `["YWJj", "AP8="]`, cmpOp(Gt, x, lit([]byte("abb"))), "TF"},
	{"bool =", arrow.FixedWidthTypes.Boolean, `[true, false, null]`, cmpOp(Eq, x, lit(true)), "TFN"},
	{"bool alone", arrow.FixedWidthTypes.Boolean, `[true, false, null]`, x, "TFN"},
	{"dictionary<utf8>", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
		`["a", null, "b", "a"]`, cmpOp(Eq, x, lit("a")), "TNFT"},
	{"dictionary<utf8> IN", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String},
		`["a", null, "b", "c"]`, &In{Term: x, Values: lits("b", "c")}, "FNTT"},
	{"dictionary<int32>", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Int32},
		`[5, 7, null]`, cmpOp(Gt, x, lit(Number("6"))), "FTN"},
	{"null literal", arrow.PrimitiveTypes.Int32, `[1, null]`, cmpOp(Eq, x, lit(nil)), "NN"},
	{"typed int64 vs int32", arrow.PrimitiveTypes.Int32, `[42, 1]`, cmpOp(Eq, x, lit(scalar.NewInt64Scalar(42))), "TF"},
	{"typed float64 vs float32 exact", arrow.PrimitiveTypes.Float32, `[0.5, 1]`, cmpOp(Eq, x, lit(scalar.NewFloat64Scalar(0.5))), "TF"},
	{"typed string vs utf8", arrow.BinaryTypes.LargeString, `["a", "b"]`, cmpOp(Eq, x, lit(scalar.NewStringScalar("b"))), "FT"},
	{"typed date32 vs timestamp", &arrow.TimestampType{Unit: arrow.Second},
		fmt.Sprintf(`[%d, 1]`, micros("2026-01-31 00:00:00")/1e6),
		cmpOp(Eq, x, lit(scalar.NewDate32Scalar(arrow.Date32(micros("2026-01-31 00:00:00")/86400e6)))), "TF"},
	{"is null", arrow.PrimitiveTypes.Int32, `[1, null]`, &IsNull{Term: x}, "FT"},
	{"is not null", arrow.BinaryTypes.String, `["a", null]`, &IsNull{Term: x, Negated: true}, "TF"},
	{"is null of a comparison", arrow.PrimitiveTypes.Int32, `[1, null]`, &IsNull{Term: cmpOp(Gt, x, lit(Number("0")))}, "FT"},
	{"literal IS NULL folds", arrow.PrimitiveTypes.Int32, `[1, null]`, &IsNull{Term: lit(nil)}, "TT"},
	{"1 = 1 folds", arrow.PrimitiveTypes.Int32, `[1, null]`, cmpOp(Eq, lit(Number("1")), lit(Number("1.0"))), "TT"},
}

func TestCompareTypes(t *testing.T) {
	for _, c := range typeCases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := oneColumn(t, mem, c.dt, c.data)
			defer rec.Release()
			if got := evalTruth(t, rec, c.expr); got != c.want {
				t.Errorf("%s on %s %s = %s, want %s", c.expr, c.dt, c.data, got, c.want)
			}
		})
	}
}

// TestKleene checks AND, OR and NOT on every pair of true, false, unknown.
func TestKleene(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ab := arrow.FixedWidthTypes.Boolean
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ab, Nullable: true}, {Name: "b", Type: ab, Nullable: true}}, nil)
	a, _, _ := array.FromJSON(mem, ab, strings.NewReader(`[true, true, true, false, false, false, null, null, null]`))
	b, _, _ := array.FromJSON(mem, ab, strings.NewReader(`[true, false, null, true, false, null, true, false, null]`))
	rec := array.NewRecordBatch(schema, []arrow.Array{a, b}, 9)
	a.Release()
	b.Release()
	defer rec.Release()
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{&And{Terms: []Expr{col("a"), col("b")}}, "TFNFFFNFN"},
		{&Or{Terms: []Expr{col("a"), col("b")}}, "TTTTFNTNN"},
		{&Not{Term: col("a")}, "FFFTTTNNN"},
		{&Not{Term: &And{Terms: []Expr{col("a"), col("b")}}}, "FTNTTTNTN"},
		{&And{Terms: []Expr{col("a"), col("b"), lit(nil)}}, "NFNFFFNFN"},
		{&Or{Terms: []Expr{col("a"), lit(true)}}, "TTTTTTTTT"},
		{&And{}, "TTTTTTTTT"},
		{&Or{}, "FFFFFFFFF"},
		{lit(nil), "NNNNNNNNN"},
		{&IsNull{Term: &And{Terms: []Expr{col("a"), col("b")}}}, "FFTFFFTFT"},
	} {
		if got := evalTruth(t, rec, c.e); got != c.want {
			t.Errorf("%s = %s, want %s", c.e, got, c.want)
		}
	}
}

func TestIn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ints := oneColumn(t, mem, arrow.PrimitiveTypes.Int32, `[1, 2, null]`)
	defer ints.Release()
	floats := oneColumn(t, mem, arrow.PrimitiveTypes.Float64, `["NaN", -0.0, 1, null]`)
	defer floats.Release()
	bools := oneColumn(t, mem, arrow.FixedWidthTypes.Boolean, `[true, false, null]`)
	defer bools.Release()
	strs := oneColumn(t, mem, arrow.BinaryTypes.String, `["a", "b", null]`)
	defer strs.Release()
	in := func(nulls NullSemantics, neg bool, vs ...any) Expr {
		return &In{Term: x, Values: lits(vs...), Negated: neg, Nulls: nulls}
	}
	for _, c := range []struct {
		rec  arrow.RecordBatch
		e    Expr
		want string
	}{
		{ints, in(SQLNulls, false, Number("1")), "TFN"},
		{ints, in(SQLNulls, false, Number("1"), nil), "TNN"},
		{ints, in(SQLNulls, true, Number("1")), "FTN"},
		{ints, in(SQLNulls, true, Number("1"), nil), "FNN"},
		{ints, in(SQLNulls, false), "FFN"},
		{ints, in(ArrowNulls, false, Number("1")), "TFF"},
		{ints, in(ArrowNulls, false, Number("1"), nil), "TFT"},
		{ints, in(ArrowNulls, true, Number("1")), "FTT"},
		{ints, in(ArrowNulls, true, Number("1"), nil), "FTF"},
		{floats, in(SQLNulls, false, Number("NaN"), Number("0")), "FTFN"},
		{floats, in(SQLNulls, false, Number("1")), "FFTN"},
		{floats, in(ArrowNulls, false, Number("NaN")), "TFFF"},
		{bools, in(SQLNulls, false, true), "TFN"},
		{bools, in(SQLNulls, false, false, nil), "NTN"},
		{bools, in(ArrowNulls, false, nil), "FFT"},
		{strs, in(SQLNulls, false, "b", "c"), "FTN"},
		{strs, in(ArrowNulls, true, "b"), "TFT"},
	} {
		if got := evalTruth(t, c.rec, c.e); got != c.want {
			t.Errorf("%s on %s = %s, want %s", c.e, c.rec.Column(0), got, c.want)
		}
	}
}

// TestStructFields reads fields inside structs, where a null struct makes
// its fields null even when the child array holds a value there.
func TestStructFields(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := structBatch(t, mem)
	defer rec.Release()
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{cmpOp(Gt, col("s", "a"), lit(Number("1"))), "FNTN"},
		{&IsNull{Term: col("s", "a")}, "FTFT"},
		{cmpOp(Eq, col("s", "t", "c"), lit("z")), "TNFN"},
		{&IsNull{Term: col("s")}, "FTFF"},
	} {
		if got := evalTruth(t, rec, c.e); got != c.want {
			t.Errorf("%s = %s, want %s", c.e, got, c.want)
		}
	}
	sliced := rec.NewSlice(1, 4)
	defer sliced.Release()
	if got := evalTruth(t, sliced, cmpOp(Gt, col("s", "a"), lit(Number("1")))); got != "NTN" {
		t.Errorf("sliced: %s, want NTN", got)
	}
}

// structBatch is s: struct<a: int32, t: struct<c: utf8>> with rows
// {1,{z}}, null (children 5 and {y}), {3,{x}}, {null,{null}}.
func structBatch(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	a, _, _ := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(`[1, 5, 3, null]`))
	defer a.Release()
	c, _, _ := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["z", "y", "x", null]`))
	defer c.Release()
	inner, err := array.NewStructArray([]arrow.Array{c}, []string{"c"})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Release()
	valid := memory.NewResizableBuffer(mem)
	defer valid.Release()
	valid.Resize(1)
	valid.Bytes()[0] = 0b1101
	s, err := array.NewStructArrayWithNulls([]arrow.Array{a, inner}, []string{"a", "t"}, valid, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: s.DataType(), Nullable: true}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{s}, 4)
}

// TestAbsentColumns: a column the bound schema has and the batch lacks
// (a file written before it was added) reads as nulls.
func TestAbsentColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "gone", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "new", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
	}, nil)
	rec := oneColumn(t, mem, arrow.PrimitiveTypes.Int32, `[1, 2]`)
	defer rec.Release()
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{cmpOp(Eq, col("gone"), lit("a")), "NN"},
		{&IsNull{Term: col("gone")}, "TT"},
		{&In{Term: col("gone"), Values: lits("a"), Nulls: ArrowNulls}, "FF"},
		{&Like{Term: col("gone"), Pattern: "a%"}, "NN"},
		{&Or{Terms: []Expr{cmpOp(Eq, col("x"), lit(Number("1"))), cmpOp(Eq, col("gone"), lit("a"))}}, "TN"},
	} {
		p, err := Bind(c.e, schema)
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.Eval(context.Background(), rec, mem)
		if err != nil {
			t.Fatalf("%s: %v", c.e, err)
		}
		if got := truthText(out); got != c.want {
			t.Errorf("%s = %s, want %s", c.e, got, c.want)
		}
		out.Release()
	}
}

func TestFilter(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := oneColumn(t, mem, arrow.PrimitiveTypes.Int32, `[1, 2, null, 4]`)
	defer rec.Release()
	for _, c := range []struct {
		e    Expr
		want string
		same bool
	}{
		{cmpOp(Gt, x, lit(Number("1"))), "[2 4]", false},
		{&Or{Terms: []Expr{&IsNull{Term: x}, cmpOp(Gt, x, lit(Number("0")))}}, "[1 2 (null) 4]", true},
		{cmpOp(Gt, x, lit(Number("9"))), "[]", false},
		{lit(nil), "[]", false},
	} {
		p, err := Bind(c.e, rec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.Filter(context.Background(), rec, mem)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(out.Column(0)); got != c.want {
			t.Errorf("Filter(%s) = %s, want %s", c.e, got, c.want)
		}
		if !out.Schema().Equal(rec.Schema()) {
			t.Errorf("Filter(%s) schema %s", c.e, out.Schema())
		}
		if (out == rec) != c.same {
			t.Errorf("Filter(%s) returned rec itself: %v", c.e, out == rec)
		}
		out.Release()
	}
}

func TestEvalCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := oneColumn(t, mem, arrow.PrimitiveTypes.Int32, `[1, 2]`)
	defer rec.Release()
	p, err := Bind(&And{Terms: []Expr{cmpOp(Gt, x, lit(Number("0"))), cmpOp(Lt, x, lit(Number("5")))}}, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Eval(ctx, rec, mem); err != context.Canceled {
		t.Errorf("Eval on a cancelled ctx: %v", err)
	}
}

func TestColumnComparisons(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	mk := func(dt arrow.DataType, js string) arrow.Array {
		a, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	cols := []arrow.Array{
		mk(arrow.PrimitiveTypes.Int32, `[1, 2, null]`),
		mk(arrow.PrimitiveTypes.Int64, `[1, 1, 1]`),
		mk(arrow.PrimitiveTypes.Uint32, `[1, 3, 0]`),
		mk(arrow.BinaryTypes.String, `["a", "b", "c"]`),
		mk(arrow.BinaryTypes.LargeString, `["a", "a", "c"]`),
	}
	var fields []arrow.Field
	for i, c := range cols {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: c.DataType(), Nullable: true})
		defer c.Release()
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 3)
	defer rec.Release()
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{cmpOp(Eq, col("c0"), col("c1")), "TFN"},
		{cmpOp(Lt, col("c0"), col("c2")), "FTN"},
		{cmpOp(Eq, col("c3"), col("c4")), "TFT"},
	} {
		if got := evalTruth(t, rec, c.e); got != c.want {
			t.Errorf("%s = %s, want %s", c.e, got, c.want)
		}
	}
}

func benchBatch(b *testing.B, mem memory.Allocator) arrow.RecordBatch {
	const n = 64 << 10
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	for i := range n {
		ib.Append(int64(i))
		sb.Append(fmt.Sprintf("user-%06d@example.com", i*7919%n))
	}
	ia, sa := ib.NewArray(), sb.NewArray()
	defer ia.Release()
	defer sa.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: ia.DataType()}, {Name: "s", Type: sa.DataType()}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{ia, sa}, n)
}

func benchEval(b *testing.B, e Expr) {
	mem := memory.NewGoAllocator()
	rec := benchBatch(b, mem)
	defer rec.Release()
	p, err := Bind(e, rec.Schema())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out, err := p.Eval(context.Background(), rec, mem)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.SetBytes(rec.NumRows())
}

// BenchmarkCompare evaluates `i < 32768` over 64k int64 rows:
// go test -run '^$' -bench . -count 10 ./scanner/filter/ | benchstat -
func BenchmarkCompare(b *testing.B) { benchEval(b, cmpOp(Lt, col("i"), lit(Number("32768")))) }

// BenchmarkAnd is two comparisons and a Kleene AND over 64k rows.
func BenchmarkAnd(b *testing.B) {
	benchEval(b, &And{Terms: []Expr{cmpOp(Ge, col("i"), lit(Number("100"))), cmpOp(Lt, col("i"), lit(Number("32768")))}})
}

// BenchmarkIn is an IN of 100 values over 64k int64 rows.
func BenchmarkIn(b *testing.B) {
	vals := make([]*Literal, 100)
	for i := range vals {
		vals[i] = lit(Number(fmt.Sprint(i * 13)))
	}
	benchEval(b, &In{Term: col("i"), Values: vals})
}

// TestCompareOracle checks every comparison against Go's own operators on
// long arrays (the kernels switch to SIMD loops past a few dozen rows),
// with NaN, signed zeros and nulls, at an unaligned offset.
func TestCompareOracle(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	specials := []float64{math.NaN(), 0, math.Copysign(0, -1), 1, -1, 2.5, math.Inf(1)}
	fb := array.NewFloat64Builder(mem)
	defer fb.Release()
	var vals []float64
	var valid []bool
	for i := range 1000 {
		v := specials[(i*7+i/3)%len(specials)]
		ok := i%11 != 0
		vals, valid = append(vals, v), append(valid, ok)
		if ok {
			fb.Append(v)
		} else {
			fb.AppendNull()
		}
	}
	arr := fb.NewArray()
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arr.DataType(), Nullable: true}}, nil)
	full := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	defer full.Release()
	rec := full.NewSlice(3, 1000)
	defer rec.Release()
	vals, valid = vals[3:], valid[3:]
	ops := map[CompareOp]func(a, b float64) bool{
		Eq: func(a, b float64) bool { return a == b }, Ne: func(a, b float64) bool { return a != b },
		Lt: func(a, b float64) bool { return a < b }, Le: func(a, b float64) bool { return a <= b },
		Gt: func(a, b float64) bool { return a > b }, Ge: func(a, b float64) bool { return a >= b },
	}
	for op, fn := range ops {
		for _, litText := range []string{"NaN", "0", "-0", "1", "2.5", "Inf"} {
			l, _ := strconv.ParseFloat(litText, 64)
			var want strings.Builder
			for i, v := range vals {
				switch {
				case !valid[i]:
					want.WriteByte('N')
				case fn(v, l):
					want.WriteByte('T')
				default:
					want.WriteByte('F')
				}
			}
			if got := evalTruth(t, rec, cmpOp(op, x, lit(Number(litText)))); got != want.String() {
				t.Errorf("x %s %s:\n got %s\nwant %s", op, litText, got, want.String())
			}
		}
	}
}

// TestBatchTypeDiffers: a batch whose column is encoded differently from
// the bound schema (dictionary or large_utf8 for utf8) still evaluates.
func TestBatchTypeDiffers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	p, err := Bind(&In{Term: x, Values: lits("b")}, schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []arrow.DataType{
		arrow.BinaryTypes.LargeString,
		arrow.BinaryTypes.StringView,
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.BinaryTypes.String},
	} {
		rec := oneColumn(t, mem, dt, `["a", "b", null]`)
		out, err := p.Eval(context.Background(), rec, mem)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		if got := truthText(out); got != "FTN" {
			t.Errorf("%s: %s", dt, got)
		}
		out.Release()
		rec.Release()
	}
}

// TestDictionary covers both dictionary paths: tests run once per entry
// and taken by the indices (dictionary no larger than the batch), or on
// the decoded rows; a null may sit in the indices or in the dictionary.
func TestDictionary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	dict, _, _ := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["apple", null, "banana"]`))
	defer dict.Release()
	idx, _, _ := array.FromJSON(mem, arrow.PrimitiveTypes.Int8, strings.NewReader(`[0, 1, null, 2, 0, 2]`))
	defer idx.Release()
	da := array.NewDictionaryArray(dt, idx, dict)
	defer da.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{da}, 6)
	defer rec.Release()
	small := rec.NewSlice(1, 3) // 2 rows over a 3-entry dictionary: decoded path
	defer small.Release()
	for _, c := range []struct {
		e           Expr
		want, small string
	}{
		{cmpOp(Eq, x, lit("apple")), "TNNFTF", "NN"},
		{cmpOp(Ne, x, lit("apple")), "FNNTFT", "NN"},
		{&IsNull{Term: x}, "FTTFFF", "TT"},
		{&In{Term: x, Values: lits("banana")}, "FNNTFT", "NN"},
		{&In{Term: x, Values: lits("banana", nil)}, "NNNTNT", "NN"},
		{&In{Term: x, Values: lits("banana"), Negated: true}, "TNNFTF", "NN"},
		{&In{Term: x, Values: lits(nil), Nulls: ArrowNulls}, "FTTFFF", "TT"},
		{&In{Term: x, Values: lits("apple"), Nulls: ArrowNulls, Negated: true}, "FTTTFT", "TT"},
		{&Like{Term: x, Pattern: "%an%"}, "FNNTFT", "NN"},
		{&Like{Term: x, Pattern: "%an%", Negated: true}, "TNNFTF", "NN"},
		{&StartsWith{Term: x, Prefix: "app"}, "TNNFTF", "NN"},
	} {
		if got := evalTruth(t, rec, c.e); got != c.want {
			t.Errorf("%s = %s, want %s", c.e, got, c.want)
		}
		if got := evalTruth(t, small, c.e); got != c.small {
			t.Errorf("rows 1-2: %s = %s, want %s", c.e, got, c.small)
		}
	}
}

func TestEmptyBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := oneColumn(t, mem, arrow.BinaryTypes.String, `[]`)
	defer rec.Release()
	for _, e := range []Expr{
		cmpOp(Eq, x, lit("a")), &Like{Term: x, Pattern: "a%"}, &In{Term: x, Values: lits("a")}, lit(true),
		&And{Terms: []Expr{&IsNull{Term: x}, &Not{Term: cmpOp(Gt, x, lit("b"))}}},
	} {
		if got := evalTruth(t, rec, e); got != "" {
			t.Errorf("%s = %q on no rows", e, got)
		}
		p, _ := Bind(e, rec.Schema())
		out, err := p.Filter(context.Background(), rec, mem)
		if err != nil || out.NumRows() != 0 {
			t.Errorf("Filter(%s) = %v, %v", e, out, err)
		}
		out.Release()
	}
}

// TestEvalErrorReleases: an error halfway through (a batch value that does
// not fit the bound type) leaves nothing allocated.
func TestEvalErrorReleases(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	p, err := Bind(&And{Terms: []Expr{&IsNull{Term: x, Negated: true}, cmpOp(Gt, x, lit(Number("1")))}}, schema)
	if err != nil {
		t.Fatal(err)
	}
	rec := oneColumn(t, mem, arrow.PrimitiveTypes.Int64, `[1, 10000000000]`)
	defer rec.Release()
	if out, err := p.Eval(context.Background(), rec, mem); err == nil {
		out.Release()
		t.Fatal("int64 batch value beyond the bound int32: no error")
	}
}

// BenchmarkInLarge is an IN of 100,000 values over 64k int64 rows: the list
// a join's build side pushes down.
func BenchmarkInLarge(b *testing.B) {
	vals := make([]*Literal, 100_000)
	for i := range vals {
		vals[i] = lit(Number(fmt.Sprint(i * 13)))
	}
	benchEval(b, &In{Term: col("i"), Values: vals})
}
