package parquet

// seekChunk bounds the dictionary indices seek decodes at once, so that
// skipping a page's rows costs a small window, not the page's.
const seekChunk = 4096

// seek moves the cursor to row (of the row group), at or after where it
// is: past the pages before it, and past the values before it in its
// page. The pages read must hold row: a column's pieces cover every
// selected row (planPieces).
func (c *columnCursor) seek(row int64) error {
	for c.pi < len(c.pages) && c.pages[c.pi].first+int64(c.pages[c.pi].rows) <= row {
		c.pi++
		c.row, c.pos = 0, 0
	}
	if c.pi == len(c.pages) || c.pages[c.pi].first > row {
		return corrupt("row %d lies in no page read of the column", row)
	}
	c.dropConsumed()
	p := &c.pages[c.pi]
	skip := int(row-p.first) - c.row
	if skip < 0 {
		return corrupt("seek back to row %d", row)
	}
	if skip == 0 {
		return nil
	}
	if err := c.load(p); err != nil {
		return err
	}
	from, to := p.valuesBefore(c.row), p.valuesBefore(c.row+skip)
	switch {
	case p.dict:
		// Dictionary indices decode in order: decode the skipped ones.
		for v := from; v < to; {
			k := min(seekChunk, to-v)
			if _, err := c.indices(p, v, k); err != nil {
				return err
			}
			v += k
		}
	case c.col.kind == kindBytes: // booleans, also of width 0, keep no position
		pos, err := skipByteArrays(p.values, c.pos, to-from)
		if err != nil {
			return err
		}
		c.pos = pos
	}
	c.row += skip
	return nil
}

// skipByteArrays returns the position after n PLAIN byte arrays starting
// at pos of vals.
func skipByteArrays(vals []byte, pos, n int) (int, error) {
	for range n {
		if len(vals)-pos < 4 {
			return 0, corrupt("byte array runs past its page")
		}
		ln := int(uint32(vals[pos]) | uint32(vals[pos+1])<<8 | uint32(vals[pos+2])<<16 | uint32(vals[pos+3])<<24)
		if ln < 0 || ln > len(vals)-pos-4 {
			return 0, corrupt("byte array of %d bytes runs past its page", ln)
		}
		pos += 4 + ln
	}
	return pos, nil
}
