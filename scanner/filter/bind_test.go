package filter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

var bindSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 5, Scale: 2}, Nullable: true},
	{Name: "dec256", Type: &arrow.Decimal256Type{Precision: 40, Scale: 0}, Nullable: true},
	{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
	{Name: "ts_s", Type: &arrow.TimestampType{Unit: arrow.Second}, Nullable: true},
	{Name: "ts_ms_utc", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ts_ns_utc", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "str", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "lstr", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "vstr", Type: arrow.BinaryTypes.StringView, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "s", Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "t", Type: arrow.StructOf(arrow.Field{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	), Nullable: true},
	{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
}, nil)

// boundLiteral binds `column = v` and returns the literal's scalar.
func boundLiteral(t *testing.T, column string, v any) (scalar.Scalar, error) {
	t.Helper()
	p, err := Bind(cmpOp(Eq, col(strings.Split(column, ".")...), lit(v)), bindSchema)
	if err != nil {
		return nil, err
	}
	return p.Expr().(*Compare).Right.(*Literal).Value.(scalar.Scalar), nil
}

// TestCoercions is the coercion table: literal kinds against column types,
// with the scalar each becomes (type and value as arrow-go prints them).
func TestCoercions(t *testing.T) {
	for _, c := range []struct {
		column string
		v      any
		typ    string
		val    string
	}{
		{"i8", Number("-128"), "int8", "-128"},
		{"i8", Number("1.0"), "int8", "1"},
		{"i32", Number("1e3"), "int32", "1000"},
		{"u64", Number("18446744073709551615"), "uint64", "18446744073709551615"},
		{"i64", scalar.NewInt32Scalar(7), "int64", "7"},
		{"i32", scalar.NewInt64Scalar(42), "int32", "42"},
		{"i32", scalar.NewFloat64Scalar(3), "int32", "3"},
		{"f32", Number("0.1"), "float32", "0.1"},
		{"f64", Number("-2.5e-3"), "float64", "-0.0025"},
		{"f64", Number("NaN"), "float64", "NaN"},
		{"f64", scalar.NewInt64Scalar(1 << 53), "float64", "9.007199254740992e+15"},
		{"f32", scalar.NewFloat64Scalar(0.5), "float32", "0.5"},
		{"dec", Number("1.5"), "decimal(5, 2)", "1.5"},
		{"dec", Number("-999.99"), "decimal(5, 2)", "-999.99"},
		{"dec", scalar.NewInt8Scalar(3), "decimal(5, 2)", "3"},
		{"dec256", Number("1234567890123456789012345678901234567890"), "decimal256(40, 0)", "1234567890123456789012345678901234567890"},
		{"d32", Date("2026-01-31"), "date32", "2026-01-31"},
		{"d32", "2026-01-31", "date32", "2026-01-31"},
		{"d32", Timestamp("2026-01-31 00:00:00"), "date32", "2026-01-31"},
		{"d64", Date("1969-12-31"), "date64", "1969-12-31"},
		{"ts_s", Date("2026-01-31"), "timestamp[s]", "2026-01-31 00:00:00"},
		{"ts_s", Timestamp("2026-01-31 12:34:56.000"), "timestamp[s]", "2026-01-31 12:34:56"},
		{"ts_ms_utc", Timestamp("2026-01-31 12:00:00+02:00"), "timestamp[ms, tz=UTC]", "2026-01-31 10:00:00Z"},
		{"ts_ms_utc", Timestamp("2026-01-31T12:00:00.5Z"), "timestamp[ms, tz=UTC]", "2026-01-31 12:00:00.5Z"},
		{"ts_ms_utc", Timestamp("2026-01-31 12:00 America/New_York"), "timestamp[ms, tz=UTC]", "2026-01-31 17:00:00Z"},
		{"ts_ms_utc", Date("2026-01-31"), "timestamp[ms, tz=UTC]", "2026-01-31 00:00:00Z"},
		{"ts_us", "2026-01-31 12:00:00.123456", "timestamp[us]", "2026-01-31 12:00:00.123456"},
		{"ts_ns_utc", Timestamp("1969-12-31 23:59:59.999999999"), "timestamp[ns, tz=UTC]", "1969-12-31 23:59:59.999999999Z"},
		{"ts_us", scalar.NewDate32Scalar(1), "timestamp[us]", "1970-01-02 00:00:00"},
		{"str", "é", "utf8", "é"},
		{"lstr", "x", "large_utf8", "x"},
		{"vstr", "x", "utf8", "x"},
		{"dict", "x", "utf8", "x"},
		{"bin", []byte{0, 1}, "binary", "\x00\x01"},
		{"bin", "ab", "binary", "ab"},
		{"fsb", []byte("ab"), "fixed_size_binary[2]", "ab"},
		{"str", []byte("ok"), "utf8", "ok"},
		{"b", true, "bool", "true"},
		{"b", scalar.NewBooleanScalar(false), "bool", "false"},
		{"s.a", Number("5"), "int32", "5"},
		{"s.t.c", "z", "utf8", "z"},
		{"i32", nil, "int32", "null"},
		{"dict", nil, "utf8", "null"},
		{"i32", scalar.MakeNullScalar(arrow.BinaryTypes.String), "int32", "null"},
	} {
		t.Run(fmt.Sprintf("%s=%v", c.column, c.v), func(t *testing.T) {
			sc, err := boundLiteral(t, c.column, c.v)
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.DataType().String(); got != c.typ {
				t.Errorf("type %s, want %s", got, c.typ)
			}
			if got := sc.String(); got != c.val {
				t.Errorf("value %q, want %q", got, c.val)
			}
		})
	}
}

// TestCoercionErrors: literals that would change meaning, or that the
// column's type cannot hold, are *Errors naming the column and both types.
func TestCoercionErrors(t *testing.T) {
	for _, c := range []struct {
		column string
		v      any
		want   string
	}{
		{"i32", Number("NaN"), `column "i32" (int32)`},
		{"i32", "abc", `cannot compare column "i32" (int32) with 'abc' (string)`},
		{"i32", "42", `cannot compare column "i32" (int32) with '42' (string)`},
		{"i32", true, `cannot compare column "i32" (int32) with TRUE (boolean)`},
		{"f32", Number("1e39"), "out of range for column f32 (float32)"},
		{"f32", scalar.NewFloat64Scalar(0.1), `has no exact value in column "f32" (float32)`},
		{"f64", scalar.NewInt64Scalar(1<<53 + 1), `has no exact value in column "f64" (float64)`},
		{"f64", "1.5", `cannot compare column "f64" (float64) with '1.5' (string)`},
		{"d32", Timestamp("2026-01-31 00:00:00Z"), `names an instant, but column "d32" (date32) holds calendar dates`},
		{"d32", Date("2026-02-30"), "no such date"},
		{"d32", Date("2026-1-5"), "not a date; write YYYY-MM-DD"},
		{"d32", "yesterday", "not a date"},
		{"d32", Number("20260131"), `cannot compare column "d32" (date32) with 20260131 (number)`},
		{"ts_s", Timestamp("2026-01-31 12:00:00+02:00"), `names an instant, but column "ts_s" (timestamp[s]) has no time zone`},
		{"ts_s", Timestamp("2026-01-31 25:00:00"), "no such date or time of day"},
		{"ts_s", Timestamp("2026-01-31 12:00:00 Mars/Olympus"), `unknown time zone "Mars/Olympus"`},
		{"ts_s", Timestamp("2026-01-31 12:00:00 Local"), "zone Local is the server's"},
		{"ts_us", Timestamp("2026-01-31 12:00:00.0000000001"), "more than nanosecond precision"},
		{"str", Number("1"), `cannot compare column "str" (utf8) with 1 (number)`},
		{"str", []byte{0xff}, `is not UTF-8, and column "str" (utf8) holds only UTF-8`},
		{"fsb", []byte("abc"), `is 3 bytes, but column "fsb" (fixed_size_binary[2]) holds 2-byte values`},
		{"dict", Number("1"), `cannot compare column "dict" (dictionary<values=utf8, indices=int32, ordered=false>) with 1 (number)`},
		{"b", Number("1"), `cannot compare column "b" (bool) with 1 (number)`},
		{"l", Number("1"), `column "l" (list<item: int32, nullable>) cannot be compared`},
		{"s", Number("1"), `column "s" (struct<a: int32 nullable, t: struct<c: utf8 nullable> nullable>) cannot be compared`},
		{"i32", scalar.NewStringScalar("abc"), `cannot compare column "i32" (int32) with 'abc' (utf8)`},
		{"ts_s", scalar.NewTimestampScalar(0, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}), `has no time zone`},
	} {
		t.Run(fmt.Sprintf("%s=%v", c.column, c.v), func(t *testing.T) {
			_, err := boundLiteral(t, c.column, c.v)
			var fe *Error
			if !errors.As(err, &fe) || fe.Pos != -1 {
				t.Fatalf("error %v (%T), want a *filter.Error without position", err, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\n does not say %q", err, c.want)
			}
		})
	}
}

func TestUnknownColumn(t *testing.T) {
	_, err := Bind(cmpOp(Eq, col("nope"), lit(Number("1"))), arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32},
		{Name: "b", Type: arrow.BinaryTypes.String},
		{Name: "c", Type: arrow.StructOf(arrow.Field{Name: "d", Type: arrow.PrimitiveTypes.Int32})},
	}, nil))
	want := `filter: unknown column "nope" in filter; available columns: a, b, c, c.d`
	var fe *Error
	if !errors.As(err, &fe) || fe.Pos != -1 || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	for _, path := range [][]string{{"s", "zz"}, {"i32", "x"}, {"s", "t", "c", "d"}} {
		_, err := Bind(&IsNull{Term: col(path...)}, bindSchema)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("unknown column %q", strings.Join(path, "."))) {
			t.Errorf("%v: %v", path, err)
		}
	}
	var fields []arrow.Field
	for i := range 45 {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%02d", i), Type: arrow.PrimitiveTypes.Int8})
	}
	_, err = Bind(col("nope"), arrow.NewSchema(fields, nil))
	if err == nil || !strings.HasSuffix(err.Error(), "c38, c39 and 5 more") {
		t.Errorf("45 columns: %v", err)
	}
}

