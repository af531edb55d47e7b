// Package substrait translates a Substrait ExtendedExpression, as pyarrow
// writes one (pyarrow.substrait.serialize_expressions([expr], [name],
// schema)), into scand's predicate form (package filter). It is one of the
// form's two front ends; the other is the SQL WHERE subset. It only
// translates: binding, evaluation and pruning happen once, on the form.
//
// # What it translates
//
//	pyarrow                        Substrait                  filter
//	a == 1, !=, <, <=, >, >=       equal, not_equal, lt, lte, Compare
//	                               gt, gte
//	a & b, a | b (Kleene)          and, or                    And, Or (nested calls flattened)
//	~a, pc.invert                  not                        Not
//	a.is_null(), a.is_valid()      is_null, is_not_null       IsNull, IsNull{Negated}
//	a.isin([...])                  SingularOrList             In{Nulls: ArrowNulls}
//	pc.starts_with(a, "p")         starts_with                StartsWith
//	pc.ends_with(a, "s")           ends_with                  Like '%s' (s escaped)
//	pc.match_substring(a, "s")     contains                   Like '%s%' (s escaped)
//	(other producers)              like                       Like
//	pc.field("st", "x")            struct field reference     Column{Path: [st x]}
//	pa.scalar(...), Python values  literal                    Literal{Value: scalar.Scalar}
//
// The string functions must be case-sensitive (ignore_case=True is
// refused) and their second argument a string literal.
//
// Literals become arrow scalars of the literal's own type: bool, int8 to
// int64, uint8 to uint64 (pyarrow writes these as Arrow's user-defined
// types u8..u64 holding a google.protobuf.UInt64Value), float32, float64,
// string (also varchar, fixed_char), binary, fixed_binary, date32,
// time64[us], timestamp[us] (Substrait's timestamp is microseconds),
// timestamp[us, UTC] (timestamp_tz, an instant), precision_timestamp(_tz)
// with unit s, ms, us or ns, decimal128, and typed nulls. filter.Bind then
// coerces each to its column's type.
//
// pyarrow binds an expression to the schema before writing it, so its
// literals already carry the column's type (an int8 column compared with
// a Python int gets an i8 literal). Where that would take a cast (an
// int32 column against 1.5, a uint8 column against a Python int, an
// int32 column cast to int64) pyarrow refuses to serialize: "Substrait is
// only capable of representing unsafe casts" (scand's Python client then
// sends the predicate as SQL text). Casts therefore come only
// from other producers, and two kinds are taken: a cast of a column to a
// type holding every value of the column's (wider integers, float64 from
// integers up to 32 bits, float32 to float64) is dropped, because Bind
// coerces the other operand to the column's own type, which selects the
// same rows or refuses a literal outside the column's range; a cast of a
// literal is folded when casting back gives the same value. Everything
// else (another function, a cast of an expression, a reference into a
// list) is an *filter.Error that names it and lists what is supported.
//
// A literal its column cannot hold exactly (a decimal of a finer scale, a
// float against a decimal column, an int64 beyond an int32 column) is
// compared exactly by filter.Bind, as SQL text is (filter/exact.go).
//
// pyarrow's is_in(skip_nulls=True) serializes exactly like the default,
// so the flag does not reach scand; In uses is_in's default semantics.
//
// # Why not substrait-go or arrow-go's compute/exprs
//
// The message is decoded with the generated protobuf types of
// github.com/substrait-io/substrait-protobuf/go and walked here, because:
//
//   - substrait-go (v8) resolves function extensions only by URN and
//     refuses pyarrow 26's old-style extension URIs ("URN reference 0
//     could not be resolved"). substrait-protobuf v0.85 no longer declares
//     those URI fields either; they survive as unknown fields, and
//     extensions.go reads them (extension_uris = 1, extension_uri_reference
//     = 1), accepting the URN form as well. A function is known by its
//     name without signature ("equal:any_any" is "equal").
//   - arrow-go's compute/exprs executes expressions rather than
//     translating them, has no SingularOrList (pyarrow's isin) and no
//     string functions, and its schema conversion panicked on a struct
//     column. Executing through it would also be a second evaluation path
//     beside the form's.
//
// # Schema
//
// Field references are direct struct-field references from the root of
// base_schema. Its names are depth first, each struct's field names after
// the struct's own. pyarrow names struct fields only; the Substrait spec
// also names structs inside lists and maps; whichever count matches is
// used.
//
// # Limits
//
// A message over filter.MaxTextBytes, an expression or schema nested
// deeper than filter.MaxDepth (checked while walking; the walk recurses
// only that far), or a SingularOrList over filter.MaxInValues is refused
// with an error wrapping filter.ErrTooComplex. A message nested beyond
// protobuf-go's own recursion limit (10,000 messages) fails to decode and
// is reported as not a valid ExtendedExpression.
package substrait
