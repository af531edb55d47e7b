package sqlfront

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/scand/scand/scanner/filter"
)

// okCases are statements Parse accepts, and what they mean.
var okCases = []struct {
	text string
	want Statement // Where is checked through Filter's text
}{
	{"SELECT * FROM 'trips/*.parquet'", Statement{Source: Source{Path: "trips/*.parquet", Pos: 14}}},
	{"select * from 's3://b/p/';", Statement{Source: Source{Path: "s3://b/p/", Pos: 14}}},
	{"SELECT a, b.c, \"x y\" FROM 'd/'", Statement{Columns: []string{"a", "b.c", "x y"}, Source: Source{Path: "d/", Pos: 26}}},
	{"SELECT \"from\" FROM trips", Statement{Columns: []string{"from"}, Source: Source{Table: []string{"trips"}, Pos: 19}}},
	{"SELECT * FROM scand.root.\"my trips\"", Statement{Source: Source{Table: []string{"scand", "root", "my trips"}, Pos: 14}}},
	{"SELECT * FROM 'it''s.parquet'", Statement{Source: Source{Path: "it's.parquet", Pos: 14}}},
	{"SELECT * FROM t WHERE fare > 10", Statement{Source: Source{Table: []string{"t"}, Pos: 14}, Filter: "fare > 10"}},
	{"SELECT * FROM t WHERE city = 'LIMIT 3' LIMIT 5", Statement{Source: Source{Table: []string{"t"}, Pos: 14}, Filter: "city = 'LIMIT 3'", Limit: 5, HasLimit: true}},
	{"SELECT * FROM t WHERE (a = 1 OR \"limit\" = 2) limit 0", Statement{Source: Source{Table: []string{"t"}, Pos: 14}, Filter: "(a = 1 OR \"limit\" = 2)", HasLimit: true}},
	{"SELECT * FROM t WHERE order = 1 AND \"group\" > 2", Statement{Source: Source{Table: []string{"t"}, Pos: 14}, Filter: "order = 1 AND \"group\" > 2"}},
	{"SELECT * FROM t -- comment\n WHERE a /* c */ = 1 LIMIT 7 ; ", Statement{Source: Source{Table: []string{"t"}, Pos: 14}, Filter: "a         = 1", Limit: 7, HasLimit: true}},
	{"SELECT * FROM t LIMIT ALL", Statement{Source: Source{Table: []string{"t"}, Pos: 14}}},
	{"SELECT COUNT(*) FROM t", Statement{Aggs: []Aggregate{{Kind: CountStar, Name: "count(*)"}}, Source: Source{Table: []string{"t"}, Pos: 21}}},
	{"SELECT count(*) AS n, MIN(fare), max(\"a\".b) m FROM 'x.parquet' WHERE city IN ('a', 'b')",
		Statement{Aggs: []Aggregate{{Kind: CountStar, Name: "n"}, {Kind: Min, Column: "fare", Name: "min(fare)"}, {Kind: Max, Column: "a.b", Name: "m"}},
			Source: Source{Path: "x.parquet", Pos: 51}, Filter: "city IN ('a', 'b')"}},
	{"SELECT ALL a FROM t", Statement{Columns: []string{"a"}, Source: Source{Table: []string{"t"}, Pos: 18}}},
}

func TestParse(t *testing.T) {
	for _, tc := range okCases {
		st, err := Parse(tc.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.text, err)
			continue
		}
		if (st.Where != nil) != (tc.want.Filter != "") {
			t.Errorf("Parse(%q): Where = %v, want a condition: %v", tc.text, st.Where, tc.want.Filter != "")
		}
		st.Where = nil
		if !reflect.DeepEqual(*st, tc.want) {
			t.Errorf("Parse(%q) =\n %+v, want\n %+v", tc.text, *st, tc.want)
		}
	}
}

func TestFilterColumns(t *testing.T) {
	st, err := Parse("SELECT COUNT(*) FROM t WHERE b > 1 AND a.x = 2 OR b < 0")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.FilterColumns(); !reflect.DeepEqual(got, []string{"b", "a.x"}) {
		t.Errorf("FilterColumns = %v", got)
	}
}

