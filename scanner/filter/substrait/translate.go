package substrait

import (
	"fmt"

	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/scanner/filter"
)

// Translate decodes msg, a serialized Substrait ExtendedExpression holding
// exactly one boolean expression (as pyarrow.substrait.serialize_expressions
// writes it), into scand's predicate form.
//
// A message that is not an ExtendedExpression, holds zero or several
// expressions, holds a non-boolean one, or uses a function or literal this
// package does not translate is an *filter.Error. A message over
// filter.MaxTextBytes, nested deeper than filter.MaxDepth, or with an IN
// list over filter.MaxInValues is an error wrapping filter.ErrTooComplex.
//
// Translate is safe for concurrent use; it keeps nothing of msg.
func Translate(msg []byte) (filter.Expr, error) {
	if len(msg) > filter.MaxTextBytes {
		return nil, fmt.Errorf("filter: Substrait message of %d bytes is over the limit of %d bytes: %w",
			len(msg), filter.MaxTextBytes, filter.ErrTooComplex)
	}
	var ee substraitpb.ExtendedExpression
	if err := proto.Unmarshal(msg, &ee); err != nil {
		return nil, filter.Errorf("not a valid Substrait ExtendedExpression: %v", err)
	}
	root, err := rootExpression(&ee)
	if err != nil {
		return nil, err
	}
	t, err := newTranslator(&ee)
	if err != nil {
		return nil, err
	}
	if err := t.checkBoolean(root); err != nil {
		return nil, err
	}
	return t.expr(root, 1)
}

// rootExpression is the one expression of ee.
func rootExpression(ee *substraitpb.ExtendedExpression) (*substraitpb.Expression, error) {
	refs := ee.GetReferredExpr()
	if len(refs) != 1 {
		return nil, filter.Errorf("a Substrait filter holds exactly one expression, this message holds %d", len(refs))
	}
	e := refs[0].GetExpression()
	if e == nil {
		if refs[0].GetMeasure() != nil {
			return nil, filter.Errorf("a Substrait filter is a boolean expression, not a measure (aggregate)")
		}
		return nil, filter.Errorf("the Substrait message's expression is empty")
	}
	return e, nil
}

// translator holds what the expression's references resolve against: the
// message's function and type declarations and its base schema.
type translator struct {
	funcs  map[uint32]string // function anchor -> name without signature ("equal")
	types  map[uint32]string // type anchor -> name ("u8")
	schema []*field
}

func newTranslator(ee *substraitpb.ExtendedExpression) (*translator, error) {
	funcs, types, err := readExtensions(ee)
	if err != nil {
		return nil, err
	}
	schema, err := readSchema(ee.GetBaseSchema())
	if err != nil {
		return nil, err
	}
	return &translator{funcs: funcs, types: types, schema: schema}, nil
}

var errTooDeep = fmt.Errorf("filter: Substrait expression nested deeper than %d levels: %w",
	filter.MaxDepth, filter.ErrTooComplex)

// expr translates e, found at nesting level depth (the root is 1).
func (t *translator) expr(e *substraitpb.Expression, depth int) (filter.Expr, error) {
	if depth > filter.MaxDepth {
		return nil, errTooDeep
	}
	switch r := e.GetRexType().(type) {
	case *substraitpb.Expression_Literal_:
		v, err := t.literal(r.Literal)
		if err != nil {
			return nil, err
		}
		return &filter.Literal{Value: v}, nil
	case *substraitpb.Expression_Selection:
		c, _, err := t.column(r.Selection)
		return c, err
	case *substraitpb.Expression_ScalarFunction_:
		return t.call(r.ScalarFunction, depth)
	case *substraitpb.Expression_SingularOrList_:
		return t.in(r.SingularOrList, depth)
	case *substraitpb.Expression_Cast_:
		return t.cast(r.Cast, depth)
	}
	return nil, filter.Errorf("Substrait expression kind %q is not supported (supported: literal, selection, "+
		"scalar_function, singular_or_list, cast)", rexKind(e))
}

// rexKind names the kind of e, as the Substrait proto spells it.
func rexKind(e *substraitpb.Expression) string {
	m := e.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("rex_type"))
	if fd == nil {
		return "none"
	}
	return string(fd.Name())
}

// checkBoolean refuses a root expression whose result is not boolean.
func (t *translator) checkBoolean(e *substraitpb.Expression) error {
	var typ *substraitpb.Type
	switch r := e.GetRexType().(type) {
	case *substraitpb.Expression_SingularOrList_:
		return nil
	case *substraitpb.Expression_ScalarFunction_:
		typ = r.ScalarFunction.GetOutputType()
		if typ == nil {
			return nil // every function this package translates is boolean
		}
	case *substraitpb.Expression_Literal_:
		if _, ok := r.Literal.GetLiteralType().(*substraitpb.Expression_Literal_Boolean); ok {
			return nil
		}
		if typ = r.Literal.GetNull(); typ == nil {
			return filter.Errorf("a Substrait filter must be a boolean expression, this one is a %s literal",
				literalKind(r.Literal))
		}
	case *substraitpb.Expression_Selection:
		_, f, err := t.column(r.Selection)
		if err != nil {
			return nil // expr reports it
		}
		typ = f.typ
	case *substraitpb.Expression_Cast_:
		typ = r.Cast.GetType()
	default:
		return nil // expr refuses the other kinds
	}
	if _, ok := typ.GetKind().(*substraitpb.Type_Bool); ok {
		return nil
	}
	return filter.Errorf("a Substrait filter must be a boolean expression, this one is %s of type %s",
		rexKind(e), typeName(typ))
}
