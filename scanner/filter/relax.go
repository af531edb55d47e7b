package filter

// Relax weakens e to a predicate over the columns keep accepts only, such
// that wherever e is true the result is true as well. Pruning on the
// result is therefore sound: a group it rules out holds no row e accepts.
// The server prunes hive partitions this way before it has read a single
// footer, when the other columns' types are not known yet.
//
// It pushes NOT down to the leaves (De Morgan holds in three-valued logic)
// and replaces every leaf that reads another column, negated or not, by
// TRUE; AND and OR are monotone, so the result stays implied. It returns
// nil when nothing of e is left (it is TRUE everywhere).
func Relax(e Expr, keep func(column string) bool) Expr {
	r := relax(e, false, keep)
	if isTrue(r) {
		return nil
	}
	return r
}

func relax(e Expr, negate bool, keep func(string) bool) Expr {
	switch n := e.(type) {
	case *And:
		return relaxTerms(n.Terms, negate, negate, keep)
	case *Or:
		return relaxTerms(n.Terms, !negate, negate, keep)
	case *Not:
		return relax(n.Term, !negate, keep)
	}
	for _, c := range Columns(e) {
		if !keep(c) {
			return &Literal{Value: true}
		}
	}
	if negate {
		return &Not{Term: e}
	}
	return e
}

// relaxTerms relaxes the terms of an AND (or, when or is set, of an OR)
// whose terms are negated when negate is set.
func relaxTerms(terms []Expr, or, negate bool, keep func(string) bool) Expr {
	var out []Expr
	for _, t := range terms {
		r := relax(t, negate, keep)
		switch {
		case isTrue(r) && or:
			return r // TRUE OR anything
		case isTrue(r):
			continue // TRUE AND x is x
		}
		out = append(out, r)
	}
	switch {
	case len(out) == 0:
		return &Literal{Value: true}
	case len(out) == 1:
		return out[0]
	case or:
		return &Or{Terms: out}
	}
	return &And{Terms: out}
}

func isTrue(e Expr) bool {
	l, ok := e.(*Literal)
	return ok && l.Value == true
}