// errorCases are statements Parse refuses: whether as unsupported, where,
// and what the message says.
var errorCases = []struct {
	text        string
	unsupported bool
	pos         int
	want        string
}{
	// Syntax errors, with the position.
	{"", false, 0, "expected SELECT, found the end"},
	{"SELEC * FROM t", false, 0, `expected SELECT, found "SELEC"`},
	{"SELECT * FROM", false, 13, "expected a quoted path or a table after FROM"},
	{"SELECT * FROM ''", false, 14, "empty path"},
	{"SELECT * FROM 'abc", false, 14, "unterminated string starting at position 14"},
	{"SELECT \"a FROM t", false, 7, "unterminated quoted identifier"},
	{"SELECT a FROM t WHERE", false, 16, "expected a condition after WHERE"},
	{"SELECT a FROM t WHERE a >", false, 25, "expected"},
	{"SELECT a FROM t WHERE a = 'x", false, 26, "unterminated string starting at position 26"},
	{"SELECT a FROM t WHERE a == 1", false, 25, ""},
	{"SELECT a FROM t WHERE fare > 10 LIMIT", false, 37, "expected a row count after LIMIT"},
	{"SELECT a FROM t LIMIT -1", false, 22, "must not be negative"},
	{"SELECT a FROM t LIMIT 99999999999999999999", false, 22, "whole number"},
	{"SELECT a FROM t LIMIT 1.5", false, 22, "whole number"},
	{"SELECT a, FROM t", false, 10, "expected a column"},
	{"SELECT a FROM t t2 x", true, 16, "alias on the source"},
	{"SELECT * FROM t WHERE a = 1 /* x", false, 28, "unterminated comment"},
	{"SELECT where FROM t", false, 7, "keyword"},
	{"SELECT * FROM t extra stuff", true, 16, "alias"},
	{"SELECT * FROM t LIMIT 5 6", false, 24, "expected WHERE, LIMIT or the end"},
	{"SELECT * FROM t; SELECT 1", true, 17, "more than one statement"},
	{"SELECT MIN() FROM t", false, 11, "expected a column"},
	// Unsupported, saying what scand answers.
	{"SELECT 1", true, 7, "a constant in the select list"},
	{"SELECT a FROM t1 JOIN t2 ON t1.a = t2.a", true, 17, "a join"},
	{"SELECT a FROM 'x', 'y'", true, 17, "a join"},
	{"SELECT a FROM t GROUP BY a", true, 16, "GROUP BY"},
	{"SELECT a FROM t WHERE a > 1 ORDER BY a", true, 28, "ORDER BY"},
	{"SELECT a FROM t ORDER BY a", true, 16, "ORDER BY"},
	{"SELECT a FROM t LIMIT 5 OFFSET 3", true, 24, "OFFSET"},
	{"SELECT DISTINCT a FROM t", true, 7, "DISTINCT"},
	{"SELECT a + 1 FROM t", true, 9, "an expression in the select list"},
	{"SELECT a AS b FROM t", true, 9, "alias on a column"},
	{"SELECT upper(a) FROM t", true, 7, "the function upper()"},
	{"SELECT COUNT(a) FROM t", true, 13, "COUNT of anything but *"},
	{"SELECT COUNT(DISTINCT a) FROM t", true, 13, "DISTINCT"},
	{"SELECT MIN(a + 1) FROM t", true, 13, "of an expression"},
	{"SELECT a, COUNT(*) FROM t", true, 10, "columns beside aggregates"},
	{"SELECT *, a FROM t", true, 8, "* with other items"},
	{"SELECT * FROM (SELECT * FROM t)", true, 14, "subquery in FROM"},
	{"SELECT * FROM t WHERE a IN (SELECT b FROM u)", true, 28, "subquery in WHERE"},
	{"SELECT * FROM t WHERE a = ?", false, 26, "bind parameter"},
	{"SELECT * FROM t WHERE a = $1", false, 26, "bind parameter"},
	{"SELECT * FROM t LIMIT ?", false, 22, "bind parameter"},
	{"INSERT INTO t VALUES (1)", true, 0, "read-only"},
	{"WITH x AS (SELECT 1) SELECT * FROM x", true, 0, "common table expressions"},
	{"SELECT * FROM read_parquet('x')", true, 14, "table function"},
	{"SELECT t.* FROM t", true, 9, "qualified *"},
	{"SELECT * FROM t UNION SELECT * FROM u", true, 16, "UNION"},
	{"SELECT CASE WHEN a THEN 1 END FROM t", true, 7, "expression"},
	{"SELECT count(*) OVER () FROM t", true, 16, "OVER"},
}

func TestErrors(t *testing.T) {
	for _, tc := range errorCases {
		_, err := Parse(tc.text)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q) = %v, want an *Error", tc.text, err)
			continue
		}
		if got := errors.Is(err, ErrUnsupported); got != tc.unsupported {
			t.Errorf("Parse(%q): unsupported = %v, want %v (%v)", tc.text, got, tc.unsupported, err)
		}
		if e.Pos != tc.pos {
			t.Errorf("Parse(%q): position %d, want %d (%v)", tc.text, e.Pos, tc.pos, err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want ...%s...", tc.text, err, tc.want)
		}
		if tc.unsupported && !strings.Contains(err.Error(), "joins, grouping, sorting and expressions belong in a query engine") {
			t.Errorf("Parse(%q) = %v: the message does not say what scand answers", tc.text, err)
		}
	}
}

func TestTooComplex(t *testing.T) {
	deep := "SELECT * FROM t WHERE " + strings.Repeat("(", 200) + "a = 1" + strings.Repeat(")", 200)
	if _, err := Parse(deep); !errors.Is(err, filter.ErrTooComplex) {
		t.Errorf("a condition 200 deep: %v, want filter.ErrTooComplex", err)
	}
	long := "SELECT * FROM t WHERE a IN (" + strings.Repeat("1,", MaxStatementBytes/2) + "1)"
	if _, err := Parse(long); !errors.Is(err, filter.ErrTooComplex) {
		t.Errorf("a statement over MaxStatementBytes: %v, want filter.ErrTooComplex", err)
	}
}

// FuzzParse: Parse never panics; every error is an *Error with a
// position inside the text; an accepted statement's condition parses on
// its own, and the statement has columns or aggregates, not both.
//
//	go test -run=^$ -fuzz=FuzzParse -fuzztime=60s ./sqlfront
func FuzzParse(f *testing.F) {
	for _, tc := range okCases {
		f.Add(tc.text)
	}
	for _, tc := range errorCases {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		st, err := Parse(text)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) = %v (%T), want an *Error", text, err, err)
			}
			if e.Pos < 0 || e.Pos > len(text) {
				t.Fatalf("Parse(%q): position %d outside the text", text, e.Pos)
			}
			return
		}
		if len(st.Columns) > 0 && len(st.Aggs) > 0 {
			t.Fatalf("Parse(%q): both columns and aggregates", text)
		}
		if st.Source.Path == "" && len(st.Source.Table) == 0 {
			t.Fatalf("Parse(%q): no source", text)
		}
		if st.Filter != "" && len(st.Filter) > len(text) {
			t.Fatalf("Parse(%q): condition %q is longer than the text", text, st.Filter)
		}
	})
}
