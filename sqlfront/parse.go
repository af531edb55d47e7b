package sqlfront

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/scanner/filter/sql"
)

// MaxStatementBytes bounds a statement's text: the condition's own limit
// and room for the rest.
const MaxStatementBytes = filter.MaxTextBytes + 64<<10

// AggKind is an aggregate of the select list.
type AggKind uint8

const (
	CountStar AggKind = iota + 1
	Min
	Max
)

func (k AggKind) String() string {
	switch k {
	case CountStar:
		return "count"
	case Min:
		return "min"
	case Max:
		return "max"
	}
	return "?"
}

// Aggregate is one COUNT(*), MIN(c) or MAX(c) of the select list.
type Aggregate struct {
	Kind AggKind
	// Column is the dotted column name of MIN and MAX; empty for COUNT(*).
	Column string
	// Name is the result column's name: the alias, or the aggregate as
	// written in lower case ("count(*)", "min(fare)").
	Name string
}

// Source is what FROM names: a quoted path (a file, glob or prefix, as a
// ScanRequest's paths take it) or a table name of one or more parts.
type Source struct {
	Path  string
	Table []string
	Pos   int
}

// Statement is a parsed SELECT.
type Statement struct {
	// Columns are the projected columns by dotted name; nil for "*" and
	// for aggregates.
	Columns []string
	// Aggs are the select list's aggregates, in order; nil for a
	// projection. A statement has columns or aggregates, never both.
	Aggs   []Aggregate
	Source Source
	// Filter is the WHERE condition's text, as written; Where is its
	// parsed form (nil without WHERE).
	Filter string
	Where  filter.Expr
	// Limit is LIMIT's value when HasLimit; LIMIT 0 is a statement of no
	// rows.
	Limit    int64
	HasLimit bool
}

// FilterColumns are the columns the condition references.
func (s *Statement) FilterColumns() []string {
	if s.Where == nil {
		return nil
	}
	return filter.Columns(s.Where)
}

// ErrUnsupported matches the errors of valid SQL that scand does not
// answer.
var ErrUnsupported = errors.New("unsupported SQL")

// Error is a statement scand refuses, with the byte offset where.
type Error struct {
	Pos         int
	Msg         string
	Unsupported bool
	// cause is filter.ErrTooComplex for a condition beyond filter's limits.
	cause error
}

func (e *Error) Error() string { return fmt.Sprintf("SQL: at position %d: %s", e.Pos, e.Msg) }

// Is makes Unsupported errors match ErrUnsupported.
func (e *Error) Is(target error) bool { return e.Unsupported && target == ErrUnsupported }

func (e *Error) Unwrap() error { return e.cause }

func syntaxf(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// answers is what every refusal of unsupported SQL ends with.
const answers = "scand answers SELECT <columns | * | COUNT(*) | MIN(c) | MAX(c)> FROM <'path' | table> [WHERE <condition>] [LIMIT n]; " +
	"joins, grouping, sorting and expressions belong in a query engine over scand (DuckDB, DataFusion, Spark, pandas)"

func unsupportedf(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...) + ": " + answers, Unsupported: true}
}

