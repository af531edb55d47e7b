package filter

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// LIKE and starts_with are matched by hand, over the string array's
// offsets and bytes: arrow-go v18 has no string-match kernels (no
// match_like, no starts_with), and going through Go strings per row would
// allocate per row. The loops here are the only row loops of Eval.

// likePattern is a compiled LIKE pattern: the pattern split at its %s into
// segments (len > 1 when there is a %), each a run of literal bytes and _
// wildcards. The first segment matches at the start, the last at the end,
// and with % as the only repetition, matching each middle segment at its
// leftmost place is optimal, so no backtracking is needed.
type likePattern struct {
	segments [][]likeToken
	lits     [][]byte // per segment: its bytes when it has no _, else nil
}

// likeToken is one literal byte, or (any) one character.
type likeToken struct {
	b   byte
	any bool
}

// compileLike parses a LIKE pattern: % any run, _ one character, a
// backslash escapes the next character (itself, % or _). A pattern ending
// in a lone backslash is an error, as in DuckDB and PostgreSQL.
func compileLike(pattern string) (*likePattern, error) {
	p := &likePattern{}
	seg := []likeToken{}
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '\\':
			if i+1 == len(pattern) {
				return nil, Errorf("LIKE pattern %s ends with an escape character", quoteString(pattern))
			}
			i++
			seg = append(seg, likeToken{b: pattern[i]})
		case '_':
			seg = append(seg, likeToken{any: true})
		case '%':
			p.segments = append(p.segments, seg)
			seg = []likeToken{}
		default:
			seg = append(seg, likeToken{b: c})
		}
	}
	p.segments = append(p.segments, seg)
	p.lits = make([][]byte, len(p.segments))
	for i, seg := range p.segments {
		p.lits[i], _ = literal(seg)
	}
	return p, nil
}

// match reports whether s matches the whole pattern. chars says _ counts
// UTF-8 characters (string columns) rather than bytes (binary columns).
func (p *likePattern) match(s []byte, chars bool) bool {
	segs := p.segments
	pos := matchAt(segs[0], s, 0, chars)
	if pos < 0 {
		return false
	}
	if len(segs) == 1 {
		return pos == len(s)
	}
	for i, seg := range segs[1 : len(segs)-1] {
		if pos = p.find(i+1, seg, s, pos, chars); pos < 0 {
			return false
		}
	}
	last := len(segs) - 1
	if lit := p.lits[last]; lit != nil {
		// UTF-8 is self-synchronizing: literal bytes of whole
		// characters only match at character boundaries.
		return len(s)-len(lit) >= pos && bytes.HasSuffix(s, lit)
	}
	return endsWith(segs[last], s, pos, chars)
}

// find places segment i (seg) leftmost at or after pos, by bytes.Index
// when it is literal.
func (p *likePattern) find(i int, seg []likeToken, s []byte, pos int, chars bool) int {
	lit := p.lits[i]
	if lit == nil {
		return find(seg, s, pos, chars)
	}
	at := bytes.Index(s[pos:], lit)
	if at < 0 {
		return -1
	}
	return pos + at + len(lit)
}

// matchAt matches seg at s[pos:], giving the end of the match or -1.
func matchAt(seg []likeToken, s []byte, pos int, chars bool) int {
	for _, t := range seg {
		if pos >= len(s) {
			return -1
		}
		switch {
		case t.any && chars:
			_, n := utf8.DecodeRune(s[pos:])
			pos += n
		case t.any:
			pos++
		case s[pos] != t.b:
			return -1
		default:
			pos++
		}
	}
	return pos
}

// find matches seg at its leftmost place at or after pos, giving the end
// of the match or -1. Candidate starts are character boundaries.
func find(seg []likeToken, s []byte, pos int, chars bool) int {
	for start := pos; start <= len(s); start += step(s, start, chars) {
		if end := matchAt(seg, s, start, chars); end >= 0 {
			return end
		}
		if start == len(s) {
			break
		}
	}
	return -1
}

// endsWith says whether seg matches s exactly up to its end, starting at
// or after pos.
func endsWith(seg []likeToken, s []byte, pos int, chars bool) bool {
	for start := pos; start <= len(s); start += step(s, start, chars) {
		if matchAt(seg, s, start, chars) == len(s) {
			return true
		}
		if start == len(s) {
			break
		}
	}
	return false
}

func step(s []byte, pos int, chars bool) int {
	if !chars || pos >= len(s) {
		return 1
	}
	_, n := utf8.DecodeRune(s[pos:])
	return n
}

