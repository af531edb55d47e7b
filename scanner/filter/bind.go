package filter

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Predicate is an Expr bound to a schema: its columns resolved, its
// literals coerced to their columns' types. It is immutable and safe for
// concurrent use.
type Predicate struct {
	expr    Expr
	schema  *arrow.Schema
	columns []string
	types   map[string]arrow.DataType // by pathKey: each column's type in schema
	sets    *valueSets                // IN lists built once, shared by every batch
}

// Bind resolves e against schema. An unknown column is an *Error listing
// the schema's columns; a literal that cannot stand for a value of its
// column's type is an *Error naming both types. e is not modified: the
// bound form is a new tree.
func Bind(e Expr, schema *arrow.Schema) (*Predicate, error) {
	if e == nil {
		return nil, Errorf("empty filter")
	}
	b := &binder{schema: schema, types: map[string]arrow.DataType{}}
	bound, err := b.boolean(e, 0)
	if err != nil {
		return nil, err
	}
	return &Predicate{expr: bound, schema: schema, columns: Columns(bound), types: b.types, sets: &valueSets{}}, nil
}

// Expr is the bound form. Code that reads it (pruning, pushdown) may rely
// on all of this:
//   - every Column names a column of the schema (a top-level field, or a
//     field inside structs), and a Column standing alone as a term (under
//     And, Or, Not, or as the whole predicate) is boolean;
//   - every Compare between a column and a literal has the Column on the
//     Left and the Literal on the Right (Op flipped when the literal was
//     written first); otherwise both sides are Columns, of types that
//     compare (equal value types, or one casting exactly to the other);
//   - every Literal that meets a column (Compare, In.Values) holds a
//     scalar.Scalar of exactly the column's value type: the column's Arrow
//     type, except a dictionary's value type for dictionary columns, and
//     utf8 / binary for string_view / binary_view columns. A NULL is a null
//     scalar of that type (scalar.IsValid false);
//   - a Literal standing alone as a term holds a boolean scalar, possibly
//     null;
//   - In.Term, Like.Term and StartsWith.Term are Columns; Like and
//     StartsWith columns are string or binary;
//   - IsNull of a literal is folded to a boolean Literal.
func (p *Predicate) Expr() Expr { return p.expr }

// Columns lists the columns the predicate reads, by dotted name.
func (p *Predicate) Columns() []string { return p.columns }

// Eval evaluates the predicate on every row of rec, giving a boolean array
// of rec's length: true, false, or null for unknown. rec holds top-level
// columns by name; a column the predicate names that rec lacks reads as
// nulls. The caller releases the result. Every intermediate array is
// allocated from mem and released before Eval returns.
func (p *Predicate) Eval(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.Array, error) {
	ev := newEvaluator(ctx, p, rec, mem)
	return ev.eval(p.expr)
}

// Filter returns the rows of rec where the predicate is true, in order.
// The caller releases both rec and the result. When every row passes the
// result is rec itself, retained.
func (p *Predicate) Filter(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	mask, err := p.Eval(ctx, rec, mem)
	if err != nil {
		return nil, err
	}
	defer mask.Release()
	return filterBatch(ctx, rec, mask, mem)
}

// binder builds the bound form of one Expr.
type binder struct {
	schema *arrow.Schema
	types  map[string]arrow.DataType
}

// pathKey keys a column by its path; dotted names could collide (a
// top-level "a.b" and field b of struct a).
func pathKey(path []string) string { return strings.Join(path, "\x00") }

