package filter

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Expr is a node of a predicate: a column, a literal, or an operation on
// other nodes. The node types below are the whole form; front ends build
// them, Bind checks them against a schema.
type Expr interface {
	// String renders the node as SQL text, for messages and logs.
	String() string
	node()
}

// Column references a column by path: one name for a top-level column,
// more for a field inside structs ("address.city" is {"address", "city"}).
type Column struct {
	Path []string
	// Hint, when set, ends the message Bind gives if the path names no
	// column. The SQL parser sets it on the right side of a comparison of
	// two columns, which is more often a string written in double quotes
	// (or none) than a column: "string literals take single quotes: 'x'".
	Hint string
}

// Name is the column's dotted path, as scand names columns elsewhere.
func (c *Column) Name() string { return strings.Join(c.Path, ".") }

// Literal is a constant. Its Value is one of:
//   - nil: NULL;
//   - bool;
//   - Number: an integer, decimal or float as written ("42", "-3.25",
//     "1e10"); Bind parses it for the column it meets, so no precision is
//     lost on the way;
//   - string: a character string (UTF-8);
//   - []byte: a binary string;
//   - Date, Timestamp: SQL's typed literals, as written;
//   - scalar.Scalar (arrow-go's arrow/scalar): an already typed value, as
//     Substrait literals are.
type Literal struct {
	Value any
}

// Number is a numeric literal's text.
type Number string

// Date is a DATE literal's text ("2026-01-31").
type Date string

// Timestamp is a TIMESTAMP literal's text ("2026-01-31 12:00:00", with an
// optional zone: "+02:00", "Z", "Europe/Paris").
type Timestamp string

// CompareOp is a comparison operator.
type CompareOp int

const (
	Eq CompareOp = iota // =
	Ne                  // != and <>
	Lt                  // <
	Le                  // <=
	Gt                  // >
	Ge                  // >=
)

var compareText = [...]string{Eq: "=", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">="}

func (op CompareOp) String() string { return compareText[op] }

