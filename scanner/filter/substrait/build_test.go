package substrait

import (
	"testing"

	pb "github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb/extensions"
	"google.golang.org/protobuf/proto"
)

// Builders for messages pyarrow does not write: the URN form, other
// producers' casts, and the limits.

// testSchema is i32, i64, s, ok, st{a, inner{x}}, l (list<struct<y>>, whose
// y takes a name only under the spec's rule), after.
func testSchema(specNames bool) *pb.NamedStruct {
	i32 := &pb.Type{Kind: &pb.Type_I32_{I32: &pb.Type_I32{}}}
	i64 := &pb.Type{Kind: &pb.Type_I64_{I64: &pb.Type_I64{}}}
	str := &pb.Type{Kind: &pb.Type_String_{String_: &pb.Type_String{}}}
	boolean := &pb.Type{Kind: &pb.Type_Bool{Bool: &pb.Type_Boolean{}}}
	strct := func(ts ...*pb.Type) *pb.Type {
		return &pb.Type{Kind: &pb.Type_Struct_{Struct: &pb.Type_Struct{Types: ts}}}
	}
	list := &pb.Type{Kind: &pb.Type_List_{List: &pb.Type_List{Type: strct(i64)}}}
	names := []string{"i32", "i64", "s", "ok", "st", "a", "inner", "x", "l"}
	if specNames {
		names = append(names, "y")
	}
	return &pb.NamedStruct{
		Names:  append(names, "after"),
		Struct: &pb.Type_Struct{Types: []*pb.Type{i32, i64, str, boolean, strct(i32, strct(str)), list, i64}},
	}
}

// message is an ExtendedExpression in the URN form, declaring funcs at
// anchors 1, 2, ... and holding exprs.
func message(t testing.TB, ns *pb.NamedStruct, funcs []string, exprs ...*pb.Expression) []byte {
	t.Helper()
	ee := &pb.ExtendedExpression{
		ExtensionUrns: []*extensions.SimpleExtensionURN{{ExtensionUrnAnchor: 7, Urn: "extension:io.substrait:functions_comparison"}},
		BaseSchema:    ns,
	}
	for i, f := range funcs {
		ee.Extensions = append(ee.Extensions, &extensions.SimpleExtensionDeclaration{
			MappingType: &extensions.SimpleExtensionDeclaration_ExtensionFunction_{
				ExtensionFunction: &extensions.SimpleExtensionDeclaration_ExtensionFunction{
					ExtensionUrnReference: 7, FunctionAnchor: uint32(i + 1), Name: f,
				},
			},
		})
	}
	for _, e := range exprs {
		ee.ReferredExpr = append(ee.ReferredExpr, &pb.ExpressionReference{
			ExprType:    &pb.ExpressionReference_Expression{Expression: e},
			OutputNames: []string{"filter"},
		})
	}
	b, err := proto.Marshal(ee)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ref is a direct reference to field path[0], then into its struct.
func ref(path ...int32) *pb.Expression {
	var seg *pb.Expression_ReferenceSegment
	for i := len(path) - 1; i >= 0; i-- {
		seg = &pb.Expression_ReferenceSegment{ReferenceType: &pb.Expression_ReferenceSegment_StructField_{
			StructField: &pb.Expression_ReferenceSegment_StructField{Field: path[i], Child: seg},
		}}
	}
	return &pb.Expression{RexType: &pb.Expression_Selection{Selection: &pb.Expression_FieldReference{
		ReferenceType: &pb.Expression_FieldReference_DirectReference{DirectReference: seg},
		RootType:      &pb.Expression_FieldReference_RootReference_{RootReference: &pb.Expression_FieldReference_RootReference{}},
	}}}
}

func lit(l *pb.Expression_Literal) *pb.Expression {
	return &pb.Expression{RexType: &pb.Expression_Literal_{Literal: l}}
}

func i64(v int64) *pb.Expression {
	return lit(&pb.Expression_Literal{LiteralType: &pb.Expression_Literal_I64{I64: v}})
}

// call calls the function at anchor with args.
func call(anchor uint32, args ...*pb.Expression) *pb.Expression {
	f := &pb.Expression_ScalarFunction{
		FunctionReference: anchor,
		OutputType:        &pb.Type{Kind: &pb.Type_Bool{Bool: &pb.Type_Boolean{}}},
	}
	for _, a := range args {
		f.Arguments = append(f.Arguments, &pb.FunctionArgument{ArgType: &pb.FunctionArgument_Value{Value: a}})
	}
	return &pb.Expression{RexType: &pb.Expression_ScalarFunction_{ScalarFunction: f}}
}

func cast(to *pb.Type, e *pb.Expression) *pb.Expression {
	return &pb.Expression{RexType: &pb.Expression_Cast_{Cast: &pb.Expression_Cast{Type: to, Input: e}}}
}

func in(e *pb.Expression, opts ...*pb.Expression) *pb.Expression {
	return &pb.Expression{RexType: &pb.Expression_SingularOrList_{SingularOrList: &pb.Expression_SingularOrList{
		Value: e, Options: opts,
	}}}
}
