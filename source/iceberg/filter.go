package iceberg

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	ice "github.com/apache/iceberg-go"

	"github.com/scand/scand/scanner/filter"
)

// pruningFilter translates a bound filter (filter.Bind against the
// listing's schema) into an Iceberg expression for iceberg-go's planning,
// which prunes manifests and data files with it. The translation may only
// widen the filter: wherever the filter is true, the result is true too,
// so that a file holding a matching row is never pruned. A part it cannot
// translate exactly (a comparison of two columns, LIKE beyond a prefix,
// NaN, types without an Iceberg literal, negations where Iceberg's and
// SQL's treatment of NULL and NaN differ) becomes TRUE, and scand's own
// evaluation of the whole filter on the rows decides. Every leaf is bound
// against schema on its own, so a leaf Iceberg cannot bind becomes TRUE
// as well.
func pruningFilter(e filter.Expr, schema *ice.Schema) ice.BooleanExpression {
	if e == nil {
		return ice.AlwaysTrue{}
	}
	return translate(e, false, schema)
}

func isTrue(e ice.BooleanExpression) bool {
	_, ok := e.(ice.AlwaysTrue)
	return ok
}

// translate returns e (NOT e when negate), widened.
func translate(e filter.Expr, negate bool, schema *ice.Schema) ice.BooleanExpression {
	switch n := e.(type) {
	case *filter.Not:
		return translate(n.Term, !negate, schema)
	case *filter.And:
		return combine(n.Terms, negate, negate, schema)
	case *filter.Or:
		return combine(n.Terms, !negate, negate, schema)
	}
	leaf := translateLeaf(e, negate)
	if leaf == nil {
		return ice.AlwaysTrue{}
	}
	if _, err := ice.BindExpr(schema, leaf, true); err != nil {
		return ice.AlwaysTrue{}
	}
	return leaf
}

// combine translates the terms of an AND (an OR when or is set), each
// negated when negate is set (De Morgan).
func combine(terms []filter.Expr, or, negate bool, schema *ice.Schema) ice.BooleanExpression {
	var out []ice.BooleanExpression
	for _, t := range terms {
		r := translate(t, negate, schema)
		switch {
		case isTrue(r) && or:
			return ice.AlwaysTrue{} // TRUE OR anything
		case isTrue(r):
			continue // TRUE AND x is x
		}
		out = append(out, r)
	}
	switch len(out) {
	case 0:
		return ice.AlwaysTrue{}
	case 1:
		return out[0]
	}
	if or {
		return ice.NewOr(out[0], out[1], out[2:]...)
	}
	return ice.NewAnd(out[0], out[1], out[2:]...)
}

// translateLeaf translates one predicate, or returns nil.
func translateLeaf(e filter.Expr, negate bool) ice.BooleanExpression {
	switch n := e.(type) {
	case *filter.Literal:
		b, ok := n.Value.(*scalar.Boolean)
		if !ok || !b.IsValid() {
			return nil
		}
		if b.Value != negate {
			return ice.AlwaysTrue{}
		}
		return ice.AlwaysFalse{}
	case *filter.Column:
		return ice.EqualTo(ref(n), !negate)
	case *filter.IsNull:
		c, ok := n.Term.(*filter.Column)
		if !ok {
			return nil
		}
		if n.Negated != negate {
			return ice.NotNull(ref(c))
		}
		return ice.IsNull(ref(c))
	case *filter.Compare:
		return translateCompare(n, negate)
	case *filter.In:
		return translateIn(n, negate)
	case *filter.StartsWith:
		c, ok := n.Term.(*filter.Column)
		if !ok || negate {
			return nil
		}
		return ice.StartsWith(ref(c), n.Prefix)
	case *filter.Like:
		c, ok := n.Term.(*filter.Column)
		if !ok || negate || n.Negated {
			return nil
		}
		prefix, ok := likePrefix(n.Pattern)
		if !ok {
			return nil
		}
		return ice.StartsWith(ref(c), prefix)
	}
	return nil
}

func ref(c *filter.Column) ice.UnboundTerm { return ice.Reference(strings.Join(c.Path, ".")) }

