package parquet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// Late materialization: a filtered read of a row group whose page index
// the plan used (pageprune.go) takes two passes instead of one:
//
//  1. fetch and decode the filter columns' selected pages only, and
//     evaluate the filter on them: the survivors are exact rows;
//  2. map the survivors to the pages of the other columns through their
//     offset index, fetch those pages (announced together, so the IO
//     scheduler coalesces them into as few requests as it can), and
//     decode every column over the rows those pages hold.
//
// The second pass reuses the bytes the first fetched (f.lateHeld), so the
// filter columns cost no second fetch, only a second decode. The rows
// emitted are the survivors and whatever else shares all their columns'
// pages (a superset cut at page boundaries, so that scattered survivors
// do not become one-row batches); the caller applies the filter anyway.
//
// A row group without an offset index for every column read (pyarrow
// writes none by default) is read late from its page headers instead,
// when every column read is flat (a page's values are its rows):
//
//  1. fetch and decode the filter columns' chunks whole, and evaluate the
//     filter: a group where no row survives ends here, and the other
//     columns' chunks are never fetched;
//  2. fetch the other columns' chunks, read their page headers (which
//     give each page's rows), and decode only the rows near survivors
//     (runs closer than lateMergeRows joined): pages holding none are
//     never decompressed, and inside a page the rows skipped cost a skip
//     of their values, not a decode. With LateAuto, survivors closer
//     than a run's cost in rows decoded (lateGap) are one run, so that
//     survivors on every page cost about what one pass costs. Small
//     batches are gathered before they are emitted (batchGather).
//
// Either way the second pass emits the survivors only (emitReusing): the
// caller applies the filter again, to a few rows, and the filter's
// dictionaries are decoded over those rows alone, as a one-pass read
// does.
//
// When it cannot pay, the read stays one pass:
//   - the projection is only the filter's columns, or a filter column is
//     not a top-level column the native reader decodes itself;
//   - a row group has no offset index for every column read, and some
//     column read is not flat;
//   - with LateAuto, a row group whose other columns' selected data pages
//     hold less than lateMinBytes: the most it can save costs less than
//     the second round trip to storage;
//   - with LateAuto, after the first row group read late, when its
//     survivors' pages held more than lateMaxFraction of the other
//     columns' bytes: every later group is read in one pass.

// lateMaxFraction is the share of the other columns' bytes (of the pages
// the page index selected) above which a second pass is not worth its
// round trip: DataFusion (#23420) found the naive always-late strategy
// slower on queries where most rows survive.
const lateMaxFraction = 0.5

// lateMinBytes is the least of the other columns' data-page bytes (of the
// pages the page index selected) a row group must hold for LateAuto to
// read it late: about what S3 transfers in one round trip's time (100
// MB/s for 10 ms), so that a second round trip cannot cost more than all
// it could save.
const lateMinBytes = 1 << 20

// lateMergeRows: survivors fewer rows apart than this are decoded as one
// run, rows between them included (the caller filters them out again), so
// that scattered survivors of a group read from its page headers cost
// fewer, larger batches.
const lateMergeRows = 64

// With LateAuto, the second pass of a read from page headers decides,
// once the survivors are known, how far apart two runs of survivors must
// be for the rows between them to be skipped rather than decoded
// (lateGap): each run costs a seek of every column, a batch of its own
// and its kept filter columns' slices; each row decoded costs its values'
// decode. Survivors closer than that are joined into one run, so that
// survivors scattered on every page (bench/taxi q3-q5: one row in 60 to
// 500) are decoded as one run in full batches, at about the one-pass
// read's cost, and sparse ones (q7: one in 1,000) run by run. The costs
// are in nanoseconds as measured on bench/taxi (BenchmarkLateTaxi); only
// their ratios matter.
const (
	// lateRunCost is a run's cost beside its columns'.
	lateRunCost = 1500
	// lateRunColumnCost is a run's cost per column it decodes.
	lateRunColumnCost = 1500
	// lateFixedRowCost is a fixed-width value's decode (a copy, or a
	// dictionary entry's).
	lateFixedRowCost = 1
	// lateBytesRowCost is a byte array's decode (its length, offsets and
	// bytes copied).
	lateBytesRowCost = 8
)

