package scanner

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// MaxArrowNesting is the deepest column a scan can return: Arrow IPC (and
// so Flight) encodes at most 64 levels of nested arrays, the leaf
// included (arrow-go's and Arrow C++'s kMaxNestingDepth); a deeper batch
// fails to encode. Readers refuse such files at Open (CheckNesting), as
// unsupported, instead of failing every stream with an internal error.
const MaxArrowNesting = 64

// nesting is the levels of arrays a column of type t takes: 1 for a
// leaf, one more for each nested type around it.
func nesting(t arrow.DataType) int {
	n, ok := t.(arrow.NestedType)
	if !ok {
		return 1
	}
	deepest := 0
	for _, f := range n.Fields() {
		deepest = max(deepest, nesting(f.Type))
	}
	return 1 + deepest
}

// CheckNesting refuses a schema with a column nested deeper than
// MaxArrowNesting; name is the file's, for the message. Callers bound the
// schema's depth before building it (the recursion here is that deep at
// most).
func CheckNesting(name string, sc *arrow.Schema) error {
	for _, f := range sc.Fields() {
		if d := nesting(f.Type); d > MaxArrowNesting {
			return fmt.Errorf("%s: column %q is nested %d levels deep, over the %d levels Arrow IPC (Flight) can carry: %w",
				name, f.Name, d, MaxArrowNesting, ErrUnsupported)
		}
	}
	return nil
}
