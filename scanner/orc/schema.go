package orc

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/scand/scand/scanner"
)

// maxTypeDepth bounds nesting so hostile type trees cannot recurse deeply.
const maxTypeDepth = 256

// rootColumnName names the single column of a file whose root type is not
// a struct (old Hive files, e.g. a bare timestamp).
const rootColumnName = "_col0"

// hive11DecimalScale is the scale given to decimals written without a
// precision (Hive 0.11), as ORC C++ (forcedScaleOnHive11Decimal) and
// Arrow's ORC adapter (decimal128(38, 6)) do.
const hive11DecimalScale = 6

// checkTypes validates the flattened type tree: ORC numbers types in
// pre-order, so every child id must be greater than its parent's and each
// type must have exactly one parent. That rules out cycles and shared
// subtrees (which would make schema building exponential).
func checkTypes(types []orcType) error {
	if len(types) == 0 {
		return fmt.Errorf("footer lists no types")
	}
	parent := make([]int, len(types))
	for i := range parent {
		parent[i] = -1
	}
	for i := range types {
		t := &types[i]
		for _, c := range t.subtypes {
			if c <= uint64(i) || c >= uint64(len(types)) {
				return fmt.Errorf("type %d (%v) has invalid subtype %d", i, t.kind, c)
			}
			if parent[c] >= 0 {
				return fmt.Errorf("type %d is a child of both %d and %d", c, parent[c], i)
			}
			parent[c] = i
		}
		switch t.kind {
		case kindList:
			if len(t.subtypes) != 1 {
				return fmt.Errorf("list type %d has %d subtypes", i, len(t.subtypes))
			}
		case kindMap:
			if len(t.subtypes) != 2 {
				return fmt.Errorf("map type %d has %d subtypes", i, len(t.subtypes))
			}
		case kindStruct:
			if len(t.fieldNames) != len(t.subtypes) {
				return fmt.Errorf("struct type %d has %d fields but %d names", i, len(t.subtypes), len(t.fieldNames))
			}
		case kindUnion:
			if len(t.subtypes) == 0 || len(t.subtypes) > 127 {
				return fmt.Errorf("union type %d has %d variants", i, len(t.subtypes))
			}
		case kindDecimal:
			if t.precision > 38 || t.scale > 38 || (t.precision > 0 && t.scale > t.precision) {
				return fmt.Errorf("decimal type %d has precision %d and scale %d", i, t.precision, t.scale)
			}
		case kindBoolean, kindByte, kindShort, kindInt, kindLong, kindFloat, kindDouble,
			kindString, kindBinary, kindTimestamp, kindDate, kindVarchar, kindChar, kindTimestampInstant:
			if len(t.subtypes) != 0 {
				return fmt.Errorf("%v type %d has subtypes", t.kind, i)
			}
		default:
			return fmt.Errorf("type %d has unknown kind %d: %w", i, uint32(t.kind), scanner.ErrUnsupported)
		}
	}
	for i := 1; i < len(types); i++ {
		if parent[i] < 0 {
			return fmt.Errorf("type %d is not reachable from the root", i)
		}
	}
	// Depth: parent ids are smaller, so one pass computes it.
	depth := make([]int, len(types))
	for i := 1; i < len(types); i++ {
		depth[i] = depth[parent[i]] + 1
		if depth[i] > maxTypeDepth {
			return fmt.Errorf("types nest deeper than %d levels: %w", maxTypeDepth, scanner.ErrUnsupported)
		}
	}
	return nil
}

// projNode is one column of a projection: an ORC type and the Arrow type
// it decodes to. For a struct, children are the chosen fields in file
// order; other nested types always carry all their children.
type projNode struct {
	id       int
	t        *orcType
	name     string
	dt       arrow.DataType
	children []*projNode
}

// decimalParams gives the Arrow precision and scale of an ORC decimal.
func decimalParams(t *orcType) (precision, scale int32) {
	if t.precision == 0 {
		return 38, hive11DecimalScale
	}
	return int32(t.precision), int32(t.scale)
}

// fullNode builds the node of type id with all of its descendants.
func fullNode(types []orcType, id int, name string) *projNode {
	t := &types[id]
	n := &projNode{id: id, t: t, name: name}
	for i, c := range t.subtypes {
		var cn string
		switch t.kind {
		case kindStruct:
			cn = t.fieldNames[i]
		case kindList:
			cn = "item"
		case kindMap:
			cn = [2]string{"key", "value"}[i]
		case kindUnion:
			cn = fmt.Sprintf("_union_%d", i)
		}
		n.children = append(n.children, fullNode(types, int(c), cn))
	}
	n.dt = nodeType(n)
	return n
}