// lateDecodeTwice makes the second pass decode the filter columns again
// instead of reusing the first pass's (latemat_reuse.go): the "before"
// of BenchmarkLateMaterialization. Tests only.
var lateDecodeTwice = false

// lateRead is one read's late-materialization state.
type lateRead struct {
	f    *File
	p    *scanner.Projection
	impl *projection
	opts scanner.ReadOptions
	// filterCols are the output columns the filter names; filterSchema
	// is their schema, in output order.
	filterCols   []nativeColumn
	filterSchema *arrow.Schema
	filterLeaf   map[int]bool
	// flat: every column read is flat, so page headers give its pages'
	// rows (a late read without an offset index).
	flat bool
	// late is false once LateAuto decided that it does not pay.
	late bool
}

// latePiece is a fetched piece of a filter column, lent to the second
// pass.
type latePiece struct {
	off  int64
	data []byte
	ref  *chunkRef
}

// reused returns the bytes [off, off+n) that the first pass fetched, with
// a new reference to them.
func (f *File) reused(off, n int64) ([]byte, *chunkRef, bool) {
	for _, h := range f.lateHeld {
		if h.off == off && int64(len(h.data)) == n {
			h.ref.refs.Add(1)
			return h.data, h.ref, true
		}
	}
	return nil, nil, false
}

// lateRead returns the read's late-materialization state, or nil when
// the read is one pass (see the top of this file).
func (f *File) lateRead(p *scanner.Projection, impl *projection, plans []groupPlan, opts scanner.ReadOptions) *lateRead {
	if opts.Filter == nil || opts.LateMaterialization == scanner.LateOff || impl.native == nil || f.noNative {
		return nil
	}
	lr := &lateRead{f: f, p: p, impl: impl, opts: opts, late: true, filterLeaf: map[int]bool{}}
	var fields []arrow.Field
	var why string
	lr.filterCols, fields, why = lateColumns(p, impl, opts.Filter.Columns())
	if why != "" {
		return nil
	}
	for _, c := range lr.filterCols {
		lr.filterLeaf[c.leaf] = true
	}
	lr.flat = flatColumns(impl.native)
	if !slices.ContainsFunc(plans, func(pl groupPlan) bool { return lr.eligible(&pl) }) {
		return nil
	}
	lr.filterSchema = arrow.NewSchema(fields, nil)
	return lr
}

// lateColumns splits a projection's native columns for a late read:
// the output columns filterNames names (with their fields, in output
// order), or why the read is one pass ("" when it is not).
func lateColumns(p *scanner.Projection, impl *projection, filterNames []string) (filterCols []nativeColumn, fields []arrow.Field, why string) {
	names := map[string]bool{}
	for _, c := range filterNames {
		names[c] = true
	}
	for i, c := range impl.native {
		fd := p.Schema.Field(i)
		if c.leaf < 0 {
			// A pqarrow column: its reader reads whole groups.
			return nil, nil, fmt.Sprintf("column %s needs the general reader", fd.Name)
		}
		if c.nested != nil {
			// The filter names top-level leaves, and a nested column's
			// leaves are not planned for the second pass yet.
			return nil, nil, fmt.Sprintf("column %s is nested", fd.Name)
		}
		if names[fd.Name] {
			filterCols = append(filterCols, c)
			fields = append(fields, fd)
			delete(names, fd.Name)
		}
	}
	switch {
	case len(names) > 0 || len(filterCols) == 0:
		return nil, nil, "a filter column is not a top-level column read"
	case len(filterCols) == len(impl.native):
		return nil, nil, "projection is only the filter columns"
	}
	return filterCols, fields, ""
}

// flatColumns reports whether every column is a flat leaf: no list, no
// struct, so a data page's values are its rows.
func flatColumns(cols []nativeColumn) bool {
	for _, c := range cols {
		if c.leaf < 0 || c.nested != nil || c.repeated || c.levels {
			return false
		}
	}
	return true
}

// lateFacts are what decides whether one row group is read late.
type lateFacts struct {
	native      bool  // the native reader reads the group's columns
	offsetIndex bool  // every column read has an offset index
	headers     bool  // every column read is flat: page headers give the pages' rows
	otherBytes  int64 // the other columns' data-page bytes the read fetches
	roundTrip   int64 // ReadOptions.RoundTripBytes
}

