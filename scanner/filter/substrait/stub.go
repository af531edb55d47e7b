// Package substrait translates Substrait ExtendedExpressions into filter.Expr.
package substrait

import (
	"errors"

	"github.com/scand/scand/scanner/filter"
)

// Translate is a placeholder until the translator lands.
func Translate(msg []byte) (filter.Expr, error) {
	return nil, errors.New("substrait.Translate: not implemented yet")
}
