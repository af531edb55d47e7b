package substrait

import (
	"fmt"
	"slices"
	"strings"

	"github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// translateFunc translates a call of one function, its arguments already
// checked to be values.
type translateFunc func(t *translator, name string, args []*substraitpb.Expression, opts []*substraitpb.FunctionOption,
	depth int) (filter.Expr, error)

// functions are the Substrait functions Translate knows, by name without
// signature. All are from the standard extensions functions_comparison,
// functions_boolean and functions_string.
var functions map[string]translateFunc

func init() {
	functions = map[string]translateFunc{
		"equal": compare(filter.Eq), "not_equal": compare(filter.Ne),
		"lt": compare(filter.Lt), "lte": compare(filter.Le),
		"gt": compare(filter.Gt), "gte": compare(filter.Ge),
		"and": logic, "or": logic, "not": not,
		"is_null": isNull(false), "is_not_null": isNull(true),
		"starts_with": stringMatch, "ends_with": stringMatch, "contains": stringMatch, "like": stringMatch,
	}
}

// supportedFunctions lists functions' names, for messages.
func supportedFunctions() string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// call translates a scalar function call.
func (t *translator) call(f *substraitpb.Expression_ScalarFunction, depth int) (filter.Expr, error) {
	name, ok := t.funcs[f.GetFunctionReference()]
	if !ok {
		return nil, filter.Errorf("Substrait function reference %d is not declared in the message's extensions",
			f.GetFunctionReference())
	}
	tr, ok := functions[name]
	if !ok {
		return nil, filter.Errorf("Substrait function %q is not supported (supported: %s)", name, supportedFunctions())
	}
	args := f.GetArgs() // deprecated form, used only when arguments is empty
	if len(f.GetArguments()) > 0 {
		args = make([]*substraitpb.Expression, len(f.GetArguments()))
		for i, a := range f.GetArguments() {
			if args[i] = a.GetValue(); args[i] == nil {
				return nil, filter.Errorf("argument %d of Substrait function %q is not a value (enum and type arguments are not supported)",
					i+1, name)
			}
		}
	}
	return tr(t, name, args, f.GetOptions(), depth)
}

// operands translates args, which must number want (or at least -want
// when want is negative), refusing options.
func (t *translator) operands(name string, args []*substraitpb.Expression, opts []*substraitpb.FunctionOption,
	want, depth int) ([]filter.Expr, error) {
	if len(opts) > 0 {
		return nil, filter.Errorf("option %q of Substrait function %q is not supported", opts[0].GetName(), name)
	}
	if (want >= 0 && len(args) != want) || (want < 0 && len(args) < -want) {
		return nil, filter.Errorf("Substrait function %q takes %s arguments, not %d", name, arity(want), len(args))
	}
	out := make([]filter.Expr, len(args))
	for i, a := range args {
		e, err := t.expr(a, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func arity(want int) string {
	if want < 0 {
		return fmt.Sprintf("at least %d", -want)
	}
	return fmt.Sprint(want)
}

func compare(op filter.CompareOp) translateFunc {
	return func(t *translator, name string, args []*substraitpb.Expression, opts []*substraitpb.FunctionOption,
		depth int) (filter.Expr, error) {
		ops, err := t.operands(name, args, opts, 2, depth)
		if err != nil {
			return nil, err
		}
		return &filter.Compare{Op: op, Left: ops[0], Right: ops[1]}, nil
	}
}

// logic translates and/or (Kleene, variadic), flattening nested calls of
// the same function: pyarrow writes a & b & c as and(and(a, b), c).
func logic(t *translator, name string, args []*substraitpb.Expression, opts []*substraitpb.FunctionOption,
	depth int) (filter.Expr, error) {
	ops, err := t.operands(name, args, opts, -1, depth)
	if err != nil {
		return nil, err
	}
	if len(ops) == 1 {
		return ops[0], nil
	}
	var terms []filter.Expr
	for _, o := range ops {
		switch x := o.(type) {
		case *filter.And:
			if name == "and" {
				terms = append(terms, x.Terms...)
				continue
			}
		case *filter.Or:
			if name == "or" {
				terms = append(terms, x.Terms...)
				continue
			}
		}
		terms = append(terms, o)
	}
	if name == "and" {
		return &filter.And{Terms: terms}, nil
	}
	return &filter.Or{Terms: terms}, nil
}

func not(t *translator, name string, args []*substraitpb.Expression, opts []*substraitpb.FunctionOption,
	depth int) (filter.Expr, error) {
	ops, err := t.operands(name, args, opts, 1, depth)
	if err != nil {
		return nil, err
	}
	return &filter.Not{Term: ops[0]}, nil
}

func isNull(negated bool) translateFunc {
	return func(t *translator, name string, args []*substraitpb.Expression, opts []*substraitpb.FunctionOption,
		depth int) (filter.Expr, error) {
		ops, err := t.operands(name, args, opts, 1, depth)
		if err != nil {
			return nil, err
		}
		return &filter.IsNull{Term: ops[0], Negated: negated}, nil
	}
}