// groupLate is the decision for one row group, the reader's (worthIt)
// and the planner's (PlanLate): whether it is read late, and if not, why.
// With LateAuto the reader may still read a group in one pass after a
// late group whose survivors held most of its bytes (lateMaxFraction),
// which no plan can know.
func groupLate(mode scanner.LateMode, ff lateFacts) (bool, string) {
	switch {
	case mode == scanner.LateOff:
		return false, "late materialization is off"
	case !ff.native:
		return false, "pages the native reader does not decode"
	case !ff.offsetIndex && !ff.headers:
		return false, "no page index, and a column read is not flat"
	case mode == scanner.LateAlways:
		return true, ""
	case ff.otherBytes < lateMinBytes:
		return false, "the other columns hold under 1 MiB per row group"
	case ff.otherBytes < ff.roundTrip:
		return false, fmt.Sprintf("the other columns hold under one round trip's worth (%.1f MiB) per row group", float64(ff.roundTrip)/(1<<20))
	}
	return true, ""
}

// eligible reports whether row group pl can be read late: the native
// reader reads it, and every column read has an offset index or is flat.
func (lr *lateRead) eligible(pl *groupPlan) bool {
	ff := lr.facts(pl, false)
	return ff.native && (ff.offsetIndex || ff.headers)
}

// byHeaders reports whether pl, eligible, is read late from its page
// headers: some column read has no offset index.
func (lr *lateRead) byHeaders(pl *groupPlan) bool { return !lr.facts(pl, false).offsetIndex }

// facts are pl's lateFacts; otherBytes only when withBytes: the other
// columns' pieces the page index selected, or without an offset index
// their chunks' data pages, as the footer gives them.
func (lr *lateRead) facts(pl *groupPlan, withBytes bool) lateFacts {
	ff := lateFacts{native: lr.f.nativeGroup(pl.g, lr.impl.native), offsetIndex: pl.index != nil, headers: lr.flat,
		roundTrip: lr.opts.RoundTripBytes}
	for _, leaf := range lr.impl.leaves {
		if ci := pl.index[indexKey{pl.g, leaf}]; ci == nil || ci.pages == nil {
			ff.offsetIndex = false
		}
	}
	if !withBytes {
		return ff
	}
	rg := lr.f.pf.MetaData().RowGroup(pl.g)
	for _, leaf := range lr.impl.leaves {
		if lr.filterLeaf[leaf] {
			continue
		}
		if !ff.offsetIndex {
			if cc, err := rg.ColumnChunk(leaf); err == nil {
				ff.otherBytes += dataPageBytes(cc)
			}
			continue
		}
		for _, pc := range pl.pieces[leaf] {
			if !pc.dictionary {
				ff.otherBytes += pc.n
			}
		}
	}
	return ff
}

// worthIt reports whether pl's other columns hold enough data-page
// bytes for a second pass to save more than it costs (lateMinBytes).
func (lr *lateRead) worthIt(pl *groupPlan) bool {
	late, _ := groupLate(lr.opts.LateMaterialization, lr.facts(pl, true))
	return late
}

