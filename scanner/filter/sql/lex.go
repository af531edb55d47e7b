package sql

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scand/scand/scanner/filter"
)

// kind is a token's class.
type kind uint8

const (
	tNone    kind = iota // no token yet (the parser's prev before the first)
	tEOF                 // end of input
	tError               // a lexing error, held in token.err
	tIdent               // bare identifier
	tQuoted              // double-quoted identifier
	tKeyword             // reserved word; val is its upper-case spelling
	tNumber              // numeric literal, text as written
	tString              // single-quoted string; val is its contents
	tOp                  // comparison operator, in token.op
	tLParen
	tRParen
	tComma
	tDot
	tMinus
)

// token is one lexeme. text is a slice of the source, so lexing allocates
// only for strings and identifiers that hold a doubled quote.
type token struct {
	kind kind
	pos  int    // byte offset of the first byte
	text string // as written
	val  string // decoded identifier or string; upper-case keyword
	op   filter.CompareOp
	err  error
}

// keywords are reserved: as a column name they must be double-quoted. The
// list matches the one filter's String uses to decide what to quote.
var keywords = []string{
	"AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE",
	"LIKE", "BETWEEN", "DATE", "TIMESTAMP",
}

// lexer produces tokens on demand, so a 1 MiB text never becomes a slice
// of half a million tokens.
type lexer struct {
	src string
	off int
}

func (l *lexer) next() token {
	l.skipSpace()
	start := l.off
	if start >= len(l.src) {
		return token{kind: tEOF, pos: start}
	}
	c := l.src[start]
	switch {
	case c == '\'':
		return l.quotedToken(start, tString)
	case c == '"':
		return l.quotedToken(start, tQuoted)
	case isDigit(c) || c == '.' && start+1 < len(l.src) && isDigit(l.src[start+1]):
		return l.number(start)
	}
	if t, ok := l.punct(start); ok {
		return t
	}
	r, _ := utf8.DecodeRuneInString(l.src[start:])
	if r == '_' || unicode.IsLetter(r) {
		return l.ident(start)
	}
	if r == '!' {
		return l.fail(start, `unexpected character "!": write != or <> for "not equal"`)
	}
	return l.fail(start, "unexpected character %q", r)
}

// skipSpace skips ASCII whitespace and -- comments, which run to the end
// of the line.
func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		switch c := l.src[l.off]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.off++
		case strings.HasPrefix(l.src[l.off:], "--"):
			nl := strings.IndexByte(l.src[l.off:], '\n')
			if nl < 0 {
				l.off = len(l.src)
				return
			}
			l.off += nl + 1
		default:
			return
		}
	}
}

// punct lexes punctuation and the comparison operators.
func (l *lexer) punct(start int) (token, bool) {
	two := l.src[start:min(start+2, len(l.src))]
	t := token{pos: start, kind: tOp}
	switch two {
	case "<=":
		t.op = filter.Le
	case ">=":
		t.op = filter.Ge
	case "!=", "<>":
		t.op = filter.Ne
	default:
		two = two[:1]
		switch two {
		case "=":
			t.op = filter.Eq
		case "<":
			t.op = filter.Lt
		case ">":
			t.op = filter.Gt
		default:
			k := punctKind(two[0])
			if k == tNone {
				return token{}, false
			}
			t.kind = k
		}
	}
	l.off = start + len(two)
	t.text = two
	return t, true
}

func punctKind(c byte) kind {
	switch c {
	case '(':
		return tLParen
	case ')':
		return tRParen
	case ',':
		return tComma
	case '.':
		return tDot
	case '-':
		return tMinus
	}
	return tNone
}

// number lexes digits[.digits][e[+-]digits] or .digits[e[+-]digits],
// keeping the text as written: Bind parses it for the column it meets.
func (l *lexer) number(start int) token {
	s := l.src
	i := digitsEnd(s, start)
	if i < len(s) && s[i] == '.' {
		i = digitsEnd(s, i+1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if digitsEnd(s, j) == j {
			return l.fail(start, "malformed number %q: expected digits after the exponent", wordAt(s, start))
		}
		i = digitsEnd(s, j)
	}
	// "1.2.3" or "12abc" is a typo, not two tokens side by side.
	if r, _ := utf8.DecodeRuneInString(s[i:]); i < len(s) && (r == '.' || isIdentRune(r)) {
		return l.fail(start, "malformed number %q", wordAt(s, start))
	}
	l.off = i
	return token{kind: tNumber, pos: start, text: s[start:i]}
}

// ident lexes a bare identifier and tells keywords apart, case-insensitively.
func (l *lexer) ident(start int) token {
	i := start
	for i < len(l.src) {
		r, size := utf8.DecodeRuneInString(l.src[i:])
		if !isIdentRune(r) {
			break
		}
		i += size
	}
	l.off = i
	text := l.src[start:i]
	for _, kw := range keywords {
		if strings.EqualFold(text, kw) {
			return token{kind: tKeyword, pos: start, text: text, val: kw}
		}
	}
	return token{kind: tIdent, pos: start, text: text, val: text}
}

// quotedToken lexes 'string' or "identifier"; inside, the quote character
// doubled stands for itself.
func (l *lexer) quotedToken(start int, k kind) token {
	q := l.src[start]
	var b strings.Builder // used only once a doubled quote is seen
	seg := start + 1
	for i := seg; ; {
		j := strings.IndexByte(l.src[i:], q)
		if j < 0 {
			return l.unterminated(start, k)
		}
		j += i
		if j+1 < len(l.src) && l.src[j+1] == q {
			b.WriteString(l.src[seg : j+1])
			i, seg = j+2, j+2
			continue
		}
		val := l.src[seg:j]
		if b.Len() > 0 {
			b.WriteString(val)
			val = b.String()
		}
		l.off = j + 1
		if k == tQuoted && val == "" {
			return l.fail(start, `empty quoted identifier "": a column name needs at least one character`)
		}
		return token{kind: k, pos: start, text: l.src[start:l.off], val: val}
	}
}

func (l *lexer) unterminated(start int, k kind) token {
	if k == tString {
		return l.fail(start, "unterminated string starting at position %d: add the closing ' (write '' for a quote inside)", start)
	}
	return l.fail(start, `unterminated quoted identifier starting at position %d: add the closing " (write "" for a quote inside)`, start)
}

// fail ends lexing: the parser stops at the first tError it meets.
func (l *lexer) fail(pos int, format string, args ...any) token {
	l.off = len(l.src)
	return token{kind: tError, pos: pos, err: &filter.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentRune: letters (any script), combining marks, decimal digits and _.
// A digit cannot start an identifier; next() sends those to number.
func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// wordAt is the run of identifier characters and dots at i, to quote a
// malformed number whole in a message.
func wordAt(s string, i int) string {
	j := i
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r != '.' && !isIdentRune(r) {
			break
		}
		j += size
	}
	return clip(s[i:j])
}