// TestBoundForm pins what pruning relies on: Column left, Literal right,
// ops flipped, exact value types, In values typed, standalone literals
// boolean.
func TestBoundForm(t *testing.T) {
	e := &And{Terms: []Expr{
		cmpOp(Lt, lit(Number("3")), col("i32")),
		&Or{Terms: []Expr{cmpOp(Ge, lit("a"), col("dict")), lit(nil), lit(true)}},
		&Not{Term: &In{Term: col("s", "a"), Values: lits(Number("1"), nil), Nulls: ArrowNulls}},
		cmpOp(Eq, col("i32"), col("i64")),
		&IsNull{Term: lit(Number("1")), Negated: true},
	}}
	p, err := Bind(e, bindSchema)
	if err != nil {
		t.Fatal(err)
	}
	want := "((i32 > 3) AND ((dict <= 'a') OR NULL OR TRUE) AND (NOT (s.a IN (1, NULL))) AND (i32 = i64) AND TRUE)"
	if got := p.Expr().String(); got != want {
		t.Errorf("bound form\n %s\nwant\n %s", got, want)
	}
	terms := p.Expr().(*And).Terms
	c := terms[0].(*Compare)
	if c.Op != Gt || c.Left.(*Column).Name() != "i32" || c.Right.(*Literal).Value.(scalar.Scalar).DataType().ID() != arrow.INT32 {
		t.Errorf("first term %#v", c)
	}
	null := terms[1].(*Or).Terms[1].(*Literal).Value.(scalar.Scalar)
	if null.IsValid() || null.DataType().ID() != arrow.BOOL {
		t.Errorf("NULL term is %s %v", null.DataType(), null.IsValid())
	}
	in := terms[2].(*Not).Term.(*In)
	if in.Nulls != ArrowNulls || in.Values[1].Value.(scalar.Scalar).IsValid() || in.Values[1].Value.(scalar.Scalar).DataType().ID() != arrow.INT32 {
		t.Errorf("IN %#v", in)
	}
	if got := strings.Join(p.Columns(), " "); got != "i32 dict s.a i64" {
		t.Errorf("Columns() = %s", got)
	}
	if cmpOp(Lt, lit(Number("3")), col("i32")).Left.(*Literal).Value != Number("3") {
		t.Error("Bind changed its input")
	}
}

