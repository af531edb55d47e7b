package parquet

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Lists of flat leaves, decoded natively.
//
// A leaf under lists stores one (repetition, definition) level pair per
// slot of its innermost list, plus one for each empty or null list above
// it, and a value for each non-null element only. Its pages are made to
// look like a flat column's to the decoders of native.go: once a page's
// levels are decoded (loadRepeated), its rows are its element slots (the
// levels at or above the leaf's RepeatedAncestorDefLevel), the nulls among
// them those below its maximum. The flat decoders then produce the list's
// values array, nulls and all, unchanged.
//
// The lists themselves come from the levels alone. A batch of n rows takes
// every level up to the (n+1)-th repetition level 0 (gatherLevels, across
// pages: Parquet does not align a repeated column's pages to rows), and
// each list node turns those levels into offsets and validity as
// arrow-go's file.DefRepLevelsToListInfo does for pqarrow, so the two
// agree on empty lists, null lists and null elements at every depth.
//
// Rows of a repeated column are not known before its pages are decoded,
// so its pages give no batch boundaries, and a read the page index or a
// limit cuts into row ranges reads its list columns through pqarrow, per
// column (demoteRepeated).

// levelWalk is a repeated leaf's position in its levels, ahead of the
// values, and the levels of the batch being decoded.
type levelWalk struct {
	page, pos  int // the next level: page, and level within it
	defs, reps []int16
	// The levels of a batch that spans pages are copied into buf; one
	// within a page are its page's own (defs and reps point into it).
	bufDefs, bufReps []int16
	charged          int64 // the budget of buf
}

// declaredFor is what the footer bounds a page of the column by: a
// repeated column's pages hold more levels than its row group has rows,
// so only their sizes are checked.
func (c *columnCursor) declaredFor(d chunkSizes) chunkSizes {
	if c.col.repeated {
		d.rows = math.MaxInt64
	}
	return d
}

// splitLevels splits a v1 page body into its 4-byte-length-prefixed RLE
// levels and what follows.
func splitLevels(body []byte, what string) (levels, rest []byte, err error) {
	if len(body) < 4 {
		return nil, nil, corrupt("data page too short for its %s levels", what)
	}
	ln := int(uint32(body[0]) | uint32(body[1])<<8 | uint32(body[2])<<16 | uint32(body[3])<<24)
	if ln < 0 || ln > len(body)-4 {
		return nil, nil, corrupt("%s levels of %d bytes in a page of %d", what, ln, len(body))
	}
	return body[4 : 4+ln], body[4+ln:], nil
}

// loadRepeated decodes the levels of a repeated leaf's page p and makes
// its rows its element slots.
func (c *columnCursor) loadRepeated(p *nativePage, repLevels, defLevels []byte) error {
	n := p.levels
	if err := c.charge(p, 4*int64(n), "levels"); err != nil {
		return err
	}
	p.reps, p.defs = make([]int16, n), make([]int16, n)
	maxRep, maxDef := c.col.maxRep, c.col.maxDef
	if err := decodeLevels(repLevels, bits.Len16(uint16(maxRep)), maxRep, p.reps); err != nil {
		return err
	}
	if err := decodeLevels(defLevels, bits.Len16(uint16(maxDef)), maxDef, p.defs); err != nil {
		return err
	}
	// Slots are the levels at or above elemDef, values those at maxDef
	// (which is at or above elemDef): counted without a branch.
	elemDef := c.col.elemDef
	slots, vals := 0, 0
	for _, d := range p.defs {
		slots += b2i(d >= elemDef)
		vals += b2i(d == maxDef)
	}
	nulls := slots - vals
	if nulls > 0 {
		nb := bitutil.BytesForBits(int64(slots))
		if err := c.charge(p, nb+1, "validity bitmap"); err != nil {
			return err
		}
		p.valid = slotValidity(p.defs, elemDef, maxDef, int(nb))
	}
	p.rows, p.nulls = slots, nulls
	return nil
}

// slotValidity is the validity of the slots among defs (levels at or
// above elemDef): set where the level is maxDef, in nb bytes. Each
// level ORs its bit into the slot the next slot would take, which only a
// slot moves past, so no level branches; the byte past nb is for the
// levels after the last slot.
func slotValidity(defs []int16, elemDef, maxDef int16, nb int) []byte {
	valid := make([]byte, nb+1)
	i := 0
	for _, d := range defs {
		valid[i>>3] |= byte(b2i(d == maxDef)) << (i & 7)
		i += b2i(d >= elemDef)
	}
	return valid[:nb]
}