// boolean binds a node that stands as a term: its value is a truth value.
func (b *binder) boolean(e Expr, depth int) (Expr, error) {
	if depth > MaxDepth {
		return nil, ErrTooComplex
	}
	switch n := e.(type) {
	case *Column:
		return b.booleanColumn(n)
	case *Literal:
		return booleanLiteral(n)
	case *Compare:
		return b.compare(n)
	case *And:
		terms, err := b.terms(n.Terms, depth)
		return &And{Terms: terms}, err
	case *Or:
		terms, err := b.terms(n.Terms, depth)
		return &Or{Terms: terms}, err
	case *Not:
		t, err := b.boolean(n.Term, depth+1)
		return &Not{Term: t}, err
	case *IsNull:
		return b.isNull(n, depth)
	case *In:
		return b.in(n)
	case *Like:
		c, err := b.stringColumn(n.Term, "LIKE")
		if err == nil {
			_, err = compileLike(n.Pattern)
		}
		return &Like{Term: c, Pattern: n.Pattern, Negated: n.Negated}, err
	case *StartsWith:
		c, err := b.stringColumn(n.Term, "starts_with")
		return &StartsWith{Term: c, Prefix: n.Prefix}, err
	}
	return nil, Errorf("unsupported filter node %T", e)
}

func (b *binder) terms(in []Expr, depth int) ([]Expr, error) {
	out := make([]Expr, len(in))
	for i, t := range in {
		bt, err := b.boolean(t, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = bt
	}
	return out, nil
}

// column resolves c: a top-level field, then struct children.
func (b *binder) column(c *Column) (*Column, arrow.DataType, error) {
	dt, ok := lookupPath(b.schema, c.Path)
	if !ok {
		return nil, nil, b.unknown(c)
	}
	b.types[pathKey(c.Path)] = dt
	return &Column{Path: slices.Clone(c.Path)}, dt, nil
}

func lookupPath(schema *arrow.Schema, path []string) (arrow.DataType, bool) {
	if len(path) == 0 {
		return nil, false
	}
	idx := schema.FieldIndices(path[0])
	if len(idx) == 0 {
		return nil, false
	}
	dt := schema.Field(idx[0]).Type
	for _, name := range path[1:] {
		st, ok := dt.(*arrow.StructType)
		if !ok {
			return nil, false
		}
		f, ok := st.FieldByName(name)
		if !ok {
			return nil, false
		}
		dt = f.Type
	}
	return dt, true
}

// unknown lists the schema's columns as scanner.ColumnNames does (filter
// cannot import scanner, which imports filter): top-level names and dotted
// struct paths, at most 40.
func (b *binder) unknown(c *Column) error {
	var avail []string
	var walk func(prefix string, f arrow.Field)
	walk = func(prefix string, f arrow.Field) {
		name := prefix + f.Name
		avail = append(avail, name)
		if st, ok := f.Type.(*arrow.StructType); ok {
			for _, child := range st.Fields() {
				walk(name+".", child)
			}
		}
	}
	for _, f := range b.schema.Fields() {
		walk("", f)
	}
	more := ""
	if len(avail) > 40 {
		more = fmt.Sprintf(" and %d more", len(avail)-40)
		avail = avail[:40]
	}
	return Errorf("unknown column %q in filter; available columns: %s%s", c.Name(), strings.Join(avail, ", "), more)
}

func (b *binder) booleanColumn(c *Column) (Expr, error) {
	bc, dt, err := b.column(c)
	if err != nil {
		return nil, err
	}
	if valueType(dt).ID() != arrow.BOOL {
		return nil, Errorf("column %q (%s) is not boolean; compare it with a value", c.Name(), dt)
	}
	return bc, nil
}

// booleanLiteral binds a literal standing as a term: TRUE, FALSE or NULL.
func booleanLiteral(l *Literal) (Expr, error) {
	sc, err := target{name: "", dt: arrow.FixedWidthTypes.Boolean, vt: arrow.FixedWidthTypes.Boolean}.value(l)
	if err != nil {
		return nil, Errorf("literal %s (%s) is not a condition; compare it with a column", l, literalKind(l.Value))
	}
	return &Literal{Value: sc}, nil
}

func (b *binder) compare(c *Compare) (Expr, error) {
	lc, lCol := c.Left.(*Column)
	rc, rCol := c.Right.(*Column)
	ll, lLit := c.Left.(*Literal)
	rl, rLit := c.Right.(*Literal)
	switch {
	case lCol && rLit:
		return b.compareLiteral(c.Op, lc, rl)
	case lLit && rCol:
		return b.compareLiteral(c.Op.Flip(), rc, ll)
	case lCol && rCol:
		return b.compareColumns(c.Op, lc, rc)
	case lLit && rLit:
		return foldCompare(c)
	}
	return nil, Errorf("cannot bind %s: a comparison's operands must be columns or literals", c)
}

func (b *binder) compareLiteral(op CompareOp, c *Column, l *Literal) (Expr, error) {
	bc, dt, err := b.column(c)
	if err != nil {
		return nil, err
	}
	if !comparable(valueType(dt)) {
		return nil, Errorf("column %q (%s) cannot be compared", c.Name(), dt)
	}
	t := newTarget(c.Name(), dt)
	if gap, ok := t.between(l); ok { // no value of the column equals l: exact.go
		return gap.compare(op, bc), nil
	}
	bl, err := t.coerce(l)
	if err != nil {
		return nil, err
	}
	return &Compare{Op: op, Left: bc, Right: bl}, nil
}

func (b *binder) compareColumns(op CompareOp, l, r *Column) (Expr, error) {
	bl, ldt, err := b.column(l)
	if err != nil {
		return nil, err
	}
	br, rdt, err := b.column(r)
	if err != nil {
		return nil, err
	}
	if !comparable(valueType(ldt)) || commonType(valueType(ldt), valueType(rdt)) == nil {
		return nil, Errorf("cannot compare column %q (%s) with column %q (%s)", l.Name(), ldt, r.Name(), rdt)
	}
	return &Compare{Op: op, Left: bl, Right: br}, nil
}

func (b *binder) isNull(n *IsNull, depth int) (Expr, error) {
	var term Expr
	var err error
	switch t := n.Term.(type) {
	case *Column:
		term, _, err = b.column(t)
	case *Literal:
		null := t.Value == nil
		if sc, ok := t.Value.(scalar.Scalar); ok {
			null = !sc.IsValid()
		}
		return &Literal{Value: scalar.NewBooleanScalar(null != n.Negated)}, nil
	default:
		term, err = b.boolean(t, depth+1)
	}
	if err != nil {
		return nil, err
	}
	return &IsNull{Term: term, Negated: n.Negated}, nil
}

func (b *binder) in(n *In) (Expr, error) {
	if len(n.Values) > MaxInValues {
		return nil, fmt.Errorf("%w: IN list of %d values (at most %d)", ErrTooComplex, len(n.Values), MaxInValues)
	}
	c, ok := n.Term.(*Column)
	if !ok {
		return nil, Errorf("cannot bind %s: IN applies to a column", n)
	}
	bc, dt, err := b.column(c)
	if err != nil {
		return nil, err
	}
	if !comparable(valueType(dt)) {
		return nil, Errorf("column %q (%s) cannot be compared", c.Name(), dt)
	}
	t := newTarget(c.Name(), dt)
	vals := make([]*Literal, 0, len(n.Values))
	var dropped between
	for _, v := range n.Values {
		if gap, ok := t.between(v); ok { // equals no value of the column: exact.go
			dropped = gap
			continue
		}
		bv, err := t.coerce(v)
		if err != nil {
			return nil, err
		}
		vals = append(vals, bv)
	}
	if len(vals) == 0 && len(n.Values) > 0 {
		return emptyIn(bc, n.Negated, n.Nulls, dropped.min, dropped.max), nil
	}
	return &In{Term: bc, Values: vals, Negated: n.Negated, Nulls: n.Nulls}, nil
}

// stringColumn binds the column of a string match, which must hold
// strings or bytes.
func (b *binder) stringColumn(e Expr, op string) (*Column, error) {
	c, ok := e.(*Column)
	if !ok {
		return nil, Errorf("%s applies to a column, not %s", op, e)
	}
	bc, dt, err := b.column(c)
	if err != nil {
		return nil, err
	}
	switch valueType(dt).ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return bc, nil
	}
	return nil, Errorf("%s needs a string or binary column; column %q is %s", op, c.Name(), dt)
}
