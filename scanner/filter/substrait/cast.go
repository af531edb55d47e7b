package substrait

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// cast translates the two casts a filter can hold without evaluating
// anything: a column cast to a type that holds all of its values is the
// column (filter.Bind coerces the other operand to the column's own type,
// which gives the same rows, or refuses a literal the column's type cannot
// hold); a cast literal is folded, when the cast loses nothing. pyarrow 26
// writes no casts (it refuses to serialize the safe casts it inserts), so
// this is for other producers.
func (t *translator) cast(c *substraitpb.Expression_Cast, depth int) (filter.Expr, error) {
	switch r := c.GetInput().GetRexType().(type) {
	case *substraitpb.Expression_Literal_:
		v, err := t.foldCast(r.Literal, c.GetType())
		if err != nil {
			return nil, err
		}
		return &filter.Literal{Value: v}, nil
	case *substraitpb.Expression_Selection:
		col, f, err := t.column(r.Selection)
		if err != nil {
			return nil, err
		}
		if err := t.checkWidening(col, f.typ, c.GetType()); err != nil {
			return nil, err
		}
		return col, nil
	}
	return nil, filter.Errorf("a Substrait cast of %s is not supported (only of a column or a literal)",
		rexKind(c.GetInput()))
}

// foldCast casts a literal, refusing a cast that does not come back to the
// same value.
func (t *translator) foldCast(l *substraitpb.Expression_Literal, typ *substraitpb.Type) (scalar.Scalar, error) {
	v, err := t.literal(l)
	if err != nil {
		return nil, err
	}
	to, err := t.arrowType(typ)
	if err != nil {
		return nil, err
	}
	switch {
	case arrow.TypeEqual(v.DataType(), to):
		return v, nil
	case !v.IsValid():
		return scalar.MakeNullScalar(to), nil
	}
	out, err := v.CastTo(to)
	if err == nil {
		var back scalar.Scalar
		if back, err = out.CastTo(v.DataType()); err == nil && scalar.Equals(back, v) {
			return out, nil
		}
	}
	return nil, filter.Errorf("cannot fold the Substrait cast of literal %s to %s without changing it", v, to)
}

// checkWidening accepts a cast of col from type from to type to when every
// value of from has one value of to that orders the same way.
func (t *translator) checkWidening(col *filter.Column, from, to *substraitpb.Type) error {
	fromT, err := t.arrowType(from)
	if err != nil {
		return err
	}
	toT, err := t.arrowType(to)
	if err != nil {
		return err
	}
	if !widens(fromT, toT) {
		return filter.Errorf("a Substrait cast of column %s from %s to %s is not supported (only widening casts)",
			col, fromT, toT)
	}
	return nil
}

// widens says whether every value of from is exactly a value of to:
// integers to wider integers, integers to floats with enough mantissa,
// float32 to float64, string to large_string, binary to large_binary.
func widens(from, to arrow.DataType) bool {
	if arrow.TypeEqual(from, to) {
		return true
	}
	f, tt := from.ID(), to.ID()
	fw, fok := from.(arrow.FixedWidthDataType)
	tw, tok := to.(arrow.FixedWidthDataType)
	if !fok || !tok {
		return (f == arrow.STRING && tt == arrow.LARGE_STRING) || (f == arrow.BINARY && tt == arrow.LARGE_BINARY)
	}
	switch {
	case arrow.IsSignedInteger(f) && arrow.IsSignedInteger(tt):
		return tw.BitWidth() >= fw.BitWidth()
	case arrow.IsUnsignedInteger(f) && arrow.IsUnsignedInteger(tt):
		return tw.BitWidth() >= fw.BitWidth()
	case arrow.IsUnsignedInteger(f) && arrow.IsSignedInteger(tt):
		return tw.BitWidth() > fw.BitWidth()
	case arrow.IsInteger(f) && tt == arrow.FLOAT64:
		return fw.BitWidth() <= 32
	case arrow.IsInteger(f) && tt == arrow.FLOAT32:
		return fw.BitWidth() <= 16
	}
	return f == arrow.FLOAT32 && tt == arrow.FLOAT64
}
