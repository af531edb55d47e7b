// Package filter is scand's one predicate form: the rows a scan wants.
//
// Two front ends produce it: the SQL WHERE subset (filter/sql) and
// Substrait ExtendedExpressions as pyarrow writes them (filter/substrait).
// Everything after them is written once, against this form:
//
//   - Bind resolves an Expr's columns in a schema and coerces its literals
//     to the columns' types (a DATE literal against a timestamp column, an
//     integer against a decimal), refusing coercions that would change the
//     meaning ('abc' against an int column).
//   - A bound Predicate evaluates on record batches with arrow-go's compute
//     kernels (comparisons, Kleene and/or/not, is_in, filter), and keeps
//     the rows where it is true: SQL's three-valued logic, where unknown
//     rows are not returned.
//   - A bound Predicate also decides, from statistics alone (ColumnStats:
//     min, max, null count), whether a row group, stripe, file or hive
//     partition can hold a matching row. That decision is pure logic, with
//     no IO and no locks, so that table tests pin it; it must never drop a
//     group that holds a matching row, so every unknown counts as "may
//     match".
//
// The two front ends differ in one place, which the form records rather
// than hides: SQL's `x IN (...)` is unknown when x is NULL (as in DuckDB and
// BigQuery), while pyarrow's is_in says false (In.NullSemantics).
package filter
