// Package sql parses scand's SQL WHERE subset into filter.Expr.
package sql

import (
	"errors"

	"github.com/scand/scand/scanner/filter"
)

// Parse is a placeholder until the parser lands.
func Parse(text string) (filter.Expr, error) {
	return nil, errors.New("sql.Parse: not implemented yet")
}
