package sql

import (
	"fmt"
	"unicode/utf8"

	"github.com/scand/scand/scanner/filter"
)

// Parse parses a SQL WHERE condition (without the WHERE keyword) into
// scand's predicate form. A syntax error is a *filter.Error whose Pos is a
// byte offset in text; a text beyond filter's limits is an error wrapping
// filter.ErrTooComplex. Parse is safe for concurrent use.
func Parse(text string) (filter.Expr, error) {
	if len(text) > filter.MaxTextBytes {
		return nil, fmt.Errorf("filter: the text is %d bytes, longer than filter.MaxTextBytes (%d): %w",
			len(text), filter.MaxTextBytes, filter.ErrTooComplex)
	}
	if pos := invalidUTF8(text); pos >= 0 {
		return nil, &filter.Error{Pos: pos, Msg: "invalid UTF-8: the text must be UTF-8 encoded"}
	}
	p := &parser{lx: lexer{src: text}, groupStart: -1}
	p.advance()
	t, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.expected("AND, OR or end of input")
	}
	return t.e, nil
}

// parser is a recursive-descent parser with one token of lookahead.
type parser struct {
	lx   lexer
	tok  token // the next token, not yet consumed
	prev token // the last token consumed, for "after X" in messages
	// open counts the parentheses and NOTs around tok; it bounds the
	// recursion before any of it happens (see doc.go, "Depth").
	open int
	// groupStart is the offset of the first token inside the innermost
	// "(" opened so far: a NOT there shares the group's level.
	groupStart int
}

// term is a parsed condition with its depth. grouped says that a
// parenthesis already accounts for its top node, so that another one
// around it counts as a level of its own.
type term struct {
	e       filter.Expr
	depth   int
	grouped bool
}

func (p *parser) advance() {
	p.prev = p.tok
	p.tok = p.lx.next()
}

func (p *parser) isKeyword(kw string) bool { return p.tok.kind == tKeyword && p.tok.val == kw }

// parseOr: or := and {OR and}.
func (p *parser) parseOr() (term, error) {
	return p.parseChain("OR", p.parseAnd, func(ts []filter.Expr) filter.Expr { return &filter.Or{Terms: ts} })
}

// parseAnd: and := not {AND not}.
func (p *parser) parseAnd() (term, error) {
	return p.parseChain("AND", p.parseNot, func(ts []filter.Expr) filter.Expr { return &filter.And{Terms: ts} })
}

// parseChain parses sub {kw sub} into one flat node: a chain is a loop,
// not a recursion, so 100k terms cost no stack and one level of depth.
func (p *parser) parseChain(kw string, sub func() (term, error), build func([]filter.Expr) filter.Expr) (term, error) {
	first, err := sub()
	if err != nil || !p.isKeyword(kw) {
		return first, err
	}
	pos := p.tok.pos
	terms := []filter.Expr{first.e}
	depth := first.depth
	for p.isKeyword(kw) {
		p.advance()
		t, err := sub()
		if err != nil {
			return term{}, err
		}
		terms = append(terms, t.e)
		depth = max(depth, t.depth)
	}
	return p.node(build(terms), depth+1, pos)
}

// parseNot: not := NOT not | primary.
func (p *parser) parseNot() (term, error) {
	if !p.isKeyword("NOT") {
		return p.parsePrimary()
	}
	pos := p.tok.pos
	// "(NOT x)" is how Not renders: the NOT and its parenthesis are one
	// level, or a rendered chain of 100 NOTs would not parse back.
	if pos != p.groupStart {
		if err := p.enter(pos); err != nil {
			return term{}, err
		}
		defer p.leave()
	}
	p.advance()
	t, err := p.parseNot()
	if err != nil {
		return term{}, err
	}
	return p.node(&filter.Not{Term: t.e}, t.depth+1, pos)
}

// parsePrimary: primary := "(" or ")" | function call | predicate.
func (p *parser) parsePrimary() (term, error) {
	if p.tok.kind == tLParen {
		return p.parseGroup()
	}
	start := p.tok
	if start.kind == tIdent {
		p.advance()
		if p.tok.kind == tLParen {
			return p.parseCall(start)
		}
		col, err := p.parsePath(start)
		if err != nil {
			return term{}, err
		}
		return p.parsePredicate(col, start)
	}
	left, err := p.parseOperand("a condition")
	if err != nil {
		return term{}, err
	}
	return p.parsePredicate(left, start)
}

// parseGroup parses "(" or ")".
func (p *parser) parseGroup() (term, error) {
	open := p.tok
	if err := p.enter(open.pos); err != nil {
		return term{}, err
	}
	p.advance()
	p.groupStart = p.tok.pos
	t, err := p.parseOr()
	if err != nil {
		return term{}, err
	}
	if p.tok.kind != tRParen {
		return term{}, p.expected(fmt.Sprintf(`AND, OR or ")" to close the "(" at position %d`, open.pos))
	}
	p.leave()
	p.advance()
	// The parenthesis merges with the node it wraps, as in the rendered
	// form; around a bare column or another parenthesis it is a level.
	if t.grouped || t.depth == 0 {
		t.depth++
	}
	t.grouped = true
	return t, p.checkDepth(t.depth, open.pos)
}

// enter opens a level of recursion, refusing the one past the limit.
func (p *parser) enter(pos int) error {
	if p.open >= filter.MaxDepth {
		return tooDeep(pos)
	}
	p.open++
	return nil
}

func (p *parser) leave() { p.open-- }

// node is a new operation of the given depth, refused past the limit.
func (p *parser) node(e filter.Expr, depth, pos int) (term, error) {
	return term{e: e, depth: depth}, p.checkDepth(depth, pos)
}

func (p *parser) checkDepth(depth, pos int) error {
	if depth > filter.MaxDepth {
		return tooDeep(pos)
	}
	return nil
}

func tooDeep(pos int) error {
	return fmt.Errorf("filter: at position %d: nested deeper than filter.MaxDepth (%d levels; "+
		"each parenthesis, NOT and nested operation is one): %w", pos, filter.MaxDepth, filter.ErrTooComplex)
}

func tooManyValues(pos int) error {
	return fmt.Errorf("filter: at position %d: IN list longer than filter.MaxInValues (%d values): %w",
		pos, filter.MaxInValues, filter.ErrTooComplex)
}

// invalidUTF8 is the offset of the first byte that is not UTF-8, or -1.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
