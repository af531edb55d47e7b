package filter

import (
	"bytes"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// MayMatch says, from a group's statistics alone, whether the group can
// hold a row where the predicate is true. It answers true whenever it
// cannot be sure (missing statistics, NaN, unknown counts): it must never
// drop a group that holds a matching row.
//
// It is an abstract interpretation of the predicate: each node yields the
// set of values (true, false, unknown) it can take on some row of the
// group, computed from the statistics of the columns below it, and the
// group is dropped only when true is not in the root's set. Sets combine
// term by term as if the terms were independent, which can only add
// values: a superset is always safe.
func (p *Predicate) MayMatch(stats StatsSource) bool {
	if p == nil || p.expr == nil || stats == nil {
		return true
	}
	return mayYield(p.expr, stats)&yTrue != 0
}

// yields is a set of three-valued results.
type yields uint8

const (
	yTrue yields = 1 << iota
	yFalse
	yNull
	yAny = yTrue | yFalse | yNull
)

// truth is the set holding only b.
func truth(b bool) yields {
	if b {
		return yTrue
	}
	return yFalse
}

// maybe is the set holding t when can is true, and nothing else.
func maybe(can bool, t yields) yields {
	if can {
		return t
	}
	return 0
}

// not swaps true and false; unknown stays unknown.
func (y yields) not() yields {
	return y&yNull | (y&yTrue)<<1 | (y&yFalse)>>1
}

// mayYield is the set of values e can take on the group's rows.
func mayYield(e Expr, st StatsSource) yields {
	switch n := e.(type) {
	case *Literal:
		return literalYields(n)
	case *Column:
		return boolColumnYields(n, st)
	case *Compare:
		return compareYields(n, st)
	case *And:
		return andYields(n.Terms, st, false)
	case *Or:
		// De Morgan holds in Kleene logic: a OR b = NOT (NOT a AND NOT b).
		return andYields(n.Terms, st, true).not()
	case *Not:
		return mayYield(n.Term, st).not()
	case *IsNull:
		return isNullYields(n, st)
	case *In:
		return inYields(n, st)
	case *Like:
		return likeYields(n, st)
	case *StartsWith:
		return prefixYields(n.Term, n.Prefix, true, st)
	}
	return yAny
}

func literalYields(l *Literal) yields {
	switch v := l.Value.(type) {
	case nil:
		return yNull
	case bool:
		return truth(v)
	case *scalar.Boolean:
		if !v.IsValid() {
			return yNull
		}
		return truth(v.Value)
	case scalar.Scalar:
		if !v.IsValid() {
			return yNull
		}
	}
	return yAny
}

// andYields combines terms by Kleene AND (of their negations when
// negate is set): true needs every term able to be true, false any term
// able to be false, unknown every term able to be true or unknown and one
// able to be unknown. A term with no value at all means the group has no
// rows.
func andYields(terms []Expr, st StatsSource, negate bool) yields {
	allTrue, allTrueOrNull, anyFalse, anyNull := true, true, false, false
	for _, t := range terms {
		y := mayYield(t, st)
		if negate {
			y = y.not()
		}
		if y == 0 {
			return 0
		}
		allTrue = allTrue && y&yTrue != 0
		allTrueOrNull = allTrueOrNull && y&(yTrue|yNull) != 0
		anyFalse = anyFalse || y&yFalse != 0
		anyNull = anyNull || y&yNull != 0
	}
	return maybe(allTrue, yTrue) | maybe(anyFalse, yFalse) | maybe(allTrueOrNull && anyNull, yNull)
}

// colView is what a column's statistics say of the group's rows.
type colView struct {
	min, max scalar.Scalar // bounds of the non-null, non-NaN values; nil: unknown
	values   bool          // the group may hold non-null values
	nulls    bool          // the group may hold nulls
	nan      bool          // some non-null values may be NaN (floats only)
}

func viewOf(c *Column, st StatsSource) colView {
	s, ok := st.ColumnStats(c.Name())
	if !ok {
		return colView{values: true, nulls: true, nan: true}
	}
	// Rows == 0 is a group without rows: nothing at all can be yielded.
	empty := s.Rows == 0
	allNull := s.Rows > 0 && s.Nulls == s.Rows
	return colView{
		min:    s.Min,
		max:    s.Max,
		values: !empty && !allNull,
		nulls:  !empty && s.Nulls != 0,
		nan:    s.NaN,
	}
}

// boolColumnYields is a boolean column used as a condition.
func boolColumnYields(c *Column, st StatsSource) yields {
	v := viewOf(c, st)
	y := maybe(v.nulls, yNull)
	if !v.values {
		return y
	}
	lo, loOK := v.min.(*scalar.Boolean)
	hi, hiOK := v.max.(*scalar.Boolean)
	canTrue := !hiOK || !hi.IsValid() || hi.Value
	canFalse := !loOK || !lo.IsValid() || !lo.Value
	return y | maybe(canTrue, yTrue) | maybe(canFalse, yFalse)
}

// columnAndLiteral takes a comparison apart, with the column on the left.
func columnAndLiteral(c *Compare) (*Column, *Literal, CompareOp, bool) {
	if col, ok := c.Left.(*Column); ok {
		lit, ok := c.Right.(*Literal)
		return col, lit, c.Op, ok
	}
	if col, ok := c.Right.(*Column); ok {
		lit, ok := c.Left.(*Literal)
		return col, lit, c.Op.Flip(), ok
	}
	return nil, nil, c.Op, false
}

// compareYields is column op literal: unknown on null rows, false on NaN
// rows except for != (IEEE 754), and on the other values whatever the
// bounds allow.
func compareYields(c *Compare, st StatsSource) yields {
	col, lit, op, ok := columnAndLiteral(c)
	if !ok {
		return yAny
	}
	if lit.Value == nil {
		return yNull
	}
	val, ok := lit.Value.(scalar.Scalar)
	if !ok {
		return yAny // not bound: nothing to compare with
	}
	if !val.IsValid() {
		return yNull
	}
	v := viewOf(col, st)
	y := maybe(v.nulls, yNull)
	if !v.values {
		return y
	}
	if isNaN(val) {
		return y | truth(op == Ne)
	}
	if v.nan && mayBeNaN(val.DataType()) {
		y |= truth(op == Ne)
	}
	y |= rangeYields(op, v.min, v.max, val)
	if op == Eq && absent(st, col.Name(), val) {
		y &^= yTrue // a bloom filter rules the value out (membership.go)
	}
	return y
}

// rangeYields is what `x op c` can be for an x in [lo, hi]; a bound that
// is unknown, or cannot be compared with c, is no bound.
func rangeYields(op CompareOp, lo, hi, c scalar.Scalar) yields {
	lc, lok := CompareScalars(lo, c)
	hc, hok := CompareScalars(hi, c)
	var canTrue, canFalse bool
	switch op {
	case Lt:
		canTrue, canFalse = !lok || lc < 0, !hok || hc >= 0
	case Le:
		canTrue, canFalse = !lok || lc <= 0, !hok || hc > 0
	case Gt:
		canTrue, canFalse = !hok || hc > 0, !lok || lc <= 0
	case Ge:
		canTrue, canFalse = !hok || hc >= 0, !lok || lc < 0
	case Eq, Ne:
		// Bounds, even truncated ones, that are both c leave no other
		// value: lo <= x <= hi.
		canTrue = (!lok || lc <= 0) && (!hok || hc >= 0)
		canFalse = !(lok && hok && lc == 0 && hc == 0)
		if op == Ne {
			canTrue, canFalse = canFalse, canTrue
		}
	default:
		return yTrue | yFalse
	}
	return maybe(canTrue, yTrue) | maybe(canFalse, yFalse)
}

// isNullYields is IS [NOT] NULL: a column's null count says it directly,
// any other term through whether it can be unknown.
func isNullYields(n *IsNull, st StatsSource) yields {
	var y yields
	if col, ok := n.Term.(*Column); ok {
		v := viewOf(col, st)
		y = maybe(v.nulls, yTrue) | maybe(v.values, yFalse)
	} else {
		t := mayYield(n.Term, st)
		y = maybe(t&yNull != 0, yTrue) | maybe(t&(yTrue|yFalse) != 0, yFalse)
	}
	if n.Negated {
		return y.not()
	}
	return y
}

// inYields is [NOT] IN. A non-null value can match a list value within
// the bounds, and can fail to match unless the bounds pin it to a list
// value. What a failed match and a null operand give depends on the null
// semantics (see NullSemantics).
func inYields(n *In, st StatsSource) yields {
	col, ok := n.Term.(*Column)
	if !ok {
		return yAny
	}
	v := viewOf(col, st)
	l := scanList(n.Values, v.min, v.max)
	match, noMatch := v.values && l.match, v.values && l.noMatch
	if match && inAbsent(st, col.Name(), n.Values) {
		// A bloom filter rules every list value out (membership.go): a
		// non-null value can only fail to match.
		match, noMatch = false, true
	}
	if v.values && v.nan && l.float {
		// NaN matches nothing under IEEE equality, itself under
		// is_in's hashing: allow both when the list holds NaN.
		noMatch, match = true, match || l.nan
	}
	missed := yFalse
	if n.Nulls == SQLNulls && l.null {
		missed = yNull
	}
	y := maybe(match, yTrue) | maybe(noMatch, missed)
	if v.nulls {
		y |= nullOperandYields(n, l.null)
	}
	if n.Negated {
		return y.not()
	}
	return y
}

// nullOperandYields is `NULL IN (list)` before any negation.
func nullOperandYields(n *In, listHasNull bool) yields {
	switch {
	case len(n.Values) == 0:
		return yAny // engines disagree on NULL IN (): assume nothing
	case n.Nulls == ArrowNulls:
		return truth(listHasNull)
	}
	return yNull
}

// listScan is what an IN list holds, seen from a group's bounds.
type listScan struct {
	match   bool // some value may equal a non-NaN value in [lo, hi]
	noMatch bool // some value in [lo, hi] may equal no list value
	null    bool // the list holds NULL
	nan     bool // the list holds NaN
	float   bool // the list's values are floats (the column may hold NaN)
}

func scanList(values []*Literal, lo, hi scalar.Scalar) listScan {
	l := listScan{noMatch: true}
	for _, lit := range values {
		s, ok := lit.Value.(scalar.Scalar)
		switch {
		case lit.Value == nil || ok && !s.IsValid():
			l.null = true
			continue
		case !ok:
			l.match = true // not bound: cannot tell
			continue
		}
		l.float = l.float || mayBeNaN(s.DataType())
		if isNaN(s) {
			l.nan = true
			continue
		}
		lc, lok := CompareScalars(lo, s)
		hc, hok := CompareScalars(hi, s)
		if (!lok || lc <= 0) && (!hok || hc >= 0) {
			l.match = true
		}
		if lok && hok && lc == 0 && hc == 0 {
			l.noMatch = false // every value is this one
		}
	}
	return l
}

// likeYields is [NOT] LIKE through the pattern's literal prefix.
func likeYields(n *Like, st StatsSource) yields {
	prefix, pure := likePrefix(n.Pattern)
	y := prefixYields(n.Term, prefix, pure, st)
	if n.Negated {
		return y.not()
	}
	return y
}

// likePrefix is the text a LIKE pattern's matches must start with (up to
// its first wildcard), and whether the pattern means just that (the rest
// is only %).
func likePrefix(pattern string) (prefix string, pure bool) {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '\\':
			if i+1 == len(pattern) {
				// A trailing escape escapes nothing; engines differ on
				// it, so claim nothing beyond what came before.
				return b.String(), false
			}
			i++
			b.WriteByte(pattern[i])
		case '%', '_':
			return b.String(), strings.Trim(pattern[i:], "%") == ""
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), false // no wildcard: equality, of which the prefix test is a superset
}

