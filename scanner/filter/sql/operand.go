package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/scand/scand/scanner/filter"
)

// functions are the supported functions, as the unknown-function message
// lists them.
var functions = []string{"starts_with(column, 'prefix')"}

// parseOperand parses a column or a literal; what names the expectation
// for the message when there is neither ("a value", "a condition").
func (p *parser) parseOperand(what string) (filter.Expr, error) {
	switch t := p.tok; t.kind {
	case tIdent, tQuoted:
		p.advance()
		if t.kind == tIdent && p.tok.kind == tLParen {
			return nil, callAsValue(t)
		}
		return p.parsePath(t)
	case tMinus:
		p.advance()
		if p.tok.kind != tNumber {
			return nil, p.expected(`a number after "-" (a minus applies to numbers only)`)
		}
		n := p.tok
		p.advance()
		return &filter.Literal{Value: filter.Number("-" + n.text)}, nil
	case tNumber:
		p.advance()
		return &filter.Literal{Value: filter.Number(t.text)}, nil
	case tString:
		p.advance()
		return &filter.Literal{Value: t.val}, nil
	case tKeyword:
		return p.keywordLiteral(what)
	}
	return nil, p.expected(what + p.after())
}

// parseLiteral parses an operand that must be a literal (IN values).
func (p *parser) parseLiteral(what string) (*filter.Literal, error) {
	if k := p.tok.kind; k == tIdent || k == tQuoted {
		return nil, p.expected(what + " (a literal: IN lists cannot hold columns)")
	}
	e, err := p.parseOperand(what)
	if err != nil {
		return nil, err
	}
	return e.(*filter.Literal), nil // not a column, so a literal
}

// keywordLiteral parses TRUE, FALSE, NULL, DATE '...' and TIMESTAMP '...'.
// Any other keyword is misplaced, often a column that needed quotes.
func (p *parser) keywordLiteral(what string) (filter.Expr, error) {
	kw := p.tok
	switch kw.val {
	case "TRUE", "FALSE":
		p.advance()
		return &filter.Literal{Value: kw.val == "TRUE"}, nil
	case "NULL":
		p.advance()
		return &filter.Literal{Value: nil}, nil
	case "DATE", "TIMESTAMP":
		return p.typedLiteral()
	}
	return nil, p.expectedHint(what+p.after(), quoteHint(kw))
}

// typedLiteral parses DATE 'text' or TIMESTAMP 'text', checking the
// text's shape here, where its position is known; Bind converts it.
func (p *parser) typedLiteral() (filter.Expr, error) {
	kw := p.tok
	p.advance()
	s := p.tok
	if s.kind != tString {
		example := map[string]string{"DATE": "'2026-01-31'", "TIMESTAMP": "'2026-01-31 12:00:00'"}[kw.val]
		return nil, p.expectedHint(fmt.Sprintf(`a quoted value after %s, like %s %s`, kw.text, kw.val, example), quoteHint(kw))
	}
	p.advance()
	if kw.val == "DATE" {
		if !validDate(s.val) {
			return nil, &filter.Error{Pos: s.pos, Msg: fmt.Sprintf("invalid DATE %s: expected 'YYYY-MM-DD', a day of the calendar", clip(s.text))}
		}
		return &filter.Literal{Value: filter.Date(s.val)}, nil
	}
	if !validTimestamp(s.val) {
		return nil, &filter.Error{Pos: s.pos, Msg: fmt.Sprintf("invalid TIMESTAMP %s: expected 'YYYY-MM-DD HH:MM:SS', "+
			"optionally with a fraction (.ffffff) and a zone (Z, +02:00, Europe/Paris)", clip(s.text))}
	}
	return &filter.Literal{Value: filter.Timestamp(s.val)}, nil
}

// parsePath parses the rest of a column path whose first name is first:
// {"." name}. After a dot a keyword is a plain name: nothing else could
// follow there.
func (p *parser) parsePath(first token) (*filter.Column, error) {
	path := []string{first.val}
	for p.tok.kind == tDot {
		p.advance()
		switch p.tok.kind {
		case tIdent, tQuoted:
			path = append(path, p.tok.val)
		case tKeyword:
			path = append(path, p.tok.text)
		default:
			return nil, p.expected(`a field name after "."`)
		}
		p.advance()
	}
	return &filter.Column{Path: path}, nil
}

// parseCall parses a function call used as a condition; name is consumed
// and the "(" is next.
func (p *parser) parseCall(name token) (term, error) {
	if !strings.EqualFold(name.val, "starts_with") {
		return term{}, unknownFunction(name)
	}
	p.advance()
	arg, err := p.parseOperand("a column as the first argument of starts_with")
	if err != nil {
		return term{}, err
	}
	if p.tok.kind != tComma {
		return term{}, p.expected(`"," after the first argument of starts_with`)
	}
	p.advance()
	if p.tok.kind != tString {
		return term{}, p.expected(`a quoted prefix as the second argument of starts_with`)
	}
	prefix := p.tok.val
	p.advance()
	if p.tok.kind != tRParen {
		return term{}, p.expected(`")" to close starts_with(`)
	}
	p.advance()
	return term{e: &filter.StartsWith{Term: arg, Prefix: prefix}, depth: 1}, nil
}

// callAsValue refuses a function call where a value is expected: the
// subset has no functions that return values.
func callAsValue(name token) error {
	if strings.EqualFold(name.val, "starts_with") {
		return &filter.Error{Pos: name.pos, Msg: fmt.Sprintf(
			"%s(...) is a condition, not a value: use it alone, as in WHERE %s(column, 'prefix')", name.text, name.text)}
	}
	return unknownFunction(name)
}

func unknownFunction(name token) error {
	return &filter.Error{Pos: name.pos, Msg: fmt.Sprintf("unknown function %s(); the supported functions are: %s",
		clip(name.text), strings.Join(functions, ", "))}
}

// expected is the syntax error "expected <what>, found <tok>" at tok; a
// lexing error met there is the error instead.
func (p *parser) expected(what string) error { return p.expectedHint(what, "") }

// expectedHint is expected with a hint appended, in parentheses.
func (p *parser) expectedHint(what, hint string) error {
	if p.tok.kind == tError {
		return p.tok.err
	}
	msg := fmt.Sprintf("expected %s, found %s", what, describe(p.tok))
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return &filter.Error{Pos: p.tok.pos, Msg: msg}
}

// quoteHint tells how to name a column that is spelled like keyword kw.
func quoteHint(kw token) string {
	return fmt.Sprintf(`a column named %s must be double-quoted: "%s"`, kw.text, kw.text)
}

// after is " after <prev>", or nothing at the start of the text.
func (p *parser) after() string {
	if p.prev.kind == tNone {
		return ""
	}
	return " after " + describe(p.prev)
}

// describe names a token in a message the way the user wrote it.
func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString, tQuoted:
		return clip(t.text)
	}
	return `"` + clip(t.text) + `"`
}

// clip shortens s to about 40 bytes, on a rune boundary, so that a message
// never echoes a megabyte string.
func clip(s string) string {
	const n = 40
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
