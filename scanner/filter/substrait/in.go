package substrait

import (
	"fmt"

	"github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// in translates a SingularOrList, which is how pyarrow writes is_in: an
// In with pyarrow's null semantics (a NULL operand matches a NULL in the
// list and is false otherwise). pyarrow's skip_nulls=True is not in the
// message; it serializes the same as the default.
func (t *translator) in(s *substraitpb.Expression_SingularOrList, depth int) (filter.Expr, error) {
	opts := s.GetOptions()
	if len(opts) > filter.MaxInValues {
		return nil, fmt.Errorf("filter: Substrait IN list of %d values is over the limit of %d: %w",
			len(opts), filter.MaxInValues, filter.ErrTooComplex)
	}
	term, err := t.expr(s.GetValue(), depth+1)
	if err != nil {
		return nil, err
	}
	values := make([]*filter.Literal, len(opts))
	for i, o := range opts {
		l := o.GetLiteral()
		if l == nil {
			return nil, filter.Errorf("entry %d of a Substrait IN list is %s, not a literal", i+1, rexKind(o))
		}
		v, err := t.literal(l)
		if err != nil {
			return nil, err
		}
		values[i] = &filter.Literal{Value: v}
	}
	return &filter.In{Term: term, Values: values, Nulls: filter.ArrowNulls}, nil
}
