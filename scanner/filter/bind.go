package filter

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Predicate is an Expr bound to a schema: its columns resolved, its
// literals coerced to their columns' types. It is immutable and safe for
// concurrent use.
type Predicate struct {
	expr    Expr
	schema  *arrow.Schema
	columns []string
}

// Bind resolves e against schema. An unknown column is an *Error listing
// the schema's columns; a literal that cannot stand for a value of its
// column's type is an *Error naming both types.
func Bind(e Expr, schema *arrow.Schema) (*Predicate, error) {
	return nil, errors.New("filter.Bind: not implemented yet")
}

// Expr is the bound form: every literal compared with a column is an
// arrow scalar of that column's type.
func (p *Predicate) Expr() Expr { return p.expr }

// Columns lists the columns the predicate reads, by dotted name.
func (p *Predicate) Columns() []string { return p.columns }

// Eval evaluates the predicate on every row of rec, giving a boolean array
// of rec's length: true, false, or null for unknown. rec holds top-level
// columns by name; a column the predicate names that rec lacks reads as
// nulls. The caller releases the result.
func (p *Predicate) Eval(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.Array, error) {
	return nil, errors.New("filter.Eval: not implemented yet")
}

// Filter returns the rows of rec where the predicate is true, in order.
// The caller releases both rec and the result.
func (p *Predicate) Filter(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	return nil, errors.New("filter.Filter: not implemented yet")
}
