package parquet

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Per-column fallback: a request whose columns the native reader mostly
// decodes, but one of which it does not (a nested column, an int16), reads
// that column through pqarrow's column reader for the same row group and
// the rest natively, assembled into one batch. Before, one such column
// sent the whole split through pqarrow.
//
// The pqarrow column is read batch by batch with NextBatch(n) for the
// rows the native batch holds (cutBatch's sizes), charged to the read's
// budget through the same page limits and allocator as readPQ. Any error
// from pqarrow is classified as readPQ's are.

// mixedPlan marks the output columns of impl the native reader cannot
// decode (ok[i] false) as read by pqarrow, and returns the plan, or nil
// when no column is native.
func mixedPlan(impl *projection, cols []nativeColumn, ok []bool) []nativeColumn {
	native := 0
	for i := range cols {
		if ok[i] {
			native++
			continue
		}
		cols[i] = nativeColumn{pqTop: impl.tops[i], typ: impl.types[i], leaf: -1}
	}
	if native == 0 || len(impl.tops) != len(cols) {
		return nil
	}
	return cols
}

// pqColumn is one output column of a native row group read by pqarrow.
type pqColumn struct {
	rd  *pqarrow.ColumnReader
	typ arrow.DataType
}

// openPQColumns opens pqarrow's readers of the group's pqarrow columns,
// under the page limits and budget readPQ sets; done ends them.
func (gr *groupReader) openPQColumns(ctx context.Context, impl *projection, cols []nativeColumn) (done func() error, err error) {
	var leaves []int
	for _, c := range cols {
		if c.leaf < 0 {
			leaves = appendLeaves(leaves, &gr.f.manifest.Fields[c.pqTop])
		}
	}
	leaves = uniqueSorted(leaves)
	included := map[int]bool{}
	for _, l := range impl.leaves {
		included[l] = true
	}
	f := gr.f
	if err := f.checkCodecs([]int{gr.g}, leaves); err != nil {
		return nil, err
	}
	limits := f.limitsFor([]int{gr.g}, leaves)
	f.props.MaxCompressedPageSize, f.props.MaxUncompressedPageSize = limits.compressed, limits.uncompressed
	rctx, cancel := context.WithCancel(ctx)
	f.pages.begin(gr.acct, cancel)
	done = func() error {
		for _, p := range gr.pq {
			if p != nil {
				p.rd.Release()
			}
		}
		gr.pq = nil
		cancel()
		return f.pages.end()
	}
	gr.pq = make([]*pqColumn, len(cols))
	for i, c := range cols {
		if c.leaf >= 0 {
			continue
		}
		fr, err := f.arrowReader()
		if err != nil {
			return done, err
		}
		rd, err := fr.GetFieldReader(rctx, c.pqTop, included, []int{gr.g})
		if err != nil {
			return done, classify(fmt.Sprintf("%s: opening column %d", f.name, i), err)
		}
		gr.pq[i] = &pqColumn{rd: rd, typ: c.typ}
	}
	return done, nil
}

// take reads the next n rows of a pqarrow column as one array of its
// output type.
func (p *pqColumn) take(gr *groupReader, n int) (arrow.Array, error) {
	ch, err := p.rd.NextBatch(int64(n))
	if berr := gr.f.pages.err(); berr != nil {
		if ch != nil {
			ch.Release()
		}
		return nil, berr
	}
	if err != nil {
		return nil, classify(gr.f.name+": decoding row groups", err)
	}
	defer ch.Release()
	var whole arrow.Array
	switch chunks := ch.Chunks(); len(chunks) {
	case 0:
		return nil, corrupt("column read %d rows of %d", 0, n)
	case 1:
		whole = chunks[0]
		whole.Retain()
	default:
		if whole, err = array.Concatenate(chunks, gr.mem); err != nil {
			return nil, err
		}
	}
	defer whole.Release()
	if whole.Len() != n {
		return nil, corrupt("column read %d rows of %d", whole.Len(), n)
	}
	d, err := retype(whole.Data(), p.typ, gr.mem)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// mixed reports whether some of cols are pqarrow's.
func (gr *groupReader) mixed(cols []nativeColumn) bool {
	for _, c := range cols {
		if c.leaf < 0 {
			return true
		}
	}
	return false
}

// seekPQ moves the pqarrow columns to row (of the group) when the page
// index skips rows: pqarrow's column reader cannot skip, so the rows in
// between are read, batchRows at a time, and dropped.
func (gr *groupReader) seekPQ(row, batchRows int64) error {
	if gr.pq == nil {
		return nil
	}
	if row < gr.pqRow {
		return fmt.Errorf("pqarrow columns at row %d, asked for row %d", gr.pqRow, row)
	}
	for gr.pqRow < row {
		n := min(row-gr.pqRow, batchRows)
		for _, p := range gr.pq {
			if p == nil {
				continue
			}
			a, err := p.take(gr, int(n))
			if err != nil {
				return err
			}
			a.Release()
		}
		gr.pqRow += n
	}
	return nil
}
