// Package sql parses the SQL WHERE subset scand accepts into filter's
// predicate form. It only parses: Bind (package filter) resolves columns
// and converts literals, so Number, Date and Timestamp keep their text.
//
// # Grammar
//
//	or        = and { OR and }
//	and       = not { AND not }
//	not       = NOT not | primary
//	primary   = "(" or ")" | starts_with(operand, 'prefix') | operand [ predicate ]
//	predicate = compareop operand
//	          | [NOT] IN "(" literal { "," literal } ")"
//	          | [NOT] BETWEEN operand AND operand
//	          | [NOT] LIKE 'pattern'
//	          | IS [NOT] NULL
//	operand   = column | literal
//	column    = name { "." name }    (name: bare identifier or "quoted")
//	literal   = [-]number | 'string' | TRUE | FALSE | NULL | DATE 'string' | TIMESTAMP 'string'
//
// Keywords are case-insensitive; identifiers keep their case. A keyword is
// a column name only double-quoted (after a dot, where nothing else could
// stand, a bare keyword is a name too). Only a column or TRUE/FALSE may
// stand alone as a condition. Chains are flat (a AND b AND c is one And of
// three terms), but a parenthesised chain stays a node of its own, so that
// the tree is the one written and Parse(e.String()) gives e back. BETWEEN
// becomes And{x >= lo, x <= hi}; the form has no node for it.
//
// # Why by hand
//
// The parser is a recursive descent over a lazy lexer, in a few hundred
// lines, with no parser dependency. Generated parsers and the SQL parsers
// of database projects parse whole statements, pull in a dialect's
// grammar, report positions as line:column tokens of their own, and leave
// limits to the caller, where they come too late: the tree, or the Go
// stack, is already built. Here every error is a *filter.Error with the
// byte offset of the offending token and the words expected and found,
// and the limits are checked while parsing.
//
// # Depth
//
// The depth of a condition is the number of operations nested in it: a
// comparison, IN, LIKE, IS NULL or starts_with is one level, a chain of
// AND (or OR) adds one, a NOT one, a BETWEEN two (three with NOT). A
// parenthesis adds nothing around the operation it wraps, but one around
// a bare column or another parenthesis: "(((a = 1)))" is 3 deep. Past
// filter.MaxDepth the text is refused with filter.ErrTooComplex. Defined
// so, a parsed tree renders (String) to text of the same depth, and a
// chain of 100 000 terms is one level.
//
// Recursion only happens at "(" and NOT, and the parser counts those
// before it descends (a NOT right after "(" shares its level: "(NOT x)" is
// how Not renders). Each counted one is a level of the final depth, so the
// parser refuses at the first one past the limit: whatever the input, its
// stack holds at most filter.MaxDepth counted levels, each a few frames
// (twice that with the uncounted NOTs).
//
// # Other limits
//
// Text longer than filter.MaxTextBytes is refused before it is read, and
// an IN list at its filter.MaxInValues+1st value; both errors wrap
// filter.ErrTooComplex. The lexer produces one token at a time and slices
// the text rather than copying it, so memory stays proportional to the
// tree.
package sql
