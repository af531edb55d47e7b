package filter

import "fmt"

// MaxTerms bounds a filter's operations: comparisons, IN, LIKE,
// starts_with, IS NULL, NOT, and each AND or OR once however many terms it
// joins (an AND directly inside an AND is the same AND, as is an OR inside
// an OR). Evaluation costs about one pass over a batch per operation, so
// without a cap a filter of 50,000 copies of `i > 0` (400 KB of text,
// under MaxTextBytes) costs 50,000 times what `i > 0` costs, and one
// request can hold a core for minutes. An IN list is one operation
// whatever its length (a hash lookup per row), which is how long lists
// of values should be written.
const MaxTerms = 1_000

// CheckCost refuses a filter with more than MaxTerms operations, with an
// error wrapping ErrTooComplex that names the limit. Both front ends'
// trees go through it before they are bound or evaluated. It walks the
// tree once and keeps nothing, so it costs what parsing did.
func CheckCost(e Expr) error {
	if n := countTerms(e, nil); n > MaxTerms {
		return fmt.Errorf("filter: %d operations (comparisons, IN, LIKE, IS NULL, NOT, AND, OR), more than filter.MaxTerms (%d) "+
			"that a filter may evaluate per row; write lists of values as IN (...) and drop repeated terms: %w", n, MaxTerms, ErrTooComplex)
	}
	return nil
}

// countTerms counts e's operations; parent is the node above e, so that an
// AND in an AND (an OR in an OR) counts as the one it flattens into.
func countTerms(e, parent Expr) int {
	switch n := e.(type) {
	case *Column, *Literal:
		return 0
	case *And:
		c := 1
		if _, nested := parent.(*And); nested {
			c = 0
		}
		for _, t := range n.Terms {
			c += countTerms(t, n)
		}
		return c
	case *Or:
		c := 1
		if _, nested := parent.(*Or); nested {
			c = 0
		}
		for _, t := range n.Terms {
			c += countTerms(t, n)
		}
		return c
	case *Compare:
		return 1 + countTerms(n.Left, n) + countTerms(n.Right, n)
	case *Not:
		return 1 + countTerms(n.Term, n)
	case *IsNull:
		return 1 + countTerms(n.Term, n)
	case *In:
		return 1 + countTerms(n.Term, n)
	case *Like:
		return 1 + countTerms(n.Term, n)
	case *StartsWith:
		return 1 + countTerms(n.Term, n)
	}
	return 1
}
