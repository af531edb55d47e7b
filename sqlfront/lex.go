package sqlfront

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is a token's class. The statement level needs few: words,
// quoted names and strings, numbers and punctuation; anything else (the
// operators of a condition) is one character of kind tOther, which only
// the condition's own parser reads.
type kind uint8

const (
	tEOF    kind = iota
	tWord        // bare identifier or keyword; val is the text
	tQuoted      // "double-quoted identifier"; val is the name
	tString      // 'single-quoted string'; val is the contents
	tNumber      // digits (and what follows them up to a non-word rune)
	tStar
	tLParen
	tRParen
	tComma
	tDot
	tSemicolon
	tParam // ?, or $n / :name: a bind parameter
	tOther
)

// token is one lexeme; text slices the source.
type token struct {
	kind kind
	pos  int
	text string
	val  string
}

// is reports whether t is the bare word kw, case-insensitively.
func (t token) is(kw string) bool { return t.kind == tWord && strings.EqualFold(t.text, kw) }

type lexer struct {
	src string
	off int
	// comments are the /* */ comments met so far, [start, end) pairs:
	// the condition's own language has only -- comments, so the
	// condition's text is handed over with these blanked.
	comments [][2]int
}

// next returns the next token, or an *Error for an unterminated quote or
// comment.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	start := l.off
	if start >= len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := l.src[start]
	switch c {
	case '\'', '"':
		return l.quoted(start)
	case '*', '(', ')', ',', '.', ';', '?':
		l.off++
		return token{kind: punct[c], pos: start, text: l.src[start:l.off]}, nil
	case '$', ':':
		if end := l.wordEnd(start + 1); end > start+1 {
			l.off = end
			return token{kind: tParam, pos: start, text: l.src[start:end]}, nil
		}
	}
	if c >= '0' && c <= '9' {
		l.off = l.wordEnd(start)
		if l.off+1 < len(l.src) && l.src[l.off] == '.' && l.src[l.off+1] >= '0' && l.src[l.off+1] <= '9' {
			l.off = l.wordEnd(l.off + 1)
		}
		return token{kind: tNumber, pos: start, text: l.src[start:l.off]}, nil
	}
	r, size := utf8.DecodeRuneInString(l.src[start:])
	if r == '_' || unicode.IsLetter(r) {
		l.off = l.wordEnd(start)
		t := l.src[start:l.off]
		return token{kind: tWord, pos: start, text: t, val: t}, nil
	}
	l.off += size
	return token{kind: tOther, pos: start, text: l.src[start:l.off]}, nil
}

var punct = [256]kind{'*': tStar, '(': tLParen, ')': tRParen, ',': tComma, '.': tDot, ';': tSemicolon, '?': tParam}

// wordEnd is the end of the run of identifier runes at i.
func (l *lexer) wordEnd(i int) int {
	for i < len(l.src) {
		r, size := utf8.DecodeRuneInString(l.src[i:])
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			break
		}
		i += size
	}
	return i
}

// skipSpace skips whitespace, -- comments (to the end of the line) and
// /* comments */.
func (l *lexer) skipSpace() error {
	for l.off < len(l.src) {
		rest := l.src[l.off:]
		switch {
		case strings.HasPrefix(rest, "--"):
			nl := strings.IndexByte(rest, '\n')
			if nl < 0 {
				l.off = len(l.src)
				return nil
			}
			l.off += nl + 1
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				return syntaxf(l.off, "unterminated comment: add the closing */")
			}
			l.comments = append(l.comments, [2]int{l.off, l.off + 2 + end + 2})
			l.off += 2 + end + 2
		default:
			r, size := utf8.DecodeRuneInString(rest)
			if !unicode.IsSpace(r) {
				return nil
			}
			l.off += size
		}
	}
	return nil
}

// quoted lexes 'string' or "identifier"; the quote doubled stands for
// itself.
func (l *lexer) quoted(start int) (token, error) {
	q := l.src[start]
	var b strings.Builder
	seg := start + 1
	for i := seg; ; {
		j := strings.IndexByte(l.src[i:], q)
		if j < 0 {
			if q == '\'' {
				return token{}, syntaxf(start, "unterminated string starting at position %d: add the closing ' (write '' for a quote inside)", start)
			}
			return token{}, syntaxf(start, `unterminated quoted identifier starting at position %d: add the closing " (write "" for a quote inside)`, start)
		}
		j += i
		if j+1 < len(l.src) && l.src[j+1] == q {
			b.WriteString(l.src[seg : j+1])
			i, seg = j+2, j+2
			continue
		}
		b.WriteString(l.src[seg:j])
		l.off = j + 1
		k := tString
		if q == '"' {
			k = tQuoted
			if b.Len() == 0 {
				return token{}, syntaxf(start, `empty quoted identifier "": a name needs at least one character`)
			}
		}
		return token{kind: k, pos: start, text: l.src[start:l.off], val: b.String()}, nil
	}
}
