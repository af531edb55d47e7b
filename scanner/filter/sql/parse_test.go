package sql

import (
	"reflect"
	"testing"

	"github.com/scand/scand/scanner/filter"
)

// Tree builders, to keep the tables readable.
func col(path ...string) *filter.Column { return &filter.Column{Path: path} }
func hinted(name string) *filter.Column {
	return &filter.Column{Path: []string{name}, Hint: "string literals take single quotes: '" + name + "'"}
}
func num(s string) *filter.Literal               { return &filter.Literal{Value: filter.Number(s)} }
func lit(v any) *filter.Literal                  { return &filter.Literal{Value: v} }
func and(ts ...filter.Expr) *filter.And          { return &filter.And{Terms: ts} }
func or(ts ...filter.Expr) *filter.Or            { return &filter.Or{Terms: ts} }
func not(e filter.Expr) *filter.Not              { return &filter.Not{Term: e} }
func eq(l, r filter.Expr) *filter.Compare        { return &filter.Compare{Op: filter.Eq, Left: l, Right: r} }
func gt(l, r filter.Expr) *filter.Compare        { return &filter.Compare{Op: filter.Gt, Left: l, Right: r} }
func isNull(e filter.Expr, neg bool) filter.Expr { return &filter.IsNull{Term: e, Negated: neg} }

func cmp(op filter.CompareOp, l, r filter.Expr) *filter.Compare {
	return &filter.Compare{Op: op, Left: l, Right: r}
}

func between(x, lo, hi filter.Expr) *filter.And {
	return and(cmp(filter.Ge, x, lo), cmp(filter.Le, x, hi))
}

func in(x filter.Expr, neg bool, vs ...*filter.Literal) *filter.In {
	return &filter.In{Term: x, Values: vs, Negated: neg, Nulls: filter.SQLNulls}
}

func like(x filter.Expr, pat string, neg bool) *filter.Like {
	return &filter.Like{Term: x, Pattern: pat, Negated: neg}
}