// Flip is the operator with its operands swapped: a < b is b > a.
func (op CompareOp) Flip() CompareOp {
	switch op {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return op
}

// Compare is Left Op Right. NULL on either side is unknown; NaN compares as
// IEEE 754 says (false for everything but !=); strings compare as UTF-8
// bytes.
type Compare struct {
	Op          CompareOp
	Left, Right Expr
}

// And is true when every term is, false when any is false, else unknown
// (Kleene logic).
type And struct{ Terms []Expr }

// Or is true when any term is, false when every term is false, else
// unknown.
type Or struct{ Terms []Expr }

// Not negates its term; NOT unknown is unknown.
type Not struct{ Term Expr }

// IsNull is `Term IS NULL`, or `Term IS NOT NULL` when Negated. It is
// never unknown.
type IsNull struct {
	Term    Expr
	Negated bool
}

// NullSemantics says what In answers for a NULL operand, or for a value
// that matches nothing in a list holding NULL.
type NullSemantics int

const (
	// SQLNulls: a NULL operand is unknown, and so is a non-match when the
	// list holds NULL (SQL, DuckDB, BigQuery).
	SQLNulls NullSemantics = iota
	// ArrowNulls: pyarrow's is_in. A NULL operand matches a NULL in the
	// list and is false otherwise; the answer is never unknown.
	ArrowNulls
)

// In is `Term IN (Values...)`, or NOT IN when Negated.
type In struct {
	Term    Expr
	Values  []*Literal
	Negated bool
	Nulls   NullSemantics
}

// Like is `Term LIKE Pattern` (NOT LIKE when Negated): % matches any run of
// characters, _ one character, and a backslash escapes the next character.
// It matches the whole string, case-sensitively.
type Like struct {
	Term    Expr
	Pattern string
	Negated bool
}

// StartsWith is `starts_with(Term, Prefix)`.
type StartsWith struct {
	Term   Expr
	Prefix string
}

func (*Column) node()     {}
func (*Literal) node()    {}
func (*Compare) node()    {}
func (*And) node()        {}
func (*Or) node()         {}
func (*Not) node()        {}
func (*IsNull) node()     {}
func (*In) node()         {}
func (*Like) node()       {}
func (*StartsWith) node() {}

func (c *Column) String() string {
	parts := make([]string, len(c.Path))
	for i, p := range c.Path {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

func (l *Literal) String() string {
	switch v := l.Value.(type) {
	case nil:
		return "NULL"
	case bool:
		if v {
			return "TRUE"
		}
		return "FALSE"
	case Number:
		return string(v)
	case string:
		return quoteString(v)
	case []byte:
		return fmt.Sprintf("X'%x'", v)
	case Date:
		return "DATE " + quoteString(string(v))
	case Timestamp:
		return "TIMESTAMP " + quoteString(string(v))
	case scalar.Scalar:
		return scalarSQL(v)
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(l.Value)
}

// scalarSQL renders a typed literal as SQL text, so that messages and
// PlanStats show what a Substrait filter or a bound literal means.
func scalarSQL(v scalar.Scalar) string {
	if !v.IsValid() {
		return "NULL"
	}
	switch x := v.(type) {
	case *scalar.Boolean:
		return (&Literal{Value: x.Value}).String()
	case *scalar.String, *scalar.LargeString:
		return quoteString(x.String())
	case *scalar.Binary, *scalar.LargeBinary, *scalar.FixedSizeBinary:
		return fmt.Sprintf("X'%x'", x.(scalar.BinaryScalar).Data())
	case *scalar.Date32, *scalar.Date64:
		return "DATE " + quoteString(x.String())
	case *scalar.Timestamp:
		return "TIMESTAMP " + quoteString(x.String())
	}
	return v.String()
}

func (c *Compare) String() string {
	return fmt.Sprintf("(%s %s %s)", c.Left, c.Op, c.Right)
}

func (a *And) String() string { return joinTerms(a.Terms, " AND ") }
func (o *Or) String() string  { return joinTerms(o.Terms, " OR ") }
func (n *Not) String() string { return fmt.Sprintf("(NOT %s)", n.Term) }

func (n *IsNull) String() string {
	if n.Negated {
		return fmt.Sprintf("(%s IS NOT NULL)", n.Term)
	}
	return fmt.Sprintf("(%s IS NULL)", n.Term)
}

func (in *In) String() string {
	vals := make([]string, len(in.Values))
	for i, v := range in.Values {
		vals[i] = v.String()
	}
	not := ""
	if in.Negated {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sIN (%s))", in.Term, not, strings.Join(vals, ", "))
}

func (l *Like) String() string {
	not := ""
	if l.Negated {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sLIKE %s)", l.Term, not, quoteString(l.Pattern))
}

func (s *StartsWith) String() string {
	return fmt.Sprintf("starts_with(%s, %s)", s.Term, quoteString(s.Prefix))
}

func joinTerms(terms []Expr, sep string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = t.String()
	}
	return "(" + strings.Join(parts, sep) + ")"
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// quoteIdent leaves plain identifiers bare and double-quotes the rest.
func quoteIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			plain = false
			break
		}
	}
	if plain && !keywords[strings.ToLower(s)] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// keywords are the SQL subset's reserved words: a column so named must be
// double-quoted.
var keywords = map[string]bool{
	"and": true, "or": true, "not": true, "in": true, "is": true, "null": true, "true": true, "false": true,
	"like": true, "between": true, "date": true, "timestamp": true,
}

// Columns lists the distinct columns e references, by dotted name, in
// order of first appearance.
func Columns(e Expr) []string {
	var out []string
	seen := map[string]bool{}
	Walk(e, func(n Expr) {
		if c, ok := n.(*Column); ok && !seen[c.Name()] {
			seen[c.Name()] = true
			out = append(out, c.Name())
		}
	})
	return out
}

// Walk calls fn for e and every node below it, parents first.
func Walk(e Expr, fn func(Expr)) {
	fn(e)
	switch n := e.(type) {
	case *Compare:
		Walk(n.Left, fn)
		Walk(n.Right, fn)
	case *And:
		for _, t := range n.Terms {
			Walk(t, fn)
		}
	case *Or:
		for _, t := range n.Terms {
			Walk(t, fn)
		}
	case *Not:
		Walk(n.Term, fn)
	case *IsNull:
		Walk(n.Term, fn)
	case *In:
		Walk(n.Term, fn)
	case *Like:
		Walk(n.Term, fn)
	case *StartsWith:
		Walk(n.Term, fn)
	}
}
