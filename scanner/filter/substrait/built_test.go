package substrait

import (
	"errors"
	"testing"

	pb "github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb/extensions"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/scand/scand/scanner/filter"
)

var (
	tI32  = &pb.Type{Kind: &pb.Type_I32_{I32: &pb.Type_I32{}}}
	tI64  = &pb.Type{Kind: &pb.Type_I64_{I64: &pb.Type_I64{}}}
	tFp64 = &pb.Type{Kind: &pb.Type_Fp64{Fp64: &pb.Type_FP64{}}}
)

func str(s string) *pb.Expression {
	return lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_String_{String_: s}})
}

// cmpFuncs are the functions most built cases declare, at anchors 1..4.
var cmpFuncs = []string{"equal:any_any", "and:bool", "not:bool", "like:str_str"}

func TestBuilt(t *testing.T) {
	ns := testSchema(false)
	eq := func(a, b *pb.Expression) *pb.Expression { return call(1, a, b) }
	and := func(a ...*pb.Expression) *pb.Expression { return call(2, a...) }
	cases := []struct {
		name string
		msg  []byte
		want fixture
	}{
		{"urn form", message(t, ns, cmpFuncs, eq(ref(1), i64(5))), fixture{want: "(i64 = 5)", types: "int64"}},
		{"and flattened", message(t, ns, cmpFuncs, and(and(ref(3), eq(ref(1), i64(1))), and(ref(3), ref(3)))),
			fixture{want: "(ok AND (i64 = 1) AND ok AND ok)", types: "int64"}},
		{"and of one", message(t, ns, cmpFuncs, and(ref(3))), fixture{want: "ok"}},
		{"struct path", message(t, ns, cmpFuncs, eq(ref(4, 1, 0), str("x"))), fixture{want: `(st.inner.x = 'x')`, types: "utf8"}},
		{"names after a list, pyarrow's count", message(t, ns, cmpFuncs, eq(ref(6), i64(1))), fixture{want: "(after = 1)", types: "int64"}},
		{"names after a list, spec's count", message(t, testSchema(true), cmpFuncs, eq(ref(6), i64(1))),
			fixture{want: "(after = 1)", types: "int64"}},
		{"names do not match", message(t, &pb.NamedStruct{Names: []string{"a", "b"}, Struct: &pb.Type_Struct{Types: []*pb.Type{tI32}}},
			cmpFuncs, eq(ref(0), i64(1))), fixture{err: "2 names, which do not match its 1 fields"}},
		{"widening cast of a column dropped", message(t, ns, cmpFuncs, eq(cast(tI64, ref(0)), i64(5))),
			fixture{want: "(i32 = 5)", types: "int64"}},
		{"int32 column to double dropped", message(t, ns, cmpFuncs, eq(cast(tFp64, ref(0)), i64(5))),
			fixture{want: "(i32 = 5)", types: "int64"}},
		{"narrowing cast of a column", message(t, ns, cmpFuncs, eq(cast(tI32, ref(1)), i64(5))),
			fixture{err: "cast of column i64 from int64 to int32 is not supported"}},
		{"cast literal folded", message(t, ns, cmpFuncs, eq(ref(1), cast(tI64, lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_I32{I32: 5}})))),
			fixture{want: "(i64 = 5)", types: "int64"}},
		{"cast null literal folded", message(t, ns, cmpFuncs, eq(ref(1), cast(tI64, lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Null{Null: tI32}})))),
			fixture{want: `(i64 = NULL)`, types: "int64"}},
		{"lossy literal cast", message(t, ns, cmpFuncs, eq(ref(0), cast(tI32, lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Fp64{Fp64: 1.5}})))),
			fixture{err: "cannot fold the Substrait cast of literal 1.5 to int32"}},
		{"cast of a call", message(t, ns, cmpFuncs, eq(cast(tI64, eq(ref(1), i64(1))), i64(1))), fixture{err: "cast of scalar_function is not supported"}},
		{"deprecated args", message(t, ns, cmpFuncs, deprecatedArgs(ref(1), i64(2))), fixture{want: "(i64 = 2)", types: "int64"}},
		{"undeclared anchor", message(t, ns, cmpFuncs, call(9, ref(3))), fixture{err: "function reference 9 is not declared"}},
		{"zero expressions", message(t, ns, cmpFuncs), fixture{err: "exactly one expression, this message holds 0"}},
		{"two expressions", message(t, ns, cmpFuncs, ref(3), ref(3)), fixture{err: "exactly one expression, this message holds 2"}},
		{"not a message", []byte{0xff, 0xff, 0xff}, fixture{err: "not a valid Substrait ExtendedExpression"}},
		{"field out of range", message(t, ns, cmpFuncs, eq(ref(7), i64(1))), fixture{err: "field reference 7 is out of range (7 fields)"}},
		{"into a non-struct", message(t, ns, cmpFuncs, eq(ref(1, 0), i64(1))), fixture{err: `goes into "i64", which is not a struct`}},
		{"into a list", message(t, ns, cmpFuncs, eq(ref(5, 0), i64(1))), fixture{err: `goes into "l", which is not a struct`}},
		{"in of a non-literal", message(t, ns, cmpFuncs, in(ref(1), i64(1), ref(1))), fixture{err: "entry 2 of a Substrait IN list is selection"}},
		{"like pattern as written", message(t, ns, cmpFuncs, call(4, ref(2), str(`a\%`))), fixture{want: `(s LIKE 'a\%')`}},
		{"starts_with of null", message(t, ns, []string{"starts_with"}, call(1, ref(2), lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Null{Null: tI32}}))),
			fixture{err: "must be a non-null string literal"}},
		{"enum argument", message(t, ns, cmpFuncs, enumArg()), fixture{err: "argument 1 of Substrait function \"not\" is not a value"}},
		{"wrong arity", message(t, ns, cmpFuncs, call(1, ref(3))), fixture{err: `"equal" takes 2 arguments, not 1`}},
		{"null boolean root", message(t, ns, cmpFuncs, lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Null{
			Null: &pb.Type{Kind: &pb.Type_Bool{Bool: &pb.Type_Boolean{}}}}})), fixture{want: "NULL", types: "bool"}},
		{"non-boolean call", message(t, ns, []string{"add"}, &pb.Expression{RexType: &pb.Expression_ScalarFunction_{
			ScalarFunction: &pb.Expression_ScalarFunction{FunctionReference: 1, OutputType: tI64}}}),
			fixture{err: "this one is scalar_function of type i64"}},
		{"non-boolean literal", message(t, ns, cmpFuncs, i64(1)), fixture{err: "this one is a i64 literal"}},
		{"if-then", message(t, ns, cmpFuncs, &pb.Expression{RexType: &pb.Expression_IfThen_{IfThen: &pb.Expression_IfThen{}}}),
			fixture{err: `expression kind "if_then" is not supported`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkTranslate(t, c.msg, c.want) })
	}
}

