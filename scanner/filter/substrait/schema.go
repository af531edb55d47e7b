package substrait

import (
	"fmt"

	"github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// field is a column of the base schema, or a field inside a struct column.
type field struct {
	name     string
	typ      *substraitpb.Type
	children []*field // a struct's fields, in order
}

// readSchema builds the field tree of ns. ns.names lists the names depth
// first, each struct's fields following it. pyarrow names only fields of
// structs; the Substrait spec also names structs inside lists and maps, so
// both counts are accepted (fields inside lists and maps cannot be
// referenced either way).
func readSchema(ns *substraitpb.NamedStruct) ([]*field, error) {
	types := ns.GetStruct().GetTypes()
	names := ns.GetNames()
	for _, viaContainers := range []bool{false, true} {
		n, err := countNames(types, viaContainers, 1)
		if err != nil {
			return nil, err
		}
		if n == len(names) {
			rest := names
			return buildFields(types, &rest, viaContainers), nil
		}
	}
	return nil, filter.Errorf("Substrait base_schema has %d names, which do not match its %d fields",
		len(names), len(types))
}

// countNames counts the names types take, refusing nesting deeper than
// filter.MaxDepth.
func countNames(types []*substraitpb.Type, viaContainers bool, depth int) (int, error) {
	if depth > filter.MaxDepth {
		return 0, fmt.Errorf("filter: Substrait base_schema nested deeper than %d levels: %w",
			filter.MaxDepth, filter.ErrTooComplex)
	}
	n := len(types)
	for _, t := range types {
		m, err := countNames(nestedTypes(t, viaContainers), viaContainers, depth+1)
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}

// nestedTypes are the types whose fields take names after t's own: a
// struct's fields, and with viaContainers, those of a struct inside a list
// or map (as one more level, named in the order element, key, value).
func nestedTypes(t *substraitpb.Type, viaContainers bool) []*substraitpb.Type {
	if s := t.GetStruct(); s != nil {
		return s.GetTypes()
	}
	if !viaContainers {
		return nil
	}
	var inner []*substraitpb.Type
	if l := t.GetList(); l != nil {
		inner = []*substraitpb.Type{l.GetType()}
	} else if m := t.GetMap(); m != nil {
		inner = []*substraitpb.Type{m.GetKey(), m.GetValue()}
	}
	var out []*substraitpb.Type
	for _, it := range inner {
		out = append(out, nestedTypes(it, true)...)
	}
	return out
}

// buildFields consumes names for types; countNames has checked that there
// are enough and that the nesting is bounded.
func buildFields(types []*substraitpb.Type, names *[]string, viaContainers bool) []*field {
	out := make([]*field, len(types))
	for i, t := range types {
		f := &field{name: (*names)[0], typ: t}
		*names = (*names)[1:]
		nested := buildFields(nestedTypes(t, viaContainers), names, viaContainers)
		if t.GetStruct() != nil {
			f.children = nested
		}
		out[i] = f
	}
	return out
}

// column resolves a field reference: a direct struct-field reference from
// the root, into nested structs, to a Column with the dotted path.
func (t *translator) column(ref *substraitpb.Expression_FieldReference) (*filter.Column, *field, error) {
	switch ref.GetRootType().(type) {
	case nil, *substraitpb.Expression_FieldReference_RootReference_:
	default:
		return nil, nil, filter.Errorf("Substrait field references must start at the root of the base schema")
	}
	seg := ref.GetDirectReference()
	if seg == nil {
		return nil, nil, filter.Errorf("Substrait field references must be direct (masked references are not supported)")
	}
	fields, path := t.schema, []string(nil)
	var f *field
	for seg != nil {
		sf := seg.GetStructField()
		if sf == nil {
			return nil, nil, filter.Errorf("Substrait field references into lists and maps are not supported")
		}
		if f != nil && f.children == nil {
			return nil, nil, filter.Errorf("Substrait field reference goes into %q, which is not a struct", f.name)
		}
		if sf.GetField() < 0 || int(sf.GetField()) >= len(fields) {
			return nil, nil, filter.Errorf("Substrait field reference %d is out of range (%d fields)", sf.GetField(), len(fields))
		}
		f = fields[sf.GetField()]
		path = append(path, f.name)
		fields, seg = f.children, sf.GetChild()
	}
	return &filter.Column{Path: path}, f, nil
}