// prefixYields is whether the term's values start with prefix: possible
// when [lo, hi] meets [prefix, successor(prefix)), the values that start
// with it; certain when it holds [lo, hi] (bounds that are truncated are
// still bounds, so this stays sound). pure says that starting with prefix
// is the whole test; otherwise the test can fail anyway.
func prefixYields(term Expr, prefix string, pure bool, st StatsSource) yields {
	col, ok := term.(*Column)
	if !ok {
		return yAny
	}
	v := viewOf(col, st)
	y := maybe(v.nulls, yNull)
	if !v.values {
		return y
	}
	p := []byte(prefix)
	next := successor(p)
	lo, lok := boundBytes(v.min)
	hi, hok := boundBytes(v.max)
	canTrue := (!hok || bytes.Compare(hi, p) >= 0) && (!lok || next == nil || bytes.Compare(lo, next) < 0)
	allStart := len(p) == 0 || lok && hok && bytes.Compare(lo, p) >= 0 && (next == nil || bytes.Compare(hi, next) < 0)
	return y | maybe(canTrue, yTrue) | maybe(!pure || !allStart, yFalse)
}

// successor is the least byte string greater than every string starting
// with p, nil when there is none (p empty or all 0xFF: every string at or
// above p then starts with it).
func successor(p []byte) []byte {
	n := len(p)
	for n > 0 && p[n-1] == 0xFF {
		n--
	}
	if n == 0 {
		return nil
	}
	s := append([]byte(nil), p[:n]...)
	s[n-1]++
	return s
}

// boundBytes is the bytes of a string or binary bound.
func boundBytes(s scalar.Scalar) ([]byte, bool) {
	b, ok := s.(scalar.BinaryScalar)
	if !ok || !b.IsValid() {
		return nil, false
	}
	return b.Data(), true
}