// literal is seg as plain bytes when it has no wildcard.
func literal(seg []likeToken) ([]byte, bool) {
	out := make([]byte, len(seg))
	for i, t := range seg {
		if t.any {
			return nil, false
		}
		out[i] = t.b
	}
	return out, true
}

// matcher picks the fastest test for the pattern: the common shapes
// ('abc', 'abc%', '%abc', '%abc%') run as bytes.Equal, HasPrefix,
// HasSuffix and Contains.
func (p *likePattern) matcher(chars bool) func([]byte) bool {
	lits := make([][]byte, len(p.segments))
	for i, seg := range p.segments {
		lit, ok := literal(seg)
		if !ok {
			return func(s []byte) bool { return p.match(s, chars) }
		}
		lits[i] = lit
	}
	switch {
	case len(lits) == 1:
		return func(s []byte) bool { return bytes.Equal(s, lits[0]) }
	case len(lits) == 2 && len(lits[1]) == 0:
		return func(s []byte) bool { return bytes.HasPrefix(s, lits[0]) }
	case len(lits) == 2 && len(lits[0]) == 0:
		return func(s []byte) bool { return bytes.HasSuffix(s, lits[1]) }
	case len(lits) == 3 && len(lits[0]) == 0 && len(lits[2]) == 0:
		return func(s []byte) bool { return bytes.Contains(s, lits[1]) }
	}
	return func(s []byte) bool { return p.match(s, chars) }
}

func (ev *evaluator) like(n *Like) (arrow.Array, error) {
	p, err := compileLike(n.Pattern)
	if err != nil {
		return nil, err
	}
	return ev.overValues(n.Term.(*Column), func(col arrow.Array) (arrow.Array, error) {
		chars := col.DataType().ID() == arrow.STRING || col.DataType().ID() == arrow.LARGE_STRING
		match := p.matcher(chars)
		if n.Negated {
			return matchArray(ev.mem, col, func(s []byte) bool { return !match(s) })
		}
		return matchArray(ev.mem, col, match)
	})
}

func (ev *evaluator) startsWith(n *StartsWith) (arrow.Array, error) {
	prefix := []byte(n.Prefix)
	return ev.overValues(n.Term.(*Column), func(col arrow.Array) (arrow.Array, error) {
		return matchArray(ev.mem, col, func(s []byte) bool { return bytes.HasPrefix(s, prefix) })
	})
}

// matchArray applies match to every value of a string or binary array; a
// null value gives null.
func matchArray(mem memory.Allocator, col arrow.Array, match func([]byte) bool) (arrow.Array, error) {
	d := col.Data()
	if d.Len() == 0 { // its buffers may be nil
		return array.MakeArrayOfNull(mem, arrow.FixedWidthTypes.Boolean, 0), nil
	}
	var data []byte
	if buf := d.Buffers()[2]; buf != nil {
		data = buf.Bytes()
	}
	out := memory.NewResizableBuffer(mem)
	defer out.Release()
	out.Resize(int(bitutil.BytesForBits(int64(d.Len()))))
	bits := out.Bytes()
	clear(bits)
	switch a := col.(type) {
	case *array.String:
		matchOffsets(a.ValueOffsets(), data, bits, match)
	case *array.LargeString:
		matchOffsets(a.ValueOffsets(), data, bits, match)
	case *array.Binary:
		matchOffsets(a.ValueOffsets(), data, bits, match)
	case *array.LargeBinary:
		matchOffsets(a.ValueOffsets(), data, bits, match)
	default:
		return nil, fmt.Errorf("filter: string match on %s", col.DataType())
	}
	return booleanWithNullsOf(mem, out, col), nil
}

func matchOffsets[O int32 | int64](offsets []O, data []byte, out []byte, match func([]byte) bool) {
	for i := 0; i+1 < len(offsets); i++ {
		if match(data[offsets[i]:offsets[i+1]]) {
			bitutil.SetBit(out, i)
		}
	}
}

// booleanWithNullsOf makes a boolean array of values, null where src is.
func booleanWithNullsOf(mem memory.Allocator, values *memory.Buffer, src arrow.Array) arrow.Array {
	var valid *memory.Buffer
	if src.NullN() > 0 {
		n := src.Len()
		valid = memory.NewResizableBuffer(mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(src.NullBitmapBytes(), src.Data().Offset(), n, valid.Bytes(), 0)
	}
	d := array.NewData(arrow.FixedWidthTypes.Boolean, src.Len(), []*memory.Buffer{valid, values}, nil, src.NullN(), 0)
	defer d.Release()
	return array.NewBooleanData(d)
}