// parseCases is every construct of the subset; the round-trip test and the
// fuzz seed corpus reuse it.
var parseCases = []struct {
	name, text string
	want       filter.Expr
}{
	{"eq", "a = 1", eq(col("a"), num("1"))},
	{"ne bang", "a != 1", cmp(filter.Ne, col("a"), num("1"))},
	{"ne angle", "a <> 1", cmp(filter.Ne, col("a"), num("1"))},
	{"lt", "a < 1", cmp(filter.Lt, col("a"), num("1"))},
	{"le", "a <= 1", cmp(filter.Le, col("a"), num("1"))},
	{"gt", "a > 1", gt(col("a"), num("1"))},
	{"ge", "a >= 1", cmp(filter.Ge, col("a"), num("1"))},
	{"no spaces", "a>=1", cmp(filter.Ge, col("a"), num("1"))},
	{"literal left", "10 < fare", cmp(filter.Lt, num("10"), col("fare"))},
	{"column vs column", "a = b", eq(col("a"), hinted("b"))},
	{"literal vs literal", "1 = 1", eq(num("1"), num("1"))},
	{"decimal", "a = 1.50", eq(col("a"), num("1.50"))},
	{"leading dot", "a = .5", eq(col("a"), num(".5"))},
	{"trailing dot", "a = 1.", eq(col("a"), num("1."))},
	{"exponent", "a = 1e10", eq(col("a"), num("1e10"))},
	{"signed exponent", "a = 2.5E-3", eq(col("a"), num("2.5E-3"))},
	{"negative", "a = -3", eq(col("a"), num("-3"))},
	{"negative spaced", "a = - 3.5", eq(col("a"), num("-3.5"))},
	{"negative left", "-1 < a", cmp(filter.Lt, num("-1"), col("a"))},
	{"big integer kept as text", "a = 123456789012345678901234567890", eq(col("a"), num("123456789012345678901234567890"))},
	{"string", "a = 'x'", eq(col("a"), lit("x"))},
	{"string doubled quote", "a = 'it''s'", eq(col("a"), lit("it's"))},
	{"string only quotes", "a = ''''", eq(col("a"), lit("'"))},
	{"empty string", "a = ''", eq(col("a"), lit(""))},
	{"string keeps backslash", `a = 'a\b'`, eq(col("a"), lit(`a\b`))},
	{"string unicode", "a = 'héllo ✓'", eq(col("a"), lit("héllo ✓"))},
	{"true", "a = TRUE", eq(col("a"), lit(true))},
	{"false lower", "a = false", eq(col("a"), lit(false))},
	{"null", "a = NULL", eq(col("a"), lit(nil))},
	{"date", "d >= DATE '2026-01-31'", cmp(filter.Ge, col("d"), lit(filter.Date("2026-01-31")))},
	{"date leap day", "d = date '2024-02-29'", eq(col("d"), lit(filter.Date("2024-02-29")))},
	{"timestamp", "t < TIMESTAMP '2026-01-31 12:00:00'", cmp(filter.Lt, col("t"), lit(filter.Timestamp("2026-01-31 12:00:00")))},
	{"timestamp fraction zone", "t = TIMESTAMP '2026-01-31 12:00:00.123456+02:00'",
		eq(col("t"), lit(filter.Timestamp("2026-01-31 12:00:00.123456+02:00")))},
	{"timestamp T Z", "t = TIMESTAMP '2026-01-31T12:00:00Z'", eq(col("t"), lit(filter.Timestamp("2026-01-31T12:00:00Z")))},
	{"timestamp zone name", "t = TIMESTAMP '2026-01-31 12:00:00 Europe/Paris'",
		eq(col("t"), lit(filter.Timestamp("2026-01-31 12:00:00 Europe/Paris")))},
	{"timestamp short offset", "t = TIMESTAMP '2026-01-31 12:00:00-0530'", eq(col("t"), lit(filter.Timestamp("2026-01-31 12:00:00-0530")))},
	{"timestamp date only", "t = TIMESTAMP '2026-01-31'", eq(col("t"), lit(filter.Timestamp("2026-01-31")))},
	{"timestamp minutes, zone unspaced", "t = TIMESTAMP '2026-01-31 12:00z'", eq(col("t"), lit(filter.Timestamp("2026-01-31 12:00z")))},
	{"timestamp nanoseconds", "t = TIMESTAMP '2026-01-31 12:00:00.1234567890'",
		eq(col("t"), lit(filter.Timestamp("2026-01-31 12:00:00.1234567890")))},
	{"quoted column", `"my col" = 1`, eq(col("my col"), num("1"))},
	{"quoted column doubled quote", `"a""b" = 1`, eq(col(`a"b`), num("1"))},
	{"quoted keyword column", `"date" = 1`, eq(col("date"), num("1"))},
	{"quoted keyword columns", `"AND" = 1 AND "Null" IS NULL AND "true"`,
		and(eq(col("AND"), num("1")), isNull(col("Null"), false), col("true"))},
	{"quoted column any character", "\"a\tb -- c\" = 1", eq(col("a\tb -- c"), num("1"))},
	{"path", "a.b.c = 1", eq(col("a", "b", "c"), num("1"))},
	{"path quoted", `a.b."c d" = 1`, eq(col("a", "b", "c d"), num("1"))},
	{"path spaced", `a . "b" = 1`, eq(col("a", "b"), num("1"))},
	{"path keyword after dot", "a.date = 1", eq(col("a", "date"), num("1"))},
	{"identifier keeps case", "FaRe = 1", eq(col("FaRe"), num("1"))},
	{"identifier underscore digits", "_x9 = 1", eq(col("_x9"), num("1"))},
	{"identifier letters", "größe = 1", eq(col("größe"), num("1"))},
	{"and flat", "a = 1 AND b = 2 AND c = 3", and(eq(col("a"), num("1")), eq(col("b"), num("2")), eq(col("c"), num("3")))},
	{"or flat", "a = 1 OR b = 2 OR c = 3", or(eq(col("a"), num("1")), eq(col("b"), num("2")), eq(col("c"), num("3")))},
	{"and before or", "a = 1 OR b = 2 AND c = 3", or(eq(col("a"), num("1")), and(eq(col("b"), num("2")), eq(col("c"), num("3"))))},
	{"and before or left", "a = 1 AND b = 2 OR c = 3", or(and(eq(col("a"), num("1")), eq(col("b"), num("2"))), eq(col("c"), num("3")))},
	{"not before and", "NOT a = 1 AND b = 2", and(not(eq(col("a"), num("1"))), eq(col("b"), num("2")))},
	{"parens", "(a = 1 OR b = 2) AND c = 3", and(or(eq(col("a"), num("1")), eq(col("b"), num("2"))), eq(col("c"), num("3")))},
	{"redundant parens", "((a = 1))", eq(col("a"), num("1"))},
	{"parenthesised chain stays a node", "(a = 1 AND b = 2) AND c = 3",
		and(and(eq(col("a"), num("1")), eq(col("b"), num("2"))), eq(col("c"), num("3")))},
	{"keywords any case", "a = 1 and not b = 2 Or c = 3",
		or(and(eq(col("a"), num("1")), not(eq(col("b"), num("2")))), eq(col("c"), num("3")))},
	{"not not", "NOT NOT a", not(not(col("a")))},
	{"in", "a IN (1, 2, 3)", in(col("a"), false, num("1"), num("2"), num("3"))},
	{"in one", "a IN (1)", in(col("a"), false, num("1"))},
	{"in mixed", "a IN ('x', -1, NULL, DATE '2026-01-01')",
		in(col("a"), false, lit("x"), num("-1"), lit(nil), lit(filter.Date("2026-01-01")))},
	{"not in", "a NOT IN (1, 2)", in(col("a"), true, num("1"), num("2"))},
	{"between", "a BETWEEN 1 AND 10", between(col("a"), num("1"), num("10"))},
	{"not between", "a NOT BETWEEN 1 AND 10", not(between(col("a"), num("1"), num("10")))},
	{"between in and chain", "a BETWEEN 1 AND 2 AND b = 3",
		and(between(col("a"), num("1"), num("2")), eq(col("b"), num("3")))},
	{"between columns", "a BETWEEN lo AND hi", between(col("a"), hinted("lo"), hinted("hi"))},
	{"is null", "a IS NULL", isNull(col("a"), false)},
	{"is not null", "a IS NOT NULL", isNull(col("a"), true)},
	{"like", "a LIKE 'x%_'", like(col("a"), "x%_", false)},
	{"not like", "a NOT LIKE '%x'", like(col("a"), "%x", true)},
	{"like escapes kept", `a LIKE '100\%\\'`, like(col("a"), `100\%\\`, false)},
	{"starts_with", "starts_with(a, 'x')", &filter.StartsWith{Term: col("a"), Prefix: "x"}},
	{"starts_with any case", "STARTS_WITH(a.b, 'it''s')", &filter.StartsWith{Term: col("a", "b"), Prefix: "it's"}},
	{"not starts_with", "NOT starts_with(a, 'x') OR b", or(not(&filter.StartsWith{Term: col("a"), Prefix: "x"}), col("b"))},
	{"starts_with column name", "starts_with = 1", eq(col("starts_with"), num("1"))},
	{"bare column", "is_active", col("is_active")},
	{"bare column in chain", "is_active AND x > 1", and(col("is_active"), gt(col("x"), num("1")))},
	{"not bare column", "NOT is_active", not(col("is_active"))},
	{"bare true", "TRUE", lit(true)},
	{"bare false or", "FALSE OR a", or(lit(false), col("a"))},
	{"parenthesised bare", "(a)", col("a")},
	{"whitespace", " \t\na\r\n=\f1\v ", eq(col("a"), num("1"))},
	{"comments", "a = 1 -- first\nAND b = 2 -- last", and(eq(col("a"), num("1")), eq(col("b"), num("2")))},
	{"comment between minus and number", "a = - -- why\n3", eq(col("a"), num("-3"))},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.text, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q)\n got %s\nwant %s", tc.text, got, tc.want)
			}
		})
	}
}

// TestBetweenSharesNoNode: the two comparisons BETWEEN makes must not
// share the operand, so that a rewrite of one leaves the other alone.
func TestBetweenSharesNoNode(t *testing.T) {
	e, err := Parse("a.b BETWEEN 1 AND 2")
	if err != nil {
		t.Fatal(err)
	}
	terms := e.(*filter.And).Terms
	l, r := terms[0].(*filter.Compare).Left.(*filter.Column), terms[1].(*filter.Compare).Left.(*filter.Column)
	if l == r || &l.Path[0] == &r.Path[0] {
		t.Fatal("the comparisons of BETWEEN share their column")
	}
}

// TestRoundTrip: String renders SQL that parses back to the same tree.
func TestRoundTrip(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(e.String())
			if err != nil {
				t.Fatalf("Parse(%q): %v", e.String(), err)
			}
			if !reflect.DeepEqual(back, e) {
				t.Fatalf("round trip of %q\n got %s\nwant %s", tc.text, back, e)
			}
		})
	}
}