// gatherLevels moves the level walk over the next n rows, loading the
// pages they span, and keeps their levels in c.lv.defs and c.lv.reps:
// the page's own when they lie in one page (most batches), a copy when
// they span pages.
func (c *columnCursor) gatherLevels(n int) error {
	w := &c.lv
	w.defs, w.reps = nil, nil
	rows, segments := 0, 0
	for rows <= n {
		for w.page < len(c.pages) && w.pos == c.pages[w.page].levels {
			w.page, w.pos = w.page+1, 0
		}
		if w.page == len(c.pages) {
			break
		}
		p := &c.pages[w.page]
		if err := c.load(p); err != nil {
			return err
		}
		reps := p.reps[w.pos:]
		if rows == 0 && len(reps) > 0 && reps[0] != 0 {
			return corrupt("repeated column continues a row at its start")
		}
		i, starts := rowStarts(reps, n-rows+1)
		rows += min(starts, n-rows)
		defs, batchReps := p.defs[w.pos:w.pos+i:w.pos+i], reps[:i:i]
		switch {
		case i == 0: // the batch ended with the previous page
		case segments == 0:
			segments++
			w.defs, w.reps = defs, batchReps
		case segments == 1:
			segments++
			first, firstReps := w.defs, w.reps
			w.bufDefs, w.bufReps = w.bufDefs[:0], w.bufReps[:0]
			if err := c.keepLevels(first, firstReps); err != nil {
				return err
			}
			fallthrough
		default:
			if err := c.keepLevels(defs, batchReps); err != nil {
				return err
			}
		}
		w.pos += i
		if i < len(reps) {
			break // at the start of row n+1
		}
	}
	if rows < n {
		return corrupt("column has fewer rows than its row group")
	}
	return nil
}

// rowStarts finds the k-th row start (repetition level 0) in reps, k >
// 0: it returns its index and k, or, when reps holds fewer, len(reps) and
// how many it holds. One pass, eight levels at a time: a block that
// cannot hold the k-th start is counted without a branch per level.
func rowStarts(reps []int16, k int) (i, starts int) {
	for ; i+8 <= len(reps); i += 8 {
		b := (*[8]int16)(reps[i:])
		z := b2i(b[0] == 0) + b2i(b[1] == 0) + b2i(b[2] == 0) + b2i(b[3] == 0) +
			b2i(b[4] == 0) + b2i(b[5] == 0) + b2i(b[6] == 0) + b2i(b[7] == 0)
		if starts+z >= k {
			break
		}
		starts += z
	}
	for ; i < len(reps); i++ {
		if reps[i] == 0 {
			starts++
			if starts == k {
				return i, k
			}
		}
	}
	return len(reps), starts
}

// b2i is 1 for true: the compiler makes it a SETcc, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keepLevels appends levels to the batch's copy, charging its growth.
func (c *columnCursor) keepLevels(defs, reps []int16) error {
	w := &c.lv
	need := len(w.bufDefs) + len(defs)
	if need > math.MaxInt32 {
		return corrupt("%d levels in one batch", need)
	}
	if need > cap(w.bufDefs) {
		grow := max(need, 2*cap(w.bufDefs))
		if err := c.acct.reserve(4*int64(grow-cap(w.bufDefs)), "levels of "+c.name); err != nil {
			return err
		}
		w.charged += 4 * int64(grow-cap(w.bufDefs))
		w.bufDefs = append(make([]int16, 0, grow), w.bufDefs...)
		w.bufReps = append(make([]int16, 0, grow), w.bufReps...)
	}
	w.bufDefs, w.bufReps = append(w.bufDefs, defs...), append(w.bufReps, reps...)
	w.defs, w.reps = w.bufDefs, w.bufReps
	return nil
}

// slotDefs writes the definition levels of the slots of a struct at
// repetition level rep, inside a list not empty at definition level
// ancDef (0, 0 outside lists: the first level of each row), among the
// levels of the batch gathered in leaf, into dst: what the struct is
// present by. They are skipped and counted as DefRepLevelsToBitmap does.
func (leaf *columnCursor) slotDefs(rep, ancDef int16, dst []int16) error {
	// Every level is written at the next slot's place and only a slot
	// moves past it, so no level branches; the place past the last slot
	// takes the levels after it.
	n := len(dst)
	if cap(dst) == n {
		dst = append(dst, 0)
	}
	dst = dst[:n+1]
	i := 0
	defs := leaf.lv.defs
	for k, r := range leaf.lv.reps[:len(defs)] {
		d := defs[k]
		dst[i] = d
		i += b2i(r <= rep) & b2i(d >= ancDef)
		if i > n {
			return corrupt("more rows in the batch's levels than asked")
		}
	}
	if i != n {
		return corrupt("%d rows in the batch's levels, want %d", i, n)
	}
	return nil
}

