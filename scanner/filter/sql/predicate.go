package sql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scand/scand/scanner/filter"
)

// operators lists what may follow an operand, for messages.
const operators = "an operator (=, !=, <>, <, <=, >, >=, IN, NOT IN, LIKE, NOT LIKE, BETWEEN, NOT BETWEEN, IS)"

// parsePredicate parses what follows the operand left, which began at
// start: a comparison, IN, BETWEEN, LIKE or IS, each with its NOT form. A
// column or TRUE/FALSE may also stand alone as a boolean term.
func (p *parser) parsePredicate(left filter.Expr, start token) (term, error) {
	switch {
	case p.tok.kind == tOp:
		return p.parseCompare(left)
	case p.isKeyword("NOT"):
		return p.parseNegated(left)
	case p.isKeyword("IN"):
		return p.parseIn(left, false)
	case p.isKeyword("BETWEEN"):
		return p.parseBetween(left, false)
	case p.isKeyword("LIKE"):
		return p.parseLike(left, false)
	case p.isKeyword("IS"):
		return p.parseIs(left)
	}
	if standsAlone(left) && p.atTermEnd() {
		return term{e: left}, nil
	}
	hint := ""
	if c, ok := left.(*filter.Column); ok && start.pos == 0 && strings.EqualFold(c.Name(), "where") {
		hint = "leave out WHERE: the filter is the condition alone"
	}
	return term{}, p.expectedHint(operators+" after "+describe(p.prev), hint)
}

// standsAlone: a boolean column, or TRUE/FALSE, is a condition by itself.
func standsAlone(e filter.Expr) bool {
	switch v := e.(type) {
	case *filter.Column:
		return true
	case *filter.Literal:
		_, ok := v.Value.(bool)
		return ok
	}
	return false
}

func (p *parser) atTermEnd() bool {
	k := p.tok.kind
	return k == tEOF || k == tRParen || p.isKeyword("AND") || p.isKeyword("OR")
}

func (p *parser) parseCompare(left filter.Expr) (term, error) {
	op := p.tok.op
	p.advance()
	if op == filter.Eq && p.tok.kind == tOp && p.tok.op == filter.Eq && p.tok.pos == p.prev.pos+1 {
		return term{}, p.expectedHint(`a value after "="`, "use = to compare: SQL has no ==")
	}
	right, err := p.parseOperand("a value")
	if err != nil {
		return term{}, err
	}
	hintValue(left, right)
	return term{e: &filter.Compare{Op: op, Left: left, Right: right}, depth: 1}, nil
}

// hintValue sets the hint of a comparison's right side when both sides
// are columns and the right one a single name (see stringHint).
func hintValue(left, right filter.Expr) {
	if _, ok := left.(*filter.Column); ok {
		if c, ok := right.(*filter.Column); ok && len(c.Path) == 1 {
			c.Hint = stringHint(c.Path[0])
		}
	}
}

// stringHint is the hint for a comparison's right side that names no
// column: most often a string meant as a value, written in double quotes
// ("Boston", as other languages write strings) or in none. The hint does
// not depend on which, so that a filter's String parses back the same.
func stringHint(name string) string {
	return "string literals take single quotes: '" + strings.ReplaceAll(clip(name), "'", "''") + "'"
}

// parseNegated parses NOT IN, NOT LIKE and NOT BETWEEN.
func (p *parser) parseNegated(left filter.Expr) (term, error) {
	p.advance()
	switch {
	case p.isKeyword("IN"):
		return p.parseIn(left, true)
	case p.isKeyword("BETWEEN"):
		return p.parseBetween(left, true)
	case p.isKeyword("LIKE"):
		return p.parseLike(left, true)
	}
	return term{}, p.expected(`IN, LIKE or BETWEEN after NOT`)
}

