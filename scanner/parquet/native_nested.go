package parquet

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Nested columns: structs of flat leaves, decoded natively.
//
// A struct without a repeated field below it has one definition level per
// row in each of its leaves, as a flat column does, only of more than one
// bit: a leaf under d nullable structs and itself nullable has levels
// 0..d+1. So each leaf is read by the flat decoders of native.go, its
// cursor decoding the levels into int16s (decodeLevels) and calling a row
// a value when its level is the leaf's maximum, a null otherwise. A
// struct's own validity is then a level threshold: the struct is present
// where a leaf below it has level >= the struct's def level (pqarrow's
// LevelInfo.DefLevel), which every leaf below it agrees on, so the first
// one's levels are used. A required struct has no validity bitmap, as in
// pqarrow.
//
// Rows are levels for these columns, so batches, page boundaries, the
// page index's row ranges and late materialization's second pass work on
// them exactly as on flat columns.
//
// Eligibility is decided from the schema when the request is projected
// (nestedPlan): any repeated leaf (lists, maps), or a leaf the flat
// decoders do not read, leaves its whole top-level column to pqarrow
// (native_mixed.go), never a read that has started.

// nestedField is one node of a nested output column: a struct, a list
// (native_list.go), or a leaf.
type nestedField struct {
	typ      arrow.DataType
	children []nestedField // a struct's fields, a list's element; nil for a leaf
	list     bool
	// def is the definition level at and above which a nullable struct
	// is present, or a list has an element; rep and ancDef are a list's
	// repetition level and the definition level at which its closest
	// repeated ancestor is not empty (pqarrow's LevelInfo).
	def, rep, ancDef int16
	nullable         bool
	// leaf is the leaf's index among its column's leaves (a leaf), or
	// that of the struct's first leaf, whose levels give its validity.
	leaf int
}

// nestedPlan plans the output column of manifest field sf, pruned to
// type t, as a nested native column: its tree, and the plans of its
// leaves in order. False when some leaf needs pqarrow.
func nestedPlan(sf *pqarrow.SchemaField, t arrow.DataType, descr *schema.Schema) (*nestedField, []nativeColumn, bool) {
	if sf.IsLeaf() {
		return nil, nil, false
	}
	var leaves []nativeColumn
	node, ok := planNestedChild(sf, t, descr, &leaves)
	if !ok {
		return nil, nil, false
	}
	return &node, leaves, true
}

// planStruct plans struct field sf as output type st, appending its
// leaves' plans to leaves.
func planStruct(sf *pqarrow.SchemaField, st *arrow.StructType, descr *schema.Schema, leaves *[]nativeColumn) (nestedField, bool) {
	li := sf.LevelInfo
	node := nestedField{typ: st, def: li.DefLevel, rep: li.RepLevel, ancDef: li.RepeatedAncestorDefLevel,
		nullable: sf.Field.Nullable, leaf: len(*leaves)}
	if st.NumFields() == 0 {
		return node, false
	}
	next := 0 // the pruned type keeps the manifest's order
	for _, out := range st.Fields() {
		for next < len(sf.Children) && sf.Children[next].Field.Name != out.Name {
			next++
		}
		if next == len(sf.Children) {
			return node, false
		}
		child, ok := planNestedChild(&sf.Children[next], out.Type, descr, leaves)
		if !ok {
			return node, false
		}
		node.children = append(node.children, child)
		next++
	}
	return node, true
}

// planNestedChild plans one field of a struct: a flat leaf, or a struct.
func planNestedChild(sf *pqarrow.SchemaField, t arrow.DataType, descr *schema.Schema, leaves *[]nativeColumn) (nestedField, bool) {
	if !sf.IsLeaf() {
		if lt, ok := t.(*arrow.ListType); ok && sf.Field.Type.ID() == arrow.LIST {
			return planList(sf, lt, lt.Elem(), descr, leaves)
		}
		if mt, ok := t.(*arrow.MapType); ok && sf.Field.Type.ID() == arrow.MAP {
			return planList(sf, mt, mt.Elem(), descr, leaves)
		}
		st, ok := t.(*arrow.StructType)
		if !ok || sf.Field.Type.ID() != arrow.STRUCT {
			return nestedField{}, false // maps, large and fixed-size lists: pqarrow's
		}
		return planStruct(sf, st, descr, leaves)
	}
	c := descr.Column(sf.ColIndex)
	col, ok := nativePlan(c, t)
	if !ok || c.MaxRepetitionLevel() != sf.LevelInfo.RepLevel {
		return nestedField{}, false
	}
	col.leaf, col.phys, col.levels = sf.ColIndex, c.PhysicalType(), true
	if r := c.MaxRepetitionLevel(); r > 0 {
		col.repeated, col.maxRep, col.elemDef = true, r, sf.LevelInfo.RepeatedAncestorDefLevel
	}
	node := nestedField{typ: t, leaf: len(*leaves)}
	*leaves = append(*leaves, col)
	return node, true
}