// nodeType maps a node to Arrow, following pyarrow.orc except where the
// package doc says otherwise.
func nodeType(n *projNode) arrow.DataType {
	switch n.t.kind {
	case kindBoolean:
		return arrow.FixedWidthTypes.Boolean
	case kindByte:
		return arrow.PrimitiveTypes.Int8
	case kindShort:
		return arrow.PrimitiveTypes.Int16
	case kindInt:
		return arrow.PrimitiveTypes.Int32
	case kindLong:
		return arrow.PrimitiveTypes.Int64
	case kindFloat:
		return arrow.PrimitiveTypes.Float32
	case kindDouble:
		return arrow.PrimitiveTypes.Float64
	case kindString, kindVarchar, kindChar:
		return arrow.BinaryTypes.String
	case kindBinary:
		return arrow.BinaryTypes.Binary
	case kindTimestamp:
		return &arrow.TimestampType{Unit: arrow.Nanosecond}
	case kindTimestampInstant:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	case kindDate:
		return arrow.FixedWidthTypes.Date32
	case kindDecimal:
		p, s := decimalParams(n.t)
		return &arrow.Decimal128Type{Precision: p, Scale: s}
	case kindList:
		return arrow.ListOfField(arrow.Field{Name: "item", Type: n.children[0].dt, Nullable: true})
	case kindMap:
		return arrow.MapOf(n.children[0].dt, n.children[1].dt)
	case kindStruct:
		fields := make([]arrow.Field, len(n.children))
		for i, c := range n.children {
			fields[i] = arrow.Field{Name: c.name, Type: c.dt, Nullable: true}
		}
		return arrow.StructOf(fields...)
	case kindUnion:
		fields := make([]arrow.Field, len(n.children))
		codes := make([]arrow.UnionTypeCode, len(n.children))
		for i, c := range n.children {
			fields[i] = arrow.Field{Name: c.name, Type: c.dt, Nullable: true}
			codes[i] = arrow.UnionTypeCode(i)
		}
		return arrow.SparseUnionOf(fields, codes)
	}
	return arrow.Null
}

// topNodes lists the file's top-level columns: the root struct's fields,
// or the root itself when it is not a struct.
func topNodes(types []orcType) []*projNode {
	root := &types[0]
	if root.kind != kindStruct {
		return []*projNode{fullNode(types, 0, rootColumnName)}
	}
	out := make([]*projNode, len(root.subtypes))
	for i, c := range root.subtypes {
		out[i] = fullNode(types, int(c), root.fieldNames[i])
	}
	return out
}

func schemaOf(nodes []*projNode) *arrow.Schema {
	fields := make([]arrow.Field, len(nodes))
	for i, n := range nodes {
		fields[i] = arrow.Field{Name: n.name, Type: n.dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// resolvePath finds the node a column name denotes: a top-level name, or
// a dotted path through struct fields (and lists of structs). Names
// containing dots are matched whole first. It returns the top-level index and the path of nodes.
func resolvePath(tops []*projNode, name string) (int, []*projNode) {
	for i, n := range tops {
		if n.name == name {
			return i, []*projNode{n}
		}
	}
	for i, n := range tops {
		if strings.HasPrefix(name, n.name+".") {
			if p := descendPath(n, name[len(n.name)+1:]); p != nil {
				return i, append([]*projNode{n}, p...)
			}
		}
	}
	return -1, nil
}

func descendPath(n *projNode, rest string) []*projNode {
	if n.t.kind == kindList && len(n.children) == 1 {
		// A list's element has no name users know; paths look through
		// it to the fields of a struct element, as the Parquet reader's
		// do (ls.p keeps list<struct<p>>).
		if p := descendPath(n.children[0], rest); p != nil {
			return append([]*projNode{n.children[0]}, p...)
		}
		return nil
	}
	if n.t.kind != kindStruct {
		return nil
	}
	for _, c := range n.children {
		if c.name == rest {
			return []*projNode{c}
		}
		if strings.HasPrefix(rest, c.name+".") {
			if p := descendPath(c, rest[len(c.name)+1:]); p != nil {
				return append([]*projNode{c}, p...)
			}
		}
	}
	return nil
}

// selection records which parts of a top-level node were asked for.
type selection struct {
	all      bool
	children map[int]*selection // by child position, for structs
}

func (s *selection) add(path []*projNode) {
	if s.all {
		return
	}
	if len(path) == 1 {
		s.all, s.children = true, nil
		return
	}
	parent, child := path[0], path[1]
	idx := -1
	for i, c := range parent.children {
		if c == child {
			idx = i
		}
	}
	if s.children == nil {
		s.children = map[int]*selection{}
	}
	cs := s.children[idx]
	if cs == nil {
		cs = &selection{}
		s.children[idx] = cs
	}
	cs.add(path[1:])
}

// prune builds the projected node for a selection.
func prune(n *projNode, s *selection) *projNode {
	if s.all {
		return n
	}
	out := &projNode{id: n.id, t: n.t, name: n.name}
	for i, c := range n.children {
		if cs := s.children[i]; cs != nil {
			out.children = append(out.children, prune(c, cs))
		}
	}
	out.dt = nodeType(out)
	return out
}

// markColumns sets cols[id] for every ORC column a node reads.
func markColumns(n *projNode, cols []bool) {
	cols[n.id] = true
	for _, c := range n.children {
		markColumns(c, cols)
	}
}
