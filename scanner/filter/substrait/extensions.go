package substrait

import (
	"strings"

	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb/extensions"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/scand/scand/scanner/filter"
)

// Field numbers of the extension URIs that substrait-protobuf v0.85 no
// longer declares (they became URNs) but pyarrow 26 still writes:
// ExtendedExpression.extension_uris = 1 (SimpleExtensionURI: anchor = 1,
// uri = 2), and extension_uri_reference = 1 in each declaration. The
// decoder keeps them as unknown fields; they are read from there.
const (
	oldExtensionURIs protowire.Number = 1
	oldURIAnchor     protowire.Number = 1
	oldURIReference  protowire.Number = 1
)

// readExtensions maps the function and type anchors ee declares to their
// names, checking that each declaration points at a declared extension,
// either an old-style URI or a URN.
func readExtensions(ee *substraitpb.ExtendedExpression) (funcs, types map[uint32]string, err error) {
	uris := map[uint32]bool{}
	for _, u := range unknownMessages(ee.ProtoReflect().GetUnknown(), oldExtensionURIs) {
		uris[uint32(unknownVarint(u, oldURIAnchor))] = true
	}
	urns := map[uint32]bool{}
	for _, u := range ee.GetExtensionUrns() {
		urns[u.GetExtensionUrnAnchor()] = true
	}
	funcs, types = map[uint32]string{}, map[uint32]string{}
	for _, d := range ee.GetExtensions() {
		var err error
		switch m := d.GetMappingType().(type) {
		case *extensions.SimpleExtensionDeclaration_ExtensionFunction_:
			f := m.ExtensionFunction
			err = declare(funcs, "function", f.GetFunctionAnchor(), f.GetName(), f, f.GetExtensionUrnReference(), uris, urns)
		case *extensions.SimpleExtensionDeclaration_ExtensionType_:
			ty := m.ExtensionType
			err = declare(types, "type", ty.GetTypeAnchor(), ty.GetName(), ty, ty.GetExtensionUrnReference(), uris, urns)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return funcs, types, nil
}

// declare records anchor -> name in into, the name without its signature
// ("equal:any_any" is "equal"). d is the declaration, whose old-style URI
// reference is among its unknown fields.
func declare(into map[uint32]string, what string, anchor uint32, name string, d protoreflect.ProtoMessage,
	urn uint32, uris, urns map[uint32]bool) error {
	uri := uint32(unknownVarint(d.ProtoReflect().GetUnknown(), oldURIReference))
	if !uris[uri] && !urns[urn] {
		return filter.Errorf("Substrait %s %q (anchor %d) refers to an extension the message does not declare",
			what, name, anchor)
	}
	if _, dup := into[anchor]; dup {
		return filter.Errorf("Substrait %s anchor %d is declared twice", what, anchor)
	}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	into[anchor] = name
	return nil
}

// unknownMessages returns the values of every length-delimited field num
// in b, a message's unknown fields.
func unknownMessages(b []byte, num protowire.Number) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return out
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return out
			}
			out = append(out, v)
			b = b[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(n, typ, b); l < 0 {
			return out
		}
		b = b[l:]
	}
	return out
}

// unknownVarint returns the last value of varint field num in b (proto3's
// rule for a repeated scalar), or 0 when b has none.
func unknownVarint(b []byte, num protowire.Number) uint64 {
	var v uint64
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return v
		}
		b = b[l:]
		if n == num && typ == protowire.VarintType {
			x, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return v
			}
			v, b = x, b[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(n, typ, b); l < 0 {
			return v
		}
		b = b[l:]
	}
	return v
}