func deprecatedArgs(args ...*pb.Expression) *pb.Expression {
	return &pb.Expression{RexType: &pb.Expression_ScalarFunction_{ScalarFunction: &pb.Expression_ScalarFunction{
		FunctionReference: 1, Args: args,
	}}}
}

func enumArg() *pb.Expression {
	return &pb.Expression{RexType: &pb.Expression_ScalarFunction_{ScalarFunction: &pb.Expression_ScalarFunction{
		FunctionReference: 3, Arguments: []*pb.FunctionArgument{{ArgType: &pb.FunctionArgument_Enum{Enum: "x"}}},
	}}}
}

func TestLiterals(t *testing.T) {
	ns := testSchema(false)
	u8 := func(v uint64) *pb.Expression_Literal {
		a, _ := anypb.New(wrapperspb.UInt64(v))
		return &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_UserDefined_{UserDefined: &pb.Expression_Literal_UserDefined{
			TypeAnchorType: &pb.Expression_Literal_UserDefined_TypeReference{TypeReference: 3},
			Val:            &pb.Expression_Literal_UserDefined_Value{Value: a},
		}}}
	}
	cases := []struct {
		name string
		lit  *pb.Expression_Literal
		want fixture
	}{
		{"precision_timestamp ns", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_PrecisionTimestamp_{
			PrecisionTimestamp: &pb.Expression_Literal_PrecisionTimestamp{Precision: 9, Value: 1}}},
			fixture{want: `(i64 = TIMESTAMP '1970-01-01 00:00:00.000000001')`, types: "timestamp[ns]"}},
		{"precision_timestamp_tz ms", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_PrecisionTimestampTz{
			PrecisionTimestampTz: &pb.Expression_Literal_PrecisionTimestamp{Precision: 3, Value: 1000}}},
			fixture{want: `(i64 = TIMESTAMP '1970-01-01 00:00:01Z')`, types: "timestamp[ms, tz=UTC]"}},
		{"time", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Time{Time: 1}}, fixture{want: "(i64 = 00:00:00.000001)", types: "time64[us]"}},
		{"fixed_binary", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_FixedBinary{FixedBinary: []byte("ab")}},
			fixture{want: `(i64 = X'6162')`, types: "fixed_size_binary[2]"}},
		{"precision 4", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_PrecisionTimestamp_{
			PrecisionTimestamp: &pb.Expression_Literal_PrecisionTimestamp{Precision: 4}}}, fixture{err: "precision 4 is not supported"}},
		{"timestamp_tz", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_TimestampTz{TimestampTz: 1}},
			fixture{want: `(i64 = TIMESTAMP '1970-01-01 00:00:00.000001Z')`, types: "timestamp[us, tz=UTC]"}},
		{"varchar", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_VarChar_{VarChar: &pb.Expression_Literal_VarChar{Value: "v", Length: 3}}},
			fixture{want: `(i64 = 'v')`, types: "utf8"}},
		{"decimal of 15 bytes", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Decimal_{Decimal: &pb.Expression_Literal_Decimal{
			Value: make([]byte, 15), Precision: 5}}}, fixture{err: "decimal literal has 15 bytes, not 16"}},
		{"decimal too wide", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Decimal_{Decimal: &pb.Expression_Literal_Decimal{
			Value: []byte{0xe8, 0x03, 15: 0}, Precision: 3}}}, fixture{err: "1000 does not fit in precision 3"}},
		{"decimal precision 39", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Decimal_{Decimal: &pb.Expression_Literal_Decimal{
			Value: make([]byte, 16), Precision: 39}}}, fixture{err: "decimal(39, 0) is not supported"}},
		{"null decimal", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Null{Null: &pb.Type{Kind: &pb.Type_Decimal_{
			Decimal: &pb.Type_Decimal{Precision: 10, Scale: 2}}}}}, fixture{want: `(i64 = NULL)`, types: "decimal(10, 2)"}},
		{"null list", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_Null{Null: &pb.Type{Kind: &pb.Type_List_{List: &pb.Type_List{}}}}},
			fixture{err: "type list is not supported"}},
		{"interval", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_IntervalYearToMonth_{}},
			fixture{err: `literal of kind "interval_year_to_month" is not supported`}},
		{"i8 out of range", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_I8{I8: 300}}, fixture{err: "i8 literal 300 is out of range"}},
		{"i16", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_I16{I16: -32768}}, fixture{want: "(i64 = -32768)", types: "int16"}},
		{"u8", u8(255), fixture{want: "(i64 = 255)", types: "uint8"}},
		{"u8 out of range", u8(256), fixture{err: `256 is out of range for type "u8"`}},
		{"unknown user type", &pb.Expression_Literal{LiteralType: &pb.Expression_Literal_UserDefined_{UserDefined: &pb.Expression_Literal_UserDefined{
			TypeAnchorType: &pb.Expression_Literal_UserDefined_TypeReference{TypeReference: 9}}}},
			fixture{err: `user-defined literal of type "" is not supported`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkTranslate(t, withTypeU8(t, message(t, ns, cmpFuncs, call(1, ref(1), lit(c.lit)))), c.want)
		})
	}
}

