package filter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/scand/scand/scanner/filter"
	sqlfilter "github.com/scand/scand/scanner/filter/sql"
)

func TestCheckCost(t *testing.T) {
	repeat := func(term, sep string, n int) string {
		return strings.TrimSuffix(strings.Repeat(term+sep, n), sep)
	}
	cases := []struct {
		name string
		sql  string
		ok   bool
	}{
		{"one term", "i > 0", true},
		// 999 comparisons and the AND joining them: 1,000.
		{"at the cap", repeat("i > 0", " AND ", filter.MaxTerms-1), true},
		{"one over", repeat("i > 0", " AND ", filter.MaxTerms), false},
		{"the attack: 50,000 ANDed copies", repeat("i > 0", " AND ", 50_000), false},
		{"ORs", repeat("i = 1", " OR ", filter.MaxTerms), false},
		// Parentheses do not hide terms: nested ANDs flatten into one.
		{"nested", "(" + repeat("i > 0", " AND ", 600) + ") AND (" + repeat("i > 0", " AND ", 600) + ")", false},
		{"nested under the cap", "(" + repeat("i > 0", " AND ", 400) + ") AND (" + repeat("i > 0", " AND ", 400) + ")", true},
		// A long IN list is one operation.
		{"IN of 50,000 values", "i IN (" + repeat("1", ", ", 50_000) + ")", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := sqlfilter.Parse(tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			err = filter.CheckCost(e)
			if tc.ok && err != nil {
				t.Errorf("CheckCost: %v, want nil", err)
			}
			if !tc.ok && (!errors.Is(err, filter.ErrTooComplex) || !strings.Contains(err.Error(), "filter.MaxTerms (1000)")) {
				t.Errorf("CheckCost: %v, want ErrTooComplex naming filter.MaxTerms", err)
			}
		})
	}
}
