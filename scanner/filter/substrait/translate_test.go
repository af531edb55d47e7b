package substrait

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner/filter"
)

// fixture is what one testdata/<name>.bin (written by testdata/gen.py from
// a pyarrow expression) translates to: the form's text and the arrow types
// of its literals in Walk order, or an error.
type fixture struct {
	want  string
	types string
	err   string
}

var fixtures = map[string]fixture{
	"eq_i64":        {want: "(i64 = 5)", types: "int64"},
	"ne_i64":        {want: "(i64 != 5)", types: "int64"},
	"lt_i8":         {want: "(i8 < 5)", types: "int8"},
	"le_i16":        {want: "(i16 <= -3)", types: "int16"},
	"gt_i32":        {want: "(i32 > 7)", types: "int32"},
	"ge_i64":        {want: "(i64 >= 1099511627776)", types: "int64"},
	"lit_left":      {want: "(i64 > 5)", types: "int64"}, // pyarrow puts the field first
	"u8":            {want: "(u8 = 200)", types: "uint8"},
	"u64":           {want: "(u64 > 9223372036854775809)", types: "uint64"},
	"f32":           {want: "(f32 > 1.5)", types: "float32"},
	"f64":           {want: "(f64 <= 2.25)", types: "float64"},
	"f64_int":       {want: "(f64 > 1)", types: "float64"},
	"f64_nan":       {want: "(f64 = NaN)", types: "float64"},
	"f64_inf":       {want: "(f64 < +Inf)", types: "float64"},
	"str":           {want: `(s = 'it''s')`, types: "utf8"},
	"bin":           {want: "(b = X'00ff')", types: "binary"},
	"bool_col":      {want: "ok"},
	"bool_eq":       {want: `(ok = TRUE)`, types: "bool"},
	"date":          {want: `(d >= DATE '2024-02-29')`, types: "date32"},
	"ts_us":         {want: `(ts > TIMESTAMP '2020-01-01 12:30:00')`, types: "timestamp[us]"},
	"ts_py":         {want: `(ts < TIMESTAMP '2020-01-01 12:30:00')`, types: "timestamp[us]"},
	"ts_date":       {want: `(ts > TIMESTAMP '2020-01-01 00:00:00')`, types: "timestamp[us]"},
	"ts_ms":         {want: `(tsms = TIMESTAMP '2020-01-01 12:30:00')`, types: "timestamp[us]"}, // Substrait timestamps are µs
	"ts_tz":         {want: `(tsuz > TIMESTAMP '2020-01-01 00:00:00Z')`, types: "timestamp[us, tz=UTC]"},
	"dec":           {want: "(dec > 1.5)", types: "decimal(10, 2)"},
	"dec_neg":       {want: "(dec < -12.5)", types: "decimal(4, 2)"},
	"null_i64":      {want: `(i64 = NULL)`, types: "int64"},
	"null_str":      {want: `(s != NULL)`, types: "utf8"},
	"col_col":       {want: "(i64 = after)"},
	"and":           {want: "((i64 > 1) AND ok)", types: "int64"},
	"or":            {want: "((i64 > 1) OR ok)", types: "int64"},
	"and3":          {want: "((i64 > 1) AND ok AND (s IS NULL))", types: "int64"},
	"or_and":        {want: "(((i64 > 1) OR (i64 < -1)) AND (NOT ok))", types: "int64 int64"},
	"not":           {want: "(NOT ok)"},
	"not_cmp":       {want: `(NOT (s = 'x'))`, types: "utf8"},
	"and_kleene":    {want: "(ok AND (i8 = 1))", types: "int8"},
	"or_kleene":     {want: "(ok OR (i8 = 1))", types: "int8"},
	"invert":        {want: "(NOT ok)"},
	"is_null":       {want: "(i64 IS NULL)"},
	"is_valid":      {want: "(s IS NOT NULL)"},
	"is_null_ts_ns": {want: "(tsz IS NULL)"},
	"isin":          {want: "(i64 IN (1, 2, 3))", types: "int64 int64 int64"},
	"isin_str":      {want: `(s IN ('a', 'b''c'))`, types: "utf8 utf8"},
	"isin_null":     {want: `(i64 IN (1, NULL))`, types: "int64 int64"},
	"isin_i32":      {want: "(i32 IN (1, 2))", types: "int64 int64"}, // pyarrow leaves the set int64
	"isin_empty":    {want: "(i64 IN ())"},
	"not_isin":      {want: "(NOT (i64 IN (1, 2)))", types: "int64 int64"},
	"starts_with":   {want: "starts_with(s, 'ab%')"},
	"ends_with":     {want: `(s LIKE '%x\_y')`},
	"contains":      {want: `(s LIKE '%50\%%')`},
	"nested":        {want: `(st.inner.x = 'a')`, types: "utf8"},
	"nested_a":      {want: "(st.a > 1)", types: "int32"},
	"nested_starts": {want: "starts_with(st.inner.x, 'p')"},
	"after_struct":  {want: "(after = 1)", types: "int64"},
	"literal_true":  {want: "TRUE", types: "bool"},
	"err_nonbool":   {err: "must be a boolean expression, this one is selection of type i64"},
	"err_is_nan":    {err: `function "is_nan" is not supported (supported: and, contains, ends_with, equal, gt, gte, is_not_null, is_null, like, lt, lte, not, not_equal, or, starts_with)`},
	"err_add":       {err: `function "add" is not supported`},
	"err_starts_ci": {err: `"starts_with" is supported only case-sensitive`},
}

func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.bin")
	if err != nil || len(files) != len(fixtures) {
		t.Fatalf("testdata has %d .bin files, the table %d (%v): run testdata/gen.py", len(files), len(fixtures), err)
	}
	for name, want := range fixtures {
		t.Run(name, func(t *testing.T) {
			msg, err := os.ReadFile(filepath.Join("testdata", name+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			checkTranslate(t, msg, want)
		})
	}
}

func checkTranslate(t *testing.T, msg []byte, want fixture) {
	t.Helper()
	e, err := Translate(msg)
	if want.err != "" {
		var fe *filter.Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want.err) {
			t.Fatalf("Translate = %v, %v; want *filter.Error containing %q", e, err, want.err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if got := e.String(); got != want.want {
		t.Errorf("Translate = %s, want %s", got, want.want)
	}
	if got := literalTypes(e); got != want.types {
		t.Errorf("literal types = %q, want %q", got, want.types)
	}
}

// literalTypes lists the arrow types of e's literals, in Walk order.
func literalTypes(e filter.Expr) string {
	var types []string
	filter.Walk(e, func(n filter.Expr) {
		switch x := n.(type) {
		case *filter.Literal:
			types = append(types, literalType(x))
		case *filter.In: // Walk does not visit the values
			for _, v := range x.Values {
				types = append(types, literalType(v))
			}
		}
	})
	return strings.Join(types, " ")
}

func literalType(l *filter.Literal) string {
	if s, ok := l.Value.(scalar.Scalar); ok {
		return s.DataType().String()
	}
	return "untyped"
}