// read reads plans, late where it can.
func (lr *lateRead) read(ctx context.Context, plans []groupPlan, batchRows int64, acct *account, emit func(arrow.RecordBatch) error) error {
	f := lr.f
	for i := range plans {
		if lr.eligible(&plans[i]) {
			lr.wholeRows(&plans[i])
		}
	}
	// The groups read in one pass have all their pages announced up
	// front, as a read without late materialization does: announced only
	// when reached, each would wait a round trip for its other columns.
	announced := make([]bool, len(plans))
	cut := cutOffsets(plans)
	for _, rs := range lr.firstRanges(plans, announced) {
		// The filter columns' pages of a group read late, or a group
		// read in one pass, selective when the page index cut it.
		if slices.ContainsFunc(rs, func(r scanner.Range) bool { return cut[r.Off] }) {
			scanner.PrefetchSelective(f.src.src, rs)
		} else {
			scanner.Prefetch(f.src.src, rs)
		}
	}
	lr.announceOnePass(plans, announced)
	for i := range plans {
		if err := ctx.Err(); err != nil {
			return err
		}
		pl := &plans[i]
		var err error
		switch {
		case !lr.eligible(pl):
			err = f.readNative(ctx, lr.p, lr.impl, lr.impl.native, plans[i:i+1], batchRows, acct, emit)
		case !lr.late || !lr.worthIt(pl):
			if !announced[i] {
				lr.announceOthers(pl, pl)
			}
			err = f.readGroup(ctx, lr.p, lr.impl, lr.impl.native, pl, batchRows, acct, emit)
		default:
			err = lr.readGroup(ctx, pl, batchRows, acct, emit)
			if !lr.late { // auto gave up: the rest is one pass
				lr.announceOnePass(plans[i+1:], announced[i+1:])
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// announceOnePass announces the other columns' pages of the eligible
// plans that are read in one pass (late is off, or they hold too little
// to save), marking them in announced.
func (lr *lateRead) announceOnePass(plans []groupPlan, announced []bool) {
	for i := range plans {
		pl := &plans[i]
		if !announced[i] && lr.eligible(pl) && (!lr.late || !lr.worthIt(pl)) {
			lr.announceOthers(pl, pl)
			announced[i] = true
		}
	}
}

// wholeRows gives a plan that reads all of its group (the page index
// kept every row) explicit rows and pieces, which the second pass
// narrows.
func (lr *lateRead) wholeRows(pl *groupPlan) {
	if pl.rows != nil {
		return
	}
	pl.rows = rowRanges{{0, lr.f.pf.MetaData().RowGroup(pl.g).NumRows()}}
	if !lr.byHeaders(pl) {
		lr.f.planPieces(pl, lr.impl.leaves, pl.index, nil)
	}
}

// firstRanges lists what the read fetches before any filter is
// evaluated: the filter columns' pieces of the groups read late, and
// everything of the others; one list per announcement. Each filter
// column of each group is announced on its own: announced together, the
// IO scheduler would merge them across the gaps between them, which hold
// the other columns' pages, and drop those gap bytes once fetched; the
// second pass, reading those pages, would then find them in a consumed
// request's gap and read each directly, one round trip at a time (887
// sequential GETs for bench/filter's tenant query on S3, where the
// learned hole is MiBs).
//
// A group the decision already reads in one pass (not eligible, or too
// little to save) is announced whole, as one set, and marked announced:
// its filter columns announced apart would cost requests of their own
// (bench/filter's tenant query: 48 GETs instead of 16 with no group late).
func (lr *lateRead) firstRanges(plans []groupPlan, announced []bool) [][]scanner.Range {
	var out [][]scanner.Range
	for i := range plans {
		pl := &plans[i]
		if !lr.eligible(pl) || !lr.worthIt(pl) {
			rs, err := lr.f.planRanges(plans[i:i+1], lr.impl)
			if err == nil { // else the read reports it
				out = append(out, rs)
				announced[i] = true
			}
			continue
		}
		for _, leaf := range lr.impl.leaves {
			if !lr.filterLeaf[leaf] {
				continue
			}
			if lr.byHeaders(pl) {
				rs, err := lr.f.chunkRanges([]int{pl.g}, []int{leaf})
				if err == nil { // else the read reports it
					out = append(out, rs)
				}
				continue
			}
			out = append(out, appendPieces(nil, pl.pieces[leaf]))
		}
	}
	return out
}

// cutOffsets are the offsets of the plans' pieces that are part of a
// chunk (the page index cut them), which are announced as a selective
// plan's.
func cutOffsets(plans []groupPlan) map[int64]bool {
	out := map[int64]bool{}
	for _, pl := range plans {
		for _, pieces := range pl.pieces {
			for _, pc := range pieces {
				if pc.partOfChunk {
					out[pc.off] = true
				}
			}
		}
	}
	return out
}

// otherRanges lists the pieces of pl's columns that are not the
// filter's.
func (lr *lateRead) otherRanges(pl *groupPlan) []scanner.Range {
	var out []scanner.Range
	for _, leaf := range lr.impl.leaves {
		if !lr.filterLeaf[leaf] {
			out = appendPieces(out, pl.pieces[leaf])
		}
	}
	return out
}

// announceOthers announces the other columns' pieces of pl, cut into
// runs with none of first's filter pieces (announced by firstRanges)
// between two of them: the IO scheduler coalesces each announcement
// across its gaps, and a request stretched over a filter column's pieces
// would fetch them a second time, and leave reads finding them in two
// requests to be served directly, one round trip at a time.
func (lr *lateRead) announceOthers(pl, first *groupPlan) {
	if lr.byHeaders(first) {
		// Whole chunks, each announced on its own: the filter columns'
		// chunks lie between them.
		for _, leaf := range lr.impl.leaves {
			if rs, err := lr.f.chunkRanges([]int{pl.g}, []int{leaf}); err == nil && !lr.filterLeaf[leaf] {
				scanner.Prefetch(lr.f.src.src, rs)
			}
		}
		return
	}
	var filters []scanner.Range
	for _, leaf := range lr.impl.leaves {
		if lr.filterLeaf[leaf] {
			filters = appendPieces(filters, first.pieces[leaf])
		}
	}
	for _, run := range runsBetween(lr.otherRanges(pl), filters) {
		scanner.PrefetchSelective(lr.f.src.src, run)
	}
}

// runsBetween sorts ranges by offset and cuts them into runs such that no
// range of avoid lies between two ranges of one run.
func runsBetween(ranges, avoid []scanner.Range) [][]scanner.Range {
	ranges = slices.Clone(ranges)
	slices.SortFunc(ranges, func(a, b scanner.Range) int { return cmp.Compare(a.Off, b.Off) })
	var out [][]scanner.Range
	var run []scanner.Range
	for _, r := range ranges {
		if n := len(run); n > 0 && slices.ContainsFunc(avoid, func(a scanner.Range) bool { return a.Off >= run[n-1].End() && a.End() <= r.Off }) {
			out = append(out, run)
			run = nil
		}
		run = append(run, r)
	}
	if len(run) > 0 {
		out = append(out, run)
	}
	return out
}

func appendPieces(out []scanner.Range, pieces []chunkPiece) []scanner.Range {
	for _, pc := range pieces {
		out = append(out, scanner.Range{Off: pc.off, Len: pc.n})
	}
	return out
}

// readGroup reads row group pl in two passes (see the top of this file).
func (lr *lateRead) readGroup(ctx context.Context, pl *groupPlan, batchRows int64, acct *account, emit func(arrow.RecordBatch) error) (err error) {
	f := lr.f
	first, err := f.openGroup(pl, lr.filterCols, acct)
	if first != nil {
		defer first.release()
		f.lateHeld = heldPieces(first)
		defer func() { f.lateHeld = nil }()
	}
	if err != nil && !errors.Is(err, errNotNative) {
		return err
	}
	if err != nil {
		// The one-pass reader decides again, from the bytes already
		// fetched.
		lr.announceOthers(pl, pl)
		return f.readGroup(ctx, lr.p, lr.impl, lr.impl.native, pl, batchRows, acct, emit)
	}
	kept := &filterKept{acct: acct}
	defer kept.release()
	survivors, err := lr.survivors(ctx, first, pl.rows, batchRows, kept)
	if err != nil {
		return err
	}
	second, fraction, skipped := lr.narrow(pl, survivors)
	if lr.opts.Counts != nil {
		lr.opts.Counts.LateGroups++
		lr.opts.Counts.PagesSkipped += skipped
	}
	if lr.opts.LateMaterialization == scanner.LateAuto && fraction > lateMaxFraction {
		lr.late = false
		if lr.opts.Counts != nil {
			lr.opts.Counts.LateGaveUp = true
		}
	}
	if len(second.rows) == 0 {
		return nil
	}
	lr.announceOthers(&second, pl)
	if lr.byHeaders(pl) {
		// Scattered survivors make small batches: gathered before they
		// go out, so that the caller filters and sends a few.
		gather := &batchGather{schema: lr.p.Schema, target: batchRows, mem: lr.mem(), emit: emit}
		defer gather.release()
		emit = gather.add
		defer func() {
			if err == nil {
				err = gather.flush()
			}
		}()
	}
	if !lateDecodeTwice && kept.usable(second.rows) {
		err := lr.emitReusing(ctx, &second, kept, survivors, batchRows, acct, emit)
		if !errors.Is(err, errNotNative) {
			return err
		}
	}
	return f.readGroup(ctx, lr.p, lr.impl, lr.impl.native, &second, batchRows, acct, emit)
}

// mem is the allocator of the read's filter evaluation.
func (lr *lateRead) mem() memory.Allocator {
	if lr.opts.Mem == nil {
		return memory.DefaultAllocator
	}
	return lr.opts.Mem
}

// heldPieces lists the pieces a group reader fetched, with their
// references, for the second pass.
func heldPieces(gr *groupReader) []latePiece {
	var out []latePiece
	i := 0
	for _, c := range gr.cols {
		for _, ref := range c.refs {
			out = append(out, latePiece{off: gr.chunks[i].off, data: gr.chunks[i].data, ref: ref})
			i++
		}
	}
	return out
}

// survivors decodes the filter columns over rows and returns the rows
// where the filter is true; kept keeps the decoded batches for the second
// pass.
func (lr *lateRead) survivors(ctx context.Context, gr *groupReader, rows rowRanges, batchRows int64, kept *filterKept) (rowRanges, error) {
	mem := lr.mem()
	pos := rowCursor{ranges: rows}
	out := rowRanges{}
	err := gr.emitRanges(ctx, lr.filterSchema, batchRows, rows, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		kept.keep(pos.at(0), rec)
		mask, err := lr.opts.Filter.Eval(ctx, rec, mem)
		if err != nil {
			return fmt.Errorf("%s: row group %d: evaluating the filter: %w", lr.f.name, gr.g, err)
		}
		defer mask.Release()
		b, ok := mask.(*array.Boolean)
		if !ok {
			return fmt.Errorf("%s: filter evaluated to %s, not booleans", lr.f.name, mask.DataType())
		}
		out = addTrue(out, b, pos.at(0))
		pos.advance(b.Len())
		return nil
	})
	return out, err
}

// addTrue adds to out the rows base+i where b is valid and true, a byte
// of the bitmaps at a time where they are byte-aligned: survivors are
// mostly few, and a zero byte skips eight rows.
func addTrue(out rowRanges, b *array.Boolean, base int64) rowRanges {
	d := b.Data()
	n, off := d.Len(), d.Offset()
	if n == 0 {
		return out
	}
	vals := d.Buffers()[1].Bytes()
	var valid []byte
	if b.NullN() != 0 && d.Buffers()[0] != nil {
		valid = d.Buffers()[0].Bytes()
	}
	for i := 0; i < n; {
		if (off+i)%8 == 0 && n-i >= 8 {
			by := vals[(off+i)/8]
			if valid != nil {
				by &= valid[(off+i)/8]
			}
			if by == 0 {
				i += 8
				continue
			}
			if by == 0xff {
				out = out.add(base+int64(i), base+int64(i)+8)
				i += 8
				continue
			}
		}
		if bitutil.BitIsSet(vals, off+i) && (valid == nil || bitutil.BitIsSet(valid, off+i)) {
			out = out.add(base+int64(i), base+int64(i)+1)
		}
		i++
	}
	return out
}

// rowCursor maps positions in the concatenated batches of ranges (as
// emitRanges cuts them: no batch spans two ranges) to rows of the group.
type rowCursor struct {
	ranges rowRanges
	ri     int
	off    int64 // rows of ranges[ri] consumed
}

func (c *rowCursor) at(i int) int64 { return c.ranges[c.ri].start + c.off + int64(i) }

func (c *rowCursor) advance(n int) {
	c.off += int64(n)
	if c.ri < len(c.ranges) && c.ranges[c.ri].start+c.off >= c.ranges[c.ri].end {
		c.ri, c.off = c.ri+1, 0
	}
}

// narrow returns the second pass's plan for pl given the survivors: the
// filter columns keep pl's pieces (already fetched), the others take the
// pages holding a survivor, and the rows are those every column's pages
// hold. fraction is the share of the other columns' bytes in pl that the
// second pass fetches; skipped counts the pages of pl it leaves out.
func (lr *lateRead) narrow(pl *groupPlan, survivors rowRanges) (_ groupPlan, fraction float64, skipped int64) {
	out := groupPlan{g: pl.g, rows: rowRanges{}, index: pl.index}
	groupRows := lr.f.pf.MetaData().RowGroup(pl.g).NumRows()
	if lr.byHeaders(pl) {
		// Without an offset index the pages are known once fetched: the
		// second pass decodes the rows near survivors, and its share is
		// of the rows (the pages skipped are counted as it reads them).
		cols, _ := lr.otherColumns()
		out.rows = spread(survivors, mergeGap(lr.opts.LateMaterialization, cols))
		n := pl.rows.rows()
		if n > 0 {
			fraction = float64(out.rows.rows()) / float64(n)
		}
		return out, fraction, 0
	}
	narrowed := groupPlan{g: pl.g, rows: survivors}
	var others []int
	for _, leaf := range lr.impl.leaves {
		if !lr.filterLeaf[leaf] {
			others = append(others, leaf)
		}
	}
	lr.f.planPieces(&narrowed, others, pl.index, nil)
	out.pieces = map[int][]chunkPiece{}
	rows := pl.rows
	var before, after int64
	for _, leaf := range lr.impl.leaves {
		if lr.filterLeaf[leaf] {
			out.pieces[leaf] = pl.pieces[leaf]
			continue
		}
		out.pieces[leaf] = narrowed.pieces[leaf]
		ci := pl.index[indexKey{pl.g, leaf}]
		skipped += pagesIn(ci, pl.rows, groupRows) - pagesIn(ci, survivors, groupRows)
		rows = intersect(rows, pieceRows(narrowed.pieces[leaf]))
		before += pieceBytes(pl.pieces[leaf])
		after += pieceBytes(narrowed.pieces[leaf])
	}
	out.rows = rows
	if before == 0 {
		return out, 0, skipped
	}
	return out, float64(after) / float64(before), skipped
}

// mergeGap is the gap in rows under which the second pass of a late read
// from page headers, decoding the columns cols, joins two runs of
// survivors: with LateAuto, where decoding the rows between them costs
// less than a run of its own (lateGap); forced late, lateMergeRows.
func mergeGap(mode scanner.LateMode, cols []nativeColumn) int64 {
	if mode != scanner.LateAuto {
		return lateMergeRows
	}
	return max(lateMergeRows, lateGap(cols))
}

// lateGap is the gap in rows at which decoding the rows between two runs
// of survivors costs what a run of the columns cols costs.
func lateGap(cols []nativeColumn) int64 {
	var row int64
	for _, c := range cols {
		if c.kind == kindBytes {
			row += lateBytesRowCost
		} else {
			row += lateFixedRowCost
		}
	}
	return (lateRunCost + lateRunColumnCost*int64(len(cols))) / max(1, row)
}

// spread joins the runs of rs fewer than gap rows apart.
func spread(rs rowRanges, gap int64) rowRanges {
	out := rowRanges{}
	for _, r := range rs {
		if n := len(out); n > 0 && r.start-out[n-1].end < gap {
			out[n-1].end = r.end
			continue
		}
		out = append(out, r)
	}
	return out
}

// pagesIn counts the pages of ci holding a row of rs.
func pagesIn(ci *chunkIndex, rs rowRanges, groupRows int64) int64 {
	runs, _ := selectPages(ci, rs, groupRows)
	var n int64
	for _, r := range runs {
		n += int64(r.to - r.from)
	}
	return n
}

// pieceRows are the rows the data pieces hold.
func pieceRows(pieces []chunkPiece) rowRanges {
	out := rowRanges{}
	for _, pc := range pieces {
		if !pc.dictionary {
			out = out.add(pc.first, pc.end)
		}
	}
	return out
}

func pieceBytes(pieces []chunkPiece) (n int64) {
	for _, pc := range pieces {
		n += pc.n
	}
	return n
}

// intersect returns the rows in both a and b.
func intersect(a, b rowRanges) rowRanges {
	out := rowRanges{}
	for i, j := 0, 0; i < len(a) && j < len(b); {
		out = out.add(max(a[i].start, b[j].start), min(a[i].end, b[j].end))
		if a[i].end < b[j].end {
			i++
		} else {
			j++
		}
	}
	return out
}