// withTypeU8 adds Arrow's extension type u8 at type anchor 3 to msg.
func withTypeU8(t *testing.T, msg []byte) []byte {
	var ee pb.ExtendedExpression
	if err := proto.Unmarshal(msg, &ee); err != nil {
		t.Fatal(err)
	}
	ee.Extensions = append(ee.Extensions, &extensions.SimpleExtensionDeclaration{
		MappingType: &extensions.SimpleExtensionDeclaration_ExtensionType_{ExtensionType: &extensions.SimpleExtensionDeclaration_ExtensionType{
			ExtensionUrnReference: 7, TypeAnchor: 3, Name: "u8"}},
	})
	b, err := proto.Marshal(&ee)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDeclarations(t *testing.T) {
	ee := &pb.ExtendedExpression{
		BaseSchema: testSchema(false),
		Extensions: []*extensions.SimpleExtensionDeclaration{{MappingType: &extensions.SimpleExtensionDeclaration_ExtensionFunction_{
			ExtensionFunction: &extensions.SimpleExtensionDeclaration_ExtensionFunction{ExtensionUrnReference: 3, FunctionAnchor: 1, Name: "not"}}}},
		ReferredExpr: []*pb.ExpressionReference{{ExprType: &pb.ExpressionReference_Expression{Expression: call(1, ref(3))}}},
	}
	b, _ := proto.Marshal(ee)
	checkTranslate(t, b, fixture{err: `function "not" (anchor 1) refers to an extension the message does not declare`})

	ee.ExtensionUrns = []*extensions.SimpleExtensionURN{{ExtensionUrnAnchor: 3}}
	ee.Extensions = append(ee.Extensions, ee.Extensions[0])
	b, _ = proto.Marshal(ee)
	checkTranslate(t, b, fixture{err: "function anchor 1 is declared twice"})

	ee.ReferredExpr[0].ExprType = &pb.ExpressionReference_Measure{Measure: &pb.AggregateFunction{}}
	b, _ = proto.Marshal(ee)
	checkTranslate(t, b, fixture{err: "not a measure"})
}

func TestLimits(t *testing.T) {
	ns := testSchema(false)
	deep := func(n int) []byte {
		e := ref(3)
		for range n {
			e = call(3, e)
		}
		return message(t, ns, cmpFuncs, e)
	}
	if _, err := Translate(deep(filter.MaxDepth - 1)); err != nil {
		t.Errorf("%d levels: %v", filter.MaxDepth, err)
	}
	opts := make([]*pb.Expression, filter.MaxInValues+1)
	for i := range opts {
		opts[i] = i64(int64(i))
	}
	nested := &pb.Type{Kind: &pb.Type_I32_{I32: &pb.Type_I32{}}}
	names := []string{"n"}
	for range filter.MaxDepth + 1 {
		nested = &pb.Type{Kind: &pb.Type_Struct_{Struct: &pb.Type_Struct{Types: []*pb.Type{nested}}}}
		names = append(names, "n")
	}
	deepSchema := &pb.NamedStruct{Names: names, Struct: &pb.Type_Struct{Types: []*pb.Type{nested}}}
	for name, msg := range map[string][]byte{
		"too long":        make([]byte, filter.MaxTextBytes+1),
		"too deep":        deep(filter.MaxDepth),
		"too many values": message(t, ns, cmpFuncs, in(ref(1), opts...)),
		"schema too deep": message(t, deepSchema, cmpFuncs, ref(0)),
	} {
		if _, err := Translate(msg); !errors.Is(err, filter.ErrTooComplex) {
			t.Errorf("%s: err = %v, want ErrTooComplex", name, err)
		}
	}
}
