package filter

import "github.com/apache/arrow-go/v18/arrow/scalar"

// Membership is an optional interface of a StatsSource: a set-membership
// test for one column of the group, which bloom filters (Parquet's
// split-block filters, ORC's per-stride filters) answer. MayMatch asks it
// about the literals of `column = literal` and `column IN (...)` only,
// after the statistics left the group possible.
//
// MayContain must return true whenever it cannot be sure: for a column it
// has no filter of, a literal whose type is not exactly the column's
// (filters hash the stored representation, so a literal that would need
// a conversion is not looked up), or a filter it could not read. False
// means no row of the group holds v in column. Literals are never NULL or
// NaN (MayMatch does not ask about them: NaN is outside equality).
type Membership interface {
	MayContain(column string, v scalar.Scalar) bool
}

// absent says that the group's membership test rules v out of column.
func absent(st StatsSource, column string, v scalar.Scalar) bool {
	m, ok := st.(Membership)
	return ok && !m.MayContain(column, v)
}

// EqualityColumns lists the columns that appear, with bound literals, in
// `column = literal` or `column IN (...)` terms of the predicate, under
// any number of ANDs, ORs and NOTs: the columns whose bloom filters
// MayMatch may ask about. Readers use it to fetch only those filters.
func (p *Predicate) EqualityColumns() []string {
	if p == nil || p.expr == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(c *Column) {
		if n := c.Name(); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	var walk func(e Expr)
	walk = func(e Expr) {
		switch n := e.(type) {
		case *Compare:
			if col, _, op, ok := columnAndLiteral(n); ok && op == Eq {
				add(col)
			}
		case *In:
			if col, ok := n.Term.(*Column); ok {
				add(col)
			}
		case *And:
			for _, t := range n.Terms {
				walk(t)
			}
		case *Or:
			for _, t := range n.Terms {
				walk(t)
			}
		case *Not:
			walk(n.Term)
		}
	}
	walk(p.expr)
	return out
}

// inAbsent says that the group's membership test rules out every value
// of an IN list (NULL entries match nothing anyway). A NaN or unbound
// entry keeps the group.
func inAbsent(st StatsSource, column string, values []*Literal) bool {
	if _, ok := st.(Membership); !ok {
		return false
	}
	for _, lit := range values {
		if lit.Value == nil {
			continue
		}
		s, ok := lit.Value.(scalar.Scalar)
		if !ok || isNaN(s) {
			return false
		}
		if s.IsValid() && !absent(st, column, s) {
			return false
		}
	}
	return true
}