func TestBindErrors(t *testing.T) {
	deep := Expr(col("b"))
	for range MaxDepth + 1 {
		deep = &Not{Term: deep}
	}
	many := make([]*Literal, MaxInValues+1)
	for i := range many {
		many[i] = lit(Number("1"))
	}
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{col("i32"), `column "i32" (int32) is not boolean`},
		{lit(Number("1")), "literal 1 (number) is not a condition"},
		{&And{Terms: []Expr{col("b"), lit("x")}}, "literal 'x' (string) is not a condition"},
		{cmpOp(Eq, col("i32"), col("str")), `cannot compare column "i32" (int32) with column "str" (utf8)`},
		{cmpOp(Eq, col("i32"), col("u64")), `cannot compare column "i32" (int32) with column "u64" (uint64)`},
		{cmpOp(Eq, col("ts_s"), col("ts_ms_utc")), `cannot compare column "ts_s"`},
		{cmpOp(Eq, cmpOp(Eq, col("b"), lit(true)), lit(true)), "operands must be columns or literals"},
		{cmpOp(Eq, lit(Number("1")), lit("a")), "cannot compare 1 (number) with 'a' (string)"},
		{&Like{Term: col("i32"), Pattern: "a%"}, `LIKE needs a string or binary column; column "i32" is int32`},
		{&Like{Term: col("str"), Pattern: `a\`}, `LIKE pattern 'a\' ends with an escape character`},
		{&Like{Term: lit("a"), Pattern: "a"}, "LIKE applies to a column"},
		{&StartsWith{Term: col("d32"), Prefix: "a"}, `starts_with needs a string or binary column`},
		{&In{Term: lit(Number("1")), Values: lits(Number("1"))}, "IN applies to a column"},
		{&In{Term: col("l"), Values: lits(nil)}, `column "l" (list<item: int32, nullable>) cannot be compared`},
		{nil, "empty filter"},
	} {
		_, err := Bind(c.e, bindSchema)
		var fe *Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Bind(%v) = %v, want an *Error saying %q", c.e, err, c.want)
		}
	}
	if _, err := Bind(deep, bindSchema); !errors.Is(err, ErrTooComplex) {
		t.Errorf("depth %d: %v", MaxDepth+1, err)
	}
	if _, err := Bind(&In{Term: col("i32"), Values: many}, bindSchema); !errors.Is(err, ErrTooComplex) {
		t.Errorf("IN of %d: %v", len(many), err)
	}
}

func TestCommonType(t *testing.T) {
	p := arrow.PrimitiveTypes
	for _, c := range []struct {
		a, b arrow.DataType
		want string
	}{
		{p.Int8, p.Int64, "int64"},
		{p.Uint8, p.Int8, "int16"},
		{p.Uint32, p.Int64, "int64"},
		{p.Uint16, p.Uint64, "uint64"},
		{p.Uint64, p.Int64, "<nil>"},
		{p.Float32, p.Float64, "float64"},
		{p.Int32, p.Float64, "<nil>"},
		{arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64, "date64"},
		{&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Nanosecond}, "timestamp[ns]"},
		{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, "<nil>"},
	} {
		if got := fmt.Sprint(commonType(c.a, c.b)); got != c.want {
			t.Errorf("commonType(%s, %s) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}
