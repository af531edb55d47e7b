package orc

import (
	"errors"
	"strings"
	"testing"

	"github.com/scand/scand/scanner"
)

// chainOfStructs is a type tree of levels types from the root to a long
// leaf, each struct with one field.
func chainOfStructs(levels int) []orcType {
	types := make([]orcType, levels)
	for i := range levels - 1 {
		types[i] = orcType{kind: kindStruct, subtypes: []uint64{uint64(i + 1)}, fieldNames: []string{"f"}}
	}
	types[levels-1] = orcType{kind: kindLong}
	return types
}

// The type tree's depth is capped as Parquet's schema is: 100 levels,
// the root included; past it the file is unsupported, naming the limit.
func TestTypeTreeDepthLimit(t *testing.T) {
	for _, tc := range []struct {
		levels int
		ok     bool
	}{{2, true}, {maxTypeDepth, true}, {maxTypeDepth + 1, false}, {6000, false}} {
		err := checkTypes(chainOfStructs(tc.levels))
		if tc.ok != (err == nil) {
			t.Errorf("%d levels: err = %v, want ok=%v", tc.levels, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, scanner.ErrUnsupported) || !strings.Contains(err.Error(), "100 levels")) {
			t.Errorf("%d levels: err = %v, want ErrUnsupported naming the limit", tc.levels, err)
		}
	}
}