// parseIn parses IN (v, ...), left of it already parsed. The values are
// literals; their count is checked before each is parsed, so a hostile
// list costs at most filter.MaxInValues of them.
func (p *parser) parseIn(left filter.Expr, negated bool) (term, error) {
	p.advance()
	if p.tok.kind != tLParen {
		return term{}, p.expected(`"(" after IN`)
	}
	open := p.tok.pos
	p.advance()
	var values []*filter.Literal
	for {
		if len(values) == filter.MaxInValues {
			return term{}, tooManyValues(p.tok.pos)
		}
		v, err := p.parseLiteral("a value in the IN list")
		if err != nil {
			return term{}, err
		}
		values = append(values, v)
		if p.tok.kind == tRParen {
			break
		}
		if p.tok.kind != tComma {
			return term{}, p.expected(fmt.Sprintf(`"," or ")" in the IN list opened at position %d`, open))
		}
		p.advance()
	}
	p.advance()
	in := &filter.In{Term: left, Values: values, Negated: negated, Nulls: filter.SQLNulls}
	return term{e: in, depth: 1}, nil
}

// parseBetween parses BETWEEN low AND high into left >= low AND left <=
// high: the form has no Between node, and the binder and the pruner
// already know both comparisons.
func (p *parser) parseBetween(left filter.Expr, negated bool) (term, error) {
	p.advance()
	low, err := p.parseOperand("a value")
	if err != nil {
		return term{}, err
	}
	if !p.isKeyword("AND") {
		return term{}, p.expected("AND between the two bounds of BETWEEN")
	}
	p.advance()
	high, err := p.parseOperand("a value")
	if err != nil {
		return term{}, err
	}
	hintValue(left, low)
	hintValue(left, high)
	var e filter.Expr = &filter.And{Terms: []filter.Expr{
		&filter.Compare{Op: filter.Ge, Left: left, Right: low},
		// A copy, so that no node of the tree is shared: whoever
		// rewrites one comparison must not rewrite the other.
		&filter.Compare{Op: filter.Le, Left: clone(left), Right: high},
	}}
	if !negated {
		return term{e: e, depth: 2}, nil
	}
	return term{e: &filter.Not{Term: e}, depth: 3}, nil
}

func clone(e filter.Expr) filter.Expr {
	switch v := e.(type) {
	case *filter.Column:
		return &filter.Column{Path: slices.Clone(v.Path)}
	case *filter.Literal:
		c := *v
		return &c
	}
	return e
}

// parseLike parses LIKE 'pattern', keeping the pattern as written.
func (p *parser) parseLike(left filter.Expr, negated bool) (term, error) {
	p.advance()
	if p.tok.kind != tString {
		return term{}, p.expected("a quoted pattern after LIKE")
	}
	pat := p.tok
	if !evenBackslashes(pat.val) {
		return term{}, &filter.Error{Pos: pat.pos, Msg: fmt.Sprintf(
			`LIKE pattern %s ends with a lone backslash, which escapes nothing; write \\ for a backslash`, clip(pat.text))}
	}
	p.advance()
	if p.tok.kind == tIdent && strings.EqualFold(p.tok.val, "ESCAPE") {
		return term{}, &filter.Error{Pos: p.tok.pos, Msg: `ESCAPE is not supported: in a LIKE pattern a backslash escapes the next character`}
	}
	return term{e: &filter.Like{Term: left, Pattern: pat.val, Negated: negated}, depth: 1}, nil
}

// evenBackslashes: the run of backslashes ending s has even length, so the
// last one is escaped rather than escaping.
func evenBackslashes(s string) bool {
	n := len(s) - len(strings.TrimRight(s, `\`))
	return n%2 == 0
}

// parseIs parses IS NULL and IS NOT NULL.
func (p *parser) parseIs(left filter.Expr) (term, error) {
	p.advance()
	negated := p.isKeyword("NOT")
	if negated {
		p.advance()
	}
	if !p.isKeyword("NULL") {
		if negated {
			return term{}, p.expected("NULL after IS NOT")
		}
		return term{}, p.expected("NULL or NOT NULL after IS")
	}
	p.advance()
	return term{e: &filter.IsNull{Term: left, Negated: negated}, depth: 1}, nil
}
