package substrait

import (
	"slices"
	"strings"

	"github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// stringMatch translates starts_with, ends_with, contains and like, whose
// second argument must be a string literal. starts_with stays StartsWith
// (it prunes by statistics); ends_with and contains become a Like with the
// text escaped; like's pattern is taken as filter.Like reads it (%, _ and
// a backslash escape: Substrait leaves escapes unspecified).
func stringMatch(t *translator, name string, args []*substraitpb.Expression, opts []*substraitpb.FunctionOption,
	depth int) (filter.Expr, error) {
	if err := caseSensitive(name, opts); err != nil {
		return nil, err
	}
	if len(args) != 2 {
		return nil, filter.Errorf("Substrait function %q takes 2 arguments, not %d", name, len(args))
	}
	text, ok := stringLiteral(args[1])
	if !ok {
		return nil, filter.Errorf("the second argument of Substrait function %q must be a non-null string literal", name)
	}
	term, err := t.expr(args[0], depth+1)
	if err != nil {
		return nil, err
	}
	switch name {
	case "starts_with":
		return &filter.StartsWith{Term: term, Prefix: text}, nil
	case "ends_with":
		return &filter.Like{Term: term, Pattern: "%" + escapeLike(text)}, nil
	case "contains":
		return &filter.Like{Term: term, Pattern: "%" + escapeLike(text) + "%"}, nil
	}
	return &filter.Like{Term: term, Pattern: text}, nil
}

// caseSensitive accepts only the option case_sensitivity, and only when
// CASE_SENSITIVE is among its preferences (a consumer takes the first
// preference it supports).
func caseSensitive(name string, opts []*substraitpb.FunctionOption) error {
	for _, o := range opts {
		if o.GetName() != "case_sensitivity" {
			return filter.Errorf("option %q of Substrait function %q is not supported", o.GetName(), name)
		}
		if !slices.Contains(o.GetPreference(), "CASE_SENSITIVE") {
			return filter.Errorf("Substrait function %q is supported only case-sensitive, not with case_sensitivity %v",
				name, o.GetPreference())
		}
	}
	return nil
}

// stringLiteral is e's text when e is a non-null string, varchar or
// fixed-char literal.
func stringLiteral(e *substraitpb.Expression) (string, bool) {
	return literalText(e.GetLiteral())
}

func literalText(l *substraitpb.Expression_Literal) (string, bool) {
	switch v := l.GetLiteralType().(type) {
	case *substraitpb.Expression_Literal_String_:
		return v.String_, true
	case *substraitpb.Expression_Literal_VarChar_:
		return v.VarChar.GetValue(), true
	case *substraitpb.Expression_Literal_FixedChar:
		return v.FixedChar, true
	}
	return "", false
}

// escapeLike makes s match itself in a filter.Like pattern.
func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}