// planList plans list (or map) field sf as output type t, of element
// type elem: a leaf, a list, a struct (a map's key_value).
func planList(sf *pqarrow.SchemaField, t, elem arrow.DataType, descr *schema.Schema, leaves *[]nativeColumn) (nestedField, bool) {
	li := sf.LevelInfo
	node := nestedField{typ: t, list: true, def: li.DefLevel, rep: li.RepLevel, ancDef: li.RepeatedAncestorDefLevel,
		nullable: sf.Field.Nullable, leaf: len(*leaves)}
	if len(sf.Children) != 1 || li.RepLevel < 1 || li.NullSlotUsage > 1 {
		return node, false
	}
	ch := &sf.Children[0]
	if id := ch.Field.Type.ID(); id != arrow.LIST && id != arrow.MAP && ch.LevelInfo.RepLevel != li.RepLevel {
		return node, false // the element is at the list's repetition level
	}
	child, ok := planNestedChild(ch, elem, descr, leaves)
	if !ok {
		return node, false
	}
	node.children = []nestedField{child}
	return node, true
}

// leafPlans lists the leaves the native reader decodes for cols, in the
// order the group reader keeps their cursors: each native column's own,
// a nested column's leaves in schema order.
func leafPlans(cols []nativeColumn) []nativeColumn {
	var out []nativeColumn
	for _, c := range cols {
		switch {
		case c.leaf < 0: // pqarrow's
		case c.nested != nil:
			out = append(out, c.leaves...)
		default:
			out = append(out, c)
		}
	}
	return out
}

// loadLevels decodes the definition levels of a nested leaf's page p
// (levels, as stored) into p.defs, and its validity from them.
func (c *columnCursor) loadLevels(p *nativePage, levels []byte) error {
	if err := c.charge(p, 2*int64(p.rows), "definition levels"); err != nil {
		return err
	}
	p.defs = make([]int16, p.rows)
	maxDef := c.col.maxDef
	if err := decodeLevels(levels, bits.Len16(uint16(maxDef)), maxDef, p.defs); err != nil {
		return err
	}
	vals := 0
	for _, d := range p.defs {
		vals += b2i(d == maxDef)
	}
	nulls := len(p.defs) - vals
	if nulls > 0 {
		n := bitutil.BytesForBits(int64(p.rows))
		if err := c.charge(p, n+1, "validity bitmap"); err != nil {
			return err
		}
		// Every level is a slot here (elemDef 0).
		p.valid = slotValidity(p.defs, 0, maxDef, int(n))
	}
	p.nulls = nulls
	return nil
}

// peekDefs copies the definition levels of the cursor's next len(dst)
// rows into dst, without consuming them.
func (c *columnCursor) peekDefs(dst []int16) error {
	pi, row := c.pi, c.row
	for done := 0; done < len(dst); {
		for pi < len(c.pages) && row == c.pages[pi].rows {
			pi++
			row = 0
		}
		if pi == len(c.pages) {
			return corrupt("column has fewer rows than its row group")
		}
		p := &c.pages[pi]
		if err := c.load(p); err != nil {
			return err
		}
		if p.defs == nil {
			return corrupt("page of a nested column without definition levels")
		}
		k := copy(dst[done:], p.defs[row:])
		done += k
		row += k
	}
	return nil
}