// Parse parses one statement. It is safe for concurrent use.
func Parse(text string) (*Statement, error) {
	if len(text) > MaxStatementBytes {
		return nil, &Error{Pos: 0, Msg: fmt.Sprintf("the statement is %d bytes, longer than %d", len(text), MaxStatementBytes), cause: filter.ErrTooComplex}
	}
	p := &parser{lx: lexer{src: text}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	return p.statement()
}

type parser struct {
	lx  lexer
	tok token
}

func (p *parser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// notSelect are the first words of statements scand does not run.
var notSelect = map[string]string{
	"INSERT": "writes", "UPDATE": "writes", "DELETE": "writes", "MERGE": "writes", "CREATE": "DDL", "DROP": "DDL",
	"ALTER": "DDL", "TRUNCATE": "writes", "WITH": "common table expressions", "VALUES": "VALUES lists",
	"SHOW": "SHOW", "DESCRIBE": "DESCRIBE (use the schema of a query, or Flight SQL's GetTables)", "EXPLAIN": "EXPLAIN",
	"SET": "session settings", "BEGIN": "transactions", "COMMIT": "transactions", "ROLLBACK": "transactions",
	"USE": "USE", "PRAGMA": "PRAGMA", "CALL": "procedures", "COPY": "COPY",
}

func (p *parser) statement() (*Statement, error) {
	if p.tok.kind == tLParen {
		return nil, unsupportedf(p.tok.pos, "a parenthesized query")
	}
	if !p.tok.is("SELECT") {
		if p.tok.kind == tWord {
			if what, ok := notSelect[strings.ToUpper(p.tok.text)]; ok {
				return nil, unsupportedf(p.tok.pos, "%s: scand is a read-only scan service", what)
			}
		}
		return nil, p.expected("SELECT")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	st := &Statement{}
	if err := p.selectList(st); err != nil {
		return nil, err
	}
	if err := p.from(st); err != nil {
		return nil, err
	}
	if p.tok.is("WHERE") {
		if err := p.where(st); err != nil {
			return nil, err
		}
	}
	if p.tok.is("LIMIT") {
		if err := p.limit(st); err != nil {
			return nil, err
		}
	}
	if err := p.clauseAfter(); err != nil {
		return nil, err
	}
	if p.tok.kind == tSemicolon {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != tEOF {
			return nil, unsupportedf(p.tok.pos, "more than one statement")
		}
	}
	if p.tok.kind != tEOF {
		return nil, p.expected("WHERE, LIMIT or the end of the statement")
	}
	return st, nil
}

// selectList parses "*", columns or aggregates, up to FROM.
func (p *parser) selectList(st *Statement) error {
	if p.tok.is("DISTINCT") {
		return unsupportedf(p.tok.pos, "SELECT DISTINCT")
	}
	if p.tok.is("ALL") {
		if err := p.advance(); err != nil {
			return err
		}
	}
	if p.tok.is("TOP") {
		return unsupportedf(p.tok.pos, "SELECT TOP (write LIMIT n at the end)")
	}
	if p.tok.kind == tStar {
		if err := p.advance(); err != nil {
			return err
		}
		if p.tok.kind == tComma {
			return unsupportedf(p.tok.pos, "* with other items in the select list")
		}
		if !p.tok.is("FROM") {
			return p.itemEnd("*")
		}
		return nil
	}
	var colPos, aggPos = -1, -1
	for {
		start := p.tok.pos
		isAgg, err := p.item(st)
		if err != nil {
			return err
		}
		if isAgg && aggPos < 0 {
			aggPos = start
		}
		if !isAgg && colPos < 0 {
			colPos = start
		}
		if colPos >= 0 && aggPos >= 0 {
			return unsupportedf(max(colPos, aggPos), "columns beside aggregates (that needs GROUP BY)")
		}
		if p.tok.kind != tComma {
			break
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
	return nil
}

// aggNames are the aggregates scand computes.
var aggNames = map[string]AggKind{"COUNT": CountStar, "MIN": Min, "MAX": Max}

// item parses one column or aggregate of the select list.
func (p *parser) item(st *Statement) (isAgg bool, err error) {
	t := p.tok
	switch t.kind {
	case tWord, tQuoted:
	case tStar:
		return false, unsupportedf(t.pos, "* with other items in the select list")
	case tString, tNumber, tParam:
		return false, unsupportedf(t.pos, "a constant in the select list (%s)", t.text)
	case tLParen:
		return false, unsupportedf(t.pos, "an expression in the select list")
	default:
		return false, p.expected("a column, *, COUNT(*), MIN(column) or MAX(column)")
	}
	if t.kind == tWord && p.isNextKind(tLParen) {
		return true, p.aggregate(st)
	}
	if t.is("FROM") {
		return false, p.expected("a column, *, COUNT(*), MIN(column) or MAX(column)")
	}
	if t.is("NULL") || t.is("TRUE") || t.is("FALSE") {
		return false, unsupportedf(t.pos, "a constant in the select list (%s)", t.text)
	}
	if t.is("CASE") || t.is("NOT") {
		return false, unsupportedf(t.pos, "an expression in the select list (%s ...)", t.text)
	}
	if t.kind == tWord && isReserved(t.text) {
		return false, syntaxf(t.pos, "%s is a keyword: write it double-quoted (%q) to name a column", t.text, t.text)
	}
	name, err := p.dotted()
	if err != nil {
		return false, err
	}
	st.Columns = append(st.Columns, name)
	return false, p.itemEnd(name)
}

// itemEnd refuses what may follow a select item other than "," or FROM:
// an alias, an operator, a window.
func (p *parser) itemEnd(what string) error {
	t := p.tok
	switch {
	case t.kind == tComma || t.is("FROM"):
		return nil
	case t.is("AS") || t.kind == tQuoted || t.kind == tWord && !isReserved(t.text):
		return unsupportedf(t.pos, "an alias on a column (%s): scand returns columns under their own names", what)
	case t.kind == tOther || t.kind == tStar || t.kind == tLParen || t.kind == tDot:
		return unsupportedf(t.pos, "an expression in the select list (%s %s ...)", what, t.text)
	case t.is("OVER"):
		return unsupportedf(t.pos, "window functions")
	case t.kind == tEOF:
		return syntaxf(t.pos, "expected FROM after the select list, found the end of the statement")
	}
	return p.expected(`"," or FROM`)
}

// aggregate parses COUNT(*), MIN(c) or MAX(c) [AS name]; the current
// token is the function's name.
func (p *parser) aggregate(st *Statement) error {
	fn := p.tok
	kind, ok := aggNames[strings.ToUpper(fn.text)]
	if !ok {
		return unsupportedf(fn.pos, "the function %s()", fn.text)
	}
	if err := p.advance(); err != nil { // the name
		return err
	}
	if err := p.advance(); err != nil { // "("
		return err
	}
	agg := Aggregate{Kind: kind}
	switch {
	case p.tok.is("DISTINCT"):
		return unsupportedf(p.tok.pos, "%s(DISTINCT ...)", strings.ToUpper(fn.text))
	case kind == CountStar:
		if p.tok.kind != tStar {
			return unsupportedf(p.tok.pos, "COUNT of anything but * (COUNT(*) counts rows)")
		}
		if err := p.advance(); err != nil {
			return err
		}
		agg.Name = "count(*)"
	default:
		if p.tok.kind != tWord && p.tok.kind != tQuoted {
			if p.tok.kind == tRParen || p.tok.kind == tEOF {
				return p.expected("a column")
			}
			return unsupportedf(p.tok.pos, "%s of an expression (only of a column)", strings.ToUpper(fn.text))
		}
		if p.tok.kind == tWord && isReserved(p.tok.text) {
			return syntaxf(p.tok.pos, "%s is a keyword: write it double-quoted (%q) to name a column", p.tok.text, p.tok.text)
		}
		name, err := p.dotted()
		if err != nil {
			return err
		}
		agg.Column = name
		agg.Name = strings.ToLower(fn.text) + "(" + name + ")"
	}
	if p.tok.kind != tRParen {
		if p.tok.kind == tOther || p.tok.kind == tLParen || p.tok.kind == tStar {
			return unsupportedf(p.tok.pos, "%s of an expression (only of a column)", strings.ToUpper(fn.text))
		}
		return p.expected(`")"`)
	}
	if err := p.advance(); err != nil {
		return err
	}
	if p.tok.is("FILTER") || p.tok.is("OVER") {
		return unsupportedf(p.tok.pos, "%s after an aggregate", strings.ToUpper(p.tok.text))
	}
	if p.tok.is("AS") {
		if err := p.advance(); err != nil {
			return err
		}
		if p.tok.kind != tWord && p.tok.kind != tQuoted || p.tok.kind == tWord && isReserved(p.tok.text) {
			return p.expected("a name after AS")
		}
		agg.Name = p.tok.val
		if err := p.advance(); err != nil {
			return err
		}
	} else if p.tok.kind == tQuoted || p.tok.kind == tWord && !isReserved(p.tok.text) {
		agg.Name = p.tok.val
		if err := p.advance(); err != nil {
			return err
		}
	}
	st.Aggs = append(st.Aggs, agg)
	if p.tok.kind == tOther || p.tok.kind == tStar {
		return unsupportedf(p.tok.pos, "an expression in the select list (%s ...)", agg.Name)
	}
	return nil
}

// dotted parses name { "." name } into a dotted column or table name.
func (p *parser) dotted() (string, error) {
	parts, err := p.nameParts()
	if err != nil {
		return "", err
	}
	return strings.Join(parts, "."), nil
}

func (p *parser) nameParts() ([]string, error) {
	var parts []string
	for {
		if p.tok.kind != tWord && p.tok.kind != tQuoted {
			return nil, p.expected("a name")
		}
		parts = append(parts, p.tok.val)
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != tDot {
			return parts, nil
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind == tStar {
			return nil, unsupportedf(p.tok.pos, "qualified * (write * alone)")
		}
	}
}

// from parses FROM source and refuses joins and subqueries after it.
func (p *parser) from(st *Statement) error {
	if !p.tok.is("FROM") {
		if p.tok.kind == tEOF {
			return unsupportedf(p.tok.pos, "SELECT without FROM")
		}
		return p.expected("FROM")
	}
	if err := p.advance(); err != nil {
		return err
	}
	t := p.tok
	st.Source.Pos = t.pos
	switch {
	case t.kind == tString:
		if t.val == "" {
			return syntaxf(t.pos, "empty path: name a file, glob or prefix ('trips/*.parquet', 's3://bucket/prefix/')")
		}
		st.Source.Path = t.val
		if err := p.advance(); err != nil {
			return err
		}
	case t.kind == tLParen:
		return unsupportedf(t.pos, "a subquery in FROM")
	case t.kind == tWord && p.isNextKind(tLParen):
		return unsupportedf(t.pos, "a table function (%s(...)): name a file as a quoted path, FROM 'dir/*.parquet'", t.text)
	case t.kind == tQuoted || t.kind == tWord && !isReserved(t.text):
		parts, err := p.nameParts()
		if err != nil {
			return err
		}
		st.Source.Table = parts
	case t.kind == tEOF:
		return syntaxf(t.pos, "expected a quoted path or a table after FROM, found the end of the statement")
	default:
		return p.expected("a quoted path ('trips/*.parquet') or a table after FROM")
	}
	switch t := p.tok; {
	case t.kind == tComma:
		return unsupportedf(t.pos, "a join (more than one source in FROM)")
	case t.is("JOIN") || t.is("INNER") || t.is("LEFT") || t.is("RIGHT") || t.is("FULL") || t.is("CROSS") ||
		t.is("NATURAL") || t.is("LATERAL") || t.is("ANTI") || t.is("SEMI"):
		return unsupportedf(t.pos, "a join")
	case t.is("AS") || t.kind == tQuoted || t.kind == tWord && !isReserved(t.text):
		return unsupportedf(t.pos, "an alias on the source (name columns without a qualifier)")
	case t.is("TABLESAMPLE") || t.is("USING"):
		return unsupportedf(t.pos, "%s", strings.ToUpper(t.text))
	}
	return nil
}

// clauses scand does not answer, refused where they stand.
var refusedClauses = map[string]string{
	"ORDER": "ORDER BY (sorting)", "GROUP": "GROUP BY", "HAVING": "HAVING", "UNION": "UNION", "INTERSECT": "INTERSECT",
	"EXCEPT": "EXCEPT", "OFFSET": "OFFSET", "FETCH": "FETCH", "WINDOW": "WINDOW", "QUALIFY": "QUALIFY",
	"FOR": "FOR UPDATE", "INTO": "SELECT INTO",
}

// clauseAfter refuses a clause scand does not answer at the current
// token.
func (p *parser) clauseAfter() error {
	if p.tok.kind != tWord {
		return nil
	}
	if what, ok := refusedClauses[strings.ToUpper(p.tok.text)]; ok {
		return unsupportedf(p.tok.pos, "%s", what)
	}
	return nil
}

// where cuts the condition's text at the first LIMIT, refused clause,
// ";" or end outside parentheses, and parses it with filter/sql.
func (p *parser) where(st *Statement) error {
	wherePos := p.tok.pos
	if err := p.advance(); err != nil {
		return err
	}
	start := p.tok.pos
	depth := 0
	end := start
	for {
		t := p.tok
		if t.kind == tEOF || depth == 0 && (t.kind == tSemicolon || t.is("LIMIT") || p.refusedHere()) {
			break
		}
		switch {
		case t.kind == tLParen:
			depth++
		case t.kind == tRParen:
			depth--
		case t.is("SELECT"):
			return unsupportedf(t.pos, "a subquery in WHERE")
		case t.kind == tParam:
			return paramError(t)
		}
		end = t.pos + len(t.text)
		if err := p.advance(); err != nil {
			return err
		}
	}
	text := blankComments(p.lx.src, start, end, p.lx.comments)
	if strings.TrimSpace(text) == "" {
		return syntaxf(wherePos, "expected a condition after WHERE")
	}
	e, err := sql.Parse(text)
	if err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) && fe.Pos >= 0 {
			return &Error{Pos: start + fe.Pos, Msg: fe.Msg}
		}
		return &Error{Pos: start, Msg: "in the WHERE condition: " + err.Error(), cause: errors.Unwrap(err)}
	}
	st.Filter, st.Where = text, e
	return nil
}

// refusedHere: the current token starts a clause scand refuses (ORDER BY,
// GROUP BY, ...). ORDER and GROUP count only before BY, so that they may
// still name a column in a condition.
func (p *parser) refusedHere() bool {
	t := p.tok
	if t.kind != tWord {
		return false
	}
	up := strings.ToUpper(t.text)
	if up == "ORDER" || up == "GROUP" {
		return p.nextIs("BY")
	}
	switch up {
	case "HAVING", "UNION", "INTERSECT", "EXCEPT", "OFFSET", "FETCH", "WINDOW", "QUALIFY":
		return true
	}
	return false
}

// limit parses LIMIT n.
func (p *parser) limit(st *Statement) error {
	if err := p.advance(); err != nil {
		return err
	}
	t := p.tok
	switch {
	case t.kind == tParam:
		return paramError(t)
	case t.is("ALL"):
		if err := p.advance(); err != nil {
			return err
		}
		return nil
	case t.kind == tOther && t.text == "-":
		return syntaxf(t.pos, "LIMIT must not be negative")
	case t.kind != tNumber:
		return p.expected("a row count after LIMIT")
	}
	n, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil {
		return syntaxf(t.pos, "LIMIT takes a whole number of rows up to %d, not %s", int64(1<<63-1), t.text)
	}
	st.Limit, st.HasLimit = n, true
	if err := p.advance(); err != nil {
		return err
	}
	if p.tok.kind == tComma || p.tok.is("OFFSET") {
		return unsupportedf(p.tok.pos, "OFFSET")
	}
	return nil
}

// isNextKind and nextIs look one token past the current one without
// consuming it.
func (p *parser) isNextKind(k kind) bool {
	l := p.lx
	t, err := l.next()
	return err == nil && t.kind == k
}

func (p *parser) nextIs(kw string) bool {
	l := p.lx
	t, err := l.next()
	return err == nil && t.is(kw)
}

// expected is a syntax error at the current token.
func (p *parser) expected(what string) *Error {
	t := p.tok
	if t.kind == tEOF {
		return syntaxf(t.pos, "expected %s, found the end of the statement", what)
	}
	found := t.text
	if len(found) > 64 {
		found = found[:64] + "..."
	}
	return syntaxf(t.pos, "expected %s, found %s", what, strconv.Quote(found))
}

// reserved are words that end a select item or source rather than name
// it: written double-quoted they are names.
var reserved = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "LIMIT": true, "AS": true, "JOIN": true, "INNER": true,
	"LEFT": true, "RIGHT": true, "FULL": true, "CROSS": true, "NATURAL": true, "ON": true, "USING": true,
	"ORDER": true, "GROUP": true, "BY": true, "HAVING": true, "UNION": true, "INTERSECT": true, "EXCEPT": true,
	"OFFSET": true, "FETCH": true, "WINDOW": true, "QUALIFY": true, "DISTINCT": true, "ALL": true, "OVER": true,
	"FILTER": true, "INTO": true, "FOR": true, "LATERAL": true, "TABLESAMPLE": true, "AND": true, "OR": true,
	"NOT": true, "NULL": true, "TRUE": true, "FALSE": true, "CASE": true, "WHEN": true, "THEN": true, "ELSE": true,
	"END": true, "IN": true, "IS": true, "LIKE": true, "BETWEEN": true, "ANTI": true, "SEMI": true,
}

func isReserved(word string) bool { return reserved[strings.ToUpper(word)] }

// blankComments is src[start:end] with the /* */ comments in it replaced
// by spaces, so that positions stay those of the statement.
func blankComments(src string, start, end int, comments [][2]int) string {
	var b []byte
	for _, c := range comments {
		if c[1] <= start || c[0] >= end {
			continue
		}
		if b == nil {
			b = []byte(src[start:end])
		}
		for i := max(c[0], start); i < min(c[1], end); i++ {
			b[i-start] = ' '
		}
	}
	if b == nil {
		return src[start:end]
	}
	return string(b)
}

// paramError refuses a bind parameter. It is a statement to fix
// (INVALID_ARGUMENT), not SQL scand may answer one day: ADBC's DB-API
// takes UNIMPLEMENTED at prepare time for "this driver cannot prepare"
// and goes on to bind the values, which then fails far from the cause.
func paramError(t token) *Error {
	return syntaxf(t.pos, "a bind parameter (%s): scand's statements take no parameters; write the value into the statement", t.text)
}
