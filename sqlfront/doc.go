// Package sqlfront turns the SQL statements scand answers into scan
// requests. It is the pure half of the Flight SQL front door
// (server/flightsql): text in, a Statement out, no IO, no gRPC.
//
// # The subset
//
//	statement = SELECT items FROM source [WHERE condition] [LIMIT n] [";"]
//	items     = "*" | column { "," column } | aggregate { "," aggregate }
//	aggregate = (COUNT "(" "*" ")" | MIN "(" column ")" | MAX "(" column ")") [AS name]
//	column    = name { "." name }        (name: bare identifier or "double-quoted")
//	source    = 'path, glob or prefix'   (as DuckDB reads files: 'trips/*.parquet', 's3://b/p/')
//	          | name { "." name }        (a table: a directory or file under the root)
//
// The condition is scand's own filter language (package filter/sql, the
// same text a ScanRequest's filter takes): this package only finds where
// it ends, with a tokenizer that respects quotes, comments and
// parentheses, and hands the text to filter/sql.Parse. The condition ends
// at the first LIMIT outside parentheses (LIMIT is reserved here, as in
// SQL: a column named limit is written "limit"), or at a clause scand does
// not answer (ORDER BY, GROUP BY, ...), which is refused.
//
// A projection becomes the request's columns; COUNT(*), MIN and MAX are
// aggregates the front door computes from the same request (Statement.Agg).
//
// # Refusals
//
// Errors are *Error with a byte offset into the statement. Valid SQL that
// scand does not answer (joins, GROUP BY, ORDER BY, DISTINCT, expressions
// or aliases in the select list, subqueries, parameters, statements other
// than SELECT) is an *Error that matches ErrUnsupported; the server answers
// UNIMPLEMENTED and says what scand answers instead. Anything else is a
// syntax error (INVALID_ARGUMENT). A condition beyond filter's limits
// wraps filter.ErrTooComplex (RESOURCE_EXHAUSTED).
//
// Statements longer than MaxStatementBytes are refused before they are
// read; the tokenizer slices the text and holds one token at a time.
package sqlfront