// takeNested decodes the next n rows of nested column node, whose leaves
// are read by curs.
func (gr *groupReader) takeNested(node *nestedField, curs []*columnCursor, n int) (arrow.ArrayData, error) {
	switch {
	case n == 0: // lists with no elements
		return emptyData(gr.mem, node.typ), nil
	case node.list:
		return gr.takeList(node, curs, n)
	case node.children == nil:
		return curs[node.leaf].take(n, gr.mem)
	}
	var valid *memory.Buffer
	nulls := 0
	if node.nullable {
		var err error
		if valid, nulls, err = gr.structValidity(curs[node.leaf], node.def, node.rep, node.ancDef, n); err != nil {
			return nil, err
		}
	}
	children := make([]arrow.ArrayData, 0, len(node.children))
	defer func() {
		for _, ch := range children {
			ch.Release()
		}
	}()
	for i := range node.children {
		ch, err := gr.takeNested(&node.children[i], curs, n)
		if err != nil {
			release(valid)
			return nil, err
		}
		children = append(children, ch)
	}
	d := array.NewData(node.typ, n, []*memory.Buffer{valid}, children, nulls, 0)
	release(valid)
	return d, nil
}

// structValidity builds the validity of a struct present at def level
// def from the levels of its next n slots in leaf, one of its leaves, or
// nil when every slot is present. A struct with lists above it or below
// it (rep, ancDef: its LevelInfo) has its slots among the levels the leaf
// gathered for the batch.
func (gr *groupReader) structValidity(leaf *columnCursor, def, rep, ancDef int16, n int) (*memory.Buffer, int, error) {
	if cap(leaf.defScratch) < n+1 { // slotDefs writes one past n
		leaf.defScratch = make([]int16, n+1)
	}
	defs := leaf.defScratch[:n]
	var err error
	if leaf.col.repeated {
		err = leaf.slotDefs(rep, ancDef, defs)
	} else {
		err = leaf.peekDefs(defs)
	}
	if err != nil {
		return nil, 0, err
	}
	nulls := 0
	for _, d := range defs {
		if d < def {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0, nil
	}
	valid := newValidity(gr.mem, n, n)
	vb := valid.Bytes()
	for i, d := range defs {
		if d < def {
			bitutil.ClearBit(vb, i)
		}
	}
	return valid, nulls, nil
}

// nativeNested turns the native decoding of nested columns on; off, they
// are pqarrow's, per column, as before it existed (benchmarks compare).
var nativeNested = true

// nestedColumn plans output column i of impl, which is not a top-level
// leaf, as a nested native column, or false to leave it to pqarrow.
func (f *File) nestedColumn(impl *projection, i int) (nativeColumn, bool) {
	if !nativeNested || impl.tops == nil || i >= len(impl.tops) {
		return nativeColumn{}, false
	}
	sf := &f.manifest.Fields[impl.tops[i]]
	node, leaves, ok := nestedPlan(sf, impl.types[i], f.pf.MetaData().Schema)
	if !ok || len(leaves) == 0 {
		return nativeColumn{}, false
	}
	for _, l := range leaves {
		// A map's key and value are read whatever is selected (see
		// prunedType); the native reader reads only projected leaves.
		if _, found := slices.BinarySearch(impl.leaves, l.leaf); !found {
			return nativeColumn{}, false
		}
	}
	return nativeColumn{leaf: leaves[0].leaf, typ: impl.types[i], nested: node, leaves: leaves}, true
}

// takeNestedColumn decodes the next n rows of nested output column nc,
// whose leaves are read by curs: the levels of its repeated leaves first,
// which its lists are made of.
func (gr *groupReader) takeNestedColumn(nc *nativeColumn, curs []*columnCursor, n int) (arrow.ArrayData, error) {
	for _, c := range curs {
		if c.col.repeated {
			if err := c.gatherLevels(n); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.name, err)
			}
		}
	}
	d, err := gr.takeNested(nc.nested, curs, n)
	// The batch's levels may be a page's, which taking the values freed
	// (and gave its budget back): forget them.
	for _, c := range curs {
		c.lv.defs, c.lv.reps = nil, nil
	}
	return d, err
}

// demoteRepeated returns cols with the nested columns that have a
// repeated leaf read by pqarrow instead: for a row group read in row
// ranges, which the native reader cannot place in their levels without
// decoding every page before (native_list.go).
func demoteRepeated(impl *projection, cols []nativeColumn) []nativeColumn {
	var out []nativeColumn
	for i, c := range cols {
		if c.nested == nil || !slices.ContainsFunc(c.leaves, func(l nativeColumn) bool { return l.repeated }) {
			continue
		}
		if out == nil {
			out = slices.Clone(cols)
		}
		out[i] = nativeColumn{pqTop: impl.tops[i], typ: impl.types[i], leaf: -1}
	}
	if out == nil {
		return cols
	}
	return out
}