// likePrefix is the prefix of a pattern of the form "prefix%" without
// other wildcards or escapes.
func likePrefix(p string) (string, bool) {
	if !strings.HasSuffix(p, "%") {
		return "", false
	}
	prefix := p[:len(p)-1]
	if prefix == "" || strings.ContainsAny(prefix, `%_\`) {
		return "", false
	}
	return prefix, true
}

var compareOps = [...]ice.Operation{filter.Eq: ice.OpEQ, filter.Ne: ice.OpNEQ, filter.Lt: ice.OpLT, filter.Le: ice.OpLTEQ, filter.Gt: ice.OpGT, filter.Ge: ice.OpGTEQ}

var negatedOps = [...]filter.CompareOp{filter.Eq: filter.Ne, filter.Ne: filter.Eq, filter.Lt: filter.Ge, filter.Le: filter.Gt, filter.Gt: filter.Le, filter.Ge: filter.Lt}

// translateCompare translates column op literal. Negated, NOT (a < b) is
// a >= b in SQL's logic (NULL stays unknown), but not for floats, where
// NaN makes both false; float comparisons are translated only as they
// stand, and never !=, which NaN satisfies.
func translateCompare(n *filter.Compare, negate bool) ice.BooleanExpression {
	c, ok := n.Left.(*filter.Column)
	if !ok {
		return nil
	}
	l, ok := n.Right.(*filter.Literal)
	if !ok {
		return nil
	}
	lit, float, ok := literal(l)
	if !ok {
		return nil
	}
	op := n.Op
	if negate {
		if float {
			return nil
		}
		op = negatedOps[op]
	}
	if float && op == filter.Ne {
		return nil
	}
	return ice.LiteralPredicate(compareOps[op], ref(c), lit)
}

// translateIn translates IN lists. Under SQL's rules a NULL in the list
// matches nothing, so it is dropped from IN and makes NOT IN never true
// (TRUE is then the widest answer); under pyarrow's, a NULL operand may
// match, so only lists without NULL are translated.
func translateIn(n *filter.In, negate bool) ice.BooleanExpression {
	c, ok := n.Term.(*filter.Column)
	if !ok {
		return nil
	}
	negated := n.Negated != negate
	var lits []ice.Literal
	for _, v := range n.Values {
		s, isScalar := v.Value.(scalar.Scalar)
		if v.Value == nil || (isScalar && !s.IsValid()) {
			if negated || n.Nulls == filter.ArrowNulls {
				return nil
			}
			continue
		}
		lit, float, ok := literal(v)
		if !ok || (float && negated) {
			return nil
		}
		lits = append(lits, lit)
	}
	if len(lits) == 0 {
		return nil
	}
	if negated {
		if n.Nulls == filter.ArrowNulls {
			return nil // a NULL operand is NOT IN under pyarrow's rules
		}
		return ice.SetPredicate(ice.OpNotIn, ref(c), lits)
	}
	return ice.SetPredicate(ice.OpIn, ref(c), lits)
}

// literal converts a bound literal (a scalar of its column's type) to an
// Iceberg literal; float reports a floating-point value. NULL, NaN and
// types without an exact Iceberg literal are not converted.
func literal(l *filter.Literal) (lit ice.Literal, float, ok bool) {
	s, isScalar := l.Value.(scalar.Scalar)
	if !isScalar || !s.IsValid() {
		return nil, false, false
	}
	switch v := s.(type) {
	case *scalar.Boolean:
		return ice.NewLiteral(v.Value), false, true
	case *scalar.Int8:
		return ice.NewLiteral(int32(v.Value)), false, true
	case *scalar.Int16:
		return ice.NewLiteral(int32(v.Value)), false, true
	case *scalar.Int32:
		return ice.NewLiteral(v.Value), false, true
	case *scalar.Int64:
		return ice.NewLiteral(v.Value), false, true
	case *scalar.Float32:
		if math.IsNaN(float64(v.Value)) {
			return nil, true, false
		}
		return ice.NewLiteral(v.Value), true, true
	case *scalar.Float64:
		if math.IsNaN(v.Value) {
			return nil, true, false
		}
		return ice.NewLiteral(v.Value), true, true
	case *scalar.String:
		return ice.NewLiteral(string(v.Value.Bytes())), false, true
	case *scalar.LargeString:
		return ice.NewLiteral(string(v.Value.Bytes())), false, true
	case *scalar.Date32:
		return ice.NewLiteral(ice.Date(v.Value)), false, true
	case *scalar.Timestamp:
		switch v.Type.(*arrow.TimestampType).Unit {
		case arrow.Microsecond:
			return ice.NewLiteral(ice.Timestamp(v.Value)), false, true
		case arrow.Nanosecond:
			return ice.NewLiteral(ice.TimestampNano(v.Value)), false, true
		}
	case *scalar.Decimal128:
		t := v.Type.(*arrow.Decimal128Type)
		return ice.NewLiteral(ice.Decimal{Val: decimal.Decimal128(v.Value), Scale: int(t.Scale)}), false, true
	}
	return nil, false, false
}
