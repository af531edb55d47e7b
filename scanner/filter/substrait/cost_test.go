package substrait

import (
	"errors"
	"testing"

	pb "github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// A Substrait `and` of 10,000 arguments is one call in the message, and
// 10,001 operations to evaluate per row: filter.CheckCost refuses it, and
// an `and` at the cap passes.
func TestSubstraitCost(t *testing.T) {
	ns := testSchema(false)
	andOf := func(n int) []byte {
		args := make([]*pb.Expression, n)
		for i := range args {
			args[i] = call(1, ref(1), i64(int64(i)))
		}
		return message(t, ns, cmpFuncs, call(2, args...))
	}
	for _, tc := range []struct {
		n  int
		ok bool
	}{{filter.MaxTerms - 1, true}, {10_000, false}} {
		e, err := Translate(andOf(tc.n))
		if err != nil {
			t.Fatalf("and of %d: %v", tc.n, err)
		}
		err = filter.CheckCost(e)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, filter.ErrTooComplex)) {
			t.Errorf("and of %d: CheckCost = %v, want ok %v", tc.n, err, tc.ok)
		}
	}
}