// takeList decodes the next n slots of list node (n rows for a list
// outside lists, the outer list's elements otherwise) from the levels
// its leaf gathered, and then its elements.
func (gr *groupReader) takeList(node *nestedField, curs []*columnCursor, n int) (arrow.ArrayData, error) {
	leaf := curs[node.leaf]
	offsets := memory.NewResizableBuffer(gr.mem)
	offsets.Resize((n + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	var valid *memory.Buffer
	if node.nullable {
		valid = newValidity(gr.mem, n, n)
	}
	nulls, err := listOffsets(node, leaf.lv.defs, leaf.lv.reps, offs, valid)
	if err != nil {
		release(offsets, valid)
		return nil, err
	}
	if nulls == 0 && valid != nil {
		valid.Release()
		valid = nil
	}
	child, err := gr.takeNested(&node.children[0], curs, int(offs[n]))
	if err != nil {
		release(offsets, valid)
		return nil, err
	}
	defer child.Release()
	d := array.NewData(node.typ, n, []*memory.Buffer{valid, offsets}, []arrow.ArrayData{child}, nulls, 0)
	release(offsets, valid)
	return d, nil
}

// listOffsets fills offs (len(offs)-1 lists) and valid from the levels,
// as file.DefRepLevelsToListInfo does: levels of empty or null ancestors
// and of deeper lists are skipped, a repetition level equal to the list's
// adds an element, a lower one starts a list (with an element when the
// definition level reaches the list's DefLevel, null below DefLevel-1).
//
// One pass without a branch per level: offs[slot] is written at every
// level with the elements counted so far, which is the offset of list
// slot when a list starts there and a value the next start overwrites
// otherwise (the count only grows); slot moves on at each start, and the
// validity bit of a start is ORed in the same way into cleared bits.
func listOffsets(node *nestedField, defs, reps []int16, offs []int32, valid *memory.Buffer) (nulls int, err error) {
	n := len(offs) - 1
	rep, def, anc, present := node.rep, node.def, node.ancDef, node.def-1
	reps = reps[:len(defs)]
	if n == 0 {
		for i, d := range defs {
			if reps[i] <= rep && d >= anc {
				return 0, corrupt("list or element in the batch's levels, want no lists")
			}
		}
		return 0, nil
	}
	slot, cur := 0, int32(0)
	if valid == nil {
		for i, d := range defs {
			r := reps[i]
			in := b2i(d >= anc)
			start := b2i(r < rep) & in
			// A level at the list's repetition level is an element of
			// the current list; a start is one when the list is not
			// empty; deeper levels belong to an element already counted.
			elem := in & (b2i(r == rep) | start&b2i(d >= def))
			offs[min(slot, n)] = cur
			slot += start
			cur += int32(elem)
		}
	} else {
		vb := valid.Bytes()
		clear(vb)
		for i, d := range defs {
			r := reps[i]
			in := b2i(d >= anc)
			start := b2i(r < rep) & in
			elem := in & (b2i(r == rep) | start&b2i(d >= def))
			at := min(slot, n)
			offs[at] = cur
			at = min(at, n-1)
			vb[at>>3] |= byte(start&b2i(d >= present)) << (at & 7)
			slot += start
			cur += int32(elem)
		}
	}
	switch {
	case slot != n:
		return 0, corrupt("%d lists in the batch's levels, want %d", slot, n)
	case offs[0] != 0:
		return 0, corrupt("list element before its list")
	}
	offs[n] = cur
	if valid != nil {
		nulls = n - bitutil.CountSetBits(valid.Bytes(), 0, n)
	}
	return nulls, nil
}

// emptyData is an array of type t with no rows.
func emptyData(mem memory.Allocator, t arrow.DataType) arrow.ArrayData {
	b := array.NewBuilder(mem, t)
	defer b.Release()
	a := b.NewArray()
	defer a.Release()
	d := a.Data()
	d.Retain()
	return d
}
