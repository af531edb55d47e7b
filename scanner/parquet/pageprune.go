package parquet

import (
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// Page pruning: before any data is fetched, a read decides which rows of
// each chosen row group it needs (planRows):
//   - with a filter, every filter column that has a column index splits
//     the group at its page boundaries; each piece between two boundaries
//     of any column is kept when filter.MayMatch allows it given, for each
//     such column, the statistics of the page that holds the piece (the
//     row group's statistics for the filter's other columns);
//   - without a filter, a limit keeps the first rows: whole row groups
//     until the one where the limit ends, and that one's first rows.
// The offset index then maps the kept rows to the pages of every column
// read (pieces), and only those pages are fetched and decoded. Pages of
// different columns do not align, so the native reader cuts every column
// to exactly the kept rows (emitRanges); the caller still applies the
// filter to them.
//
// Only the native reader honours row ranges: pqarrow has no way to skip
// pages it is not given, so a split that pqarrow reads (nested columns,
// encodings the native reader leaves to it) reads whole row groups, and
// uses no page index but to drop row groups a limit does not reach.

// groupPlan is what a read takes of one row group.
type groupPlan struct {
	g int
	// rows are the rows to read, nil for all of them.
	rows rowRanges
	// pieces are the byte ranges to fetch of each leaf column when rows
	// is set and the leaf has an offset index; other leaves are read
	// whole.
	pieces map[int][]chunkPiece
	// index is the page index the plan was made from (latemat.go), nil
	// when none was read.
	index pageIndexes
}

// chunkPiece is a byte range of a column chunk the native reader fetches:
// the part before the first data page (the dictionary page), or a run of
// consecutive data pages holding rows [first, end) of the group.
type chunkPiece struct {
	off, n      int64
	first, end  int64
	dictionary  bool
	partOfChunk bool // not the whole chunk: its index may lie (readPieces)
}

// selective reports whether plans read pages of a column chunk rather
// than whole chunks (the page index or a limit chose them): their ranges
// are announced as a selective plan's (scanner.PrefetchSelective).
func selective(plans []groupPlan) bool {
	for _, pl := range plans {
		if len(pl.pieces) > 0 {
			return true
		}
	}
	return false
}

// planRows decides which rows of groups (nil: all) a read needs, reading
// the page index it needs for that (pageindex_read.go), and counts the
// pages it skips in opts.Counts. The index bytes are charged to acct
// while they are fetched and decoded.
func (f *File) planRows(groups []int, impl *projection, opts scanner.ReadOptions, acct *account) ([]groupPlan, error) {
	if groups == nil {
		groups = make([]int, f.pf.NumRowGroups())
		for i := range groups {
			groups[i] = i
		}
	}
	plans := make([]groupPlan, 0, len(groups))
	native := impl.native != nil && !f.noNative && opts.MaxIndexBytes >= 0
	maxBytes := opts.MaxIndexBytes
	if maxBytes == 0 {
		maxBytes = DefaultMaxIndexBytes
	}
	md := f.pf.MetaData()
	switch {
	case opts.Filter == nil && opts.Limit > 0:
		left := opts.Limit
		for _, g := range groups {
			if left <= 0 {
				break
			}
			n := md.RowGroup(g).NumRows()
			p := groupPlan{g: g}
			if n > left && native {
				p.rows = rowRanges{{0, left}}
			}
			plans = append(plans, p)
			left -= n
		}
	case opts.Filter != nil && native:
		return f.prunePages(groups, impl, opts, maxBytes, acct)
	default:
		for _, g := range groups {
			plans = append(plans, groupPlan{g: g})
		}
		return plans, nil
	}
	if last := len(plans) - 1; last >= 0 && plans[last].rows != nil {
		idx, err := f.readPageIndexes([]int{plans[last].g}, impl.leaves, nil, maxBytes, acct)
		if err != nil {
			return nil, err
		}
		f.planPieces(&plans[last], impl.leaves, idx, opts.Counts)
	}
	return plans, nil
}

// prunePages plans a filtered read by the column index of the filter's
// columns (see the top of this file).
func (f *File) prunePages(groups []int, impl *projection, opts scanner.ReadOptions, maxBytes int64, acct *account) ([]groupPlan, error) {
	plans := make([]groupPlan, 0, len(groups))
	statCols := f.filterLeaves(opts.Filter, impl.leaves)
	if len(statCols) == 0 {
		for _, g := range groups {
			plans = append(plans, groupPlan{g: g})
		}
		return plans, nil
	}
	idx, err := f.readPageIndexes(groups, impl.leaves, statCols, maxBytes, acct)
	if err != nil {
		return nil, err
	}
	md := f.pf.MetaData()
	for _, g := range groups {
		rows := md.RowGroup(g).NumRows()
		sel := f.selectRows(g, rows, opts.Filter, statCols, idx)
		p := groupPlan{g: g, rows: sel, index: idx}
		switch {
		case sel == nil:
		case len(sel) == 0:
			// No row can match: the group is not read at all.
			countSkipped(opts.Counts, idx, g, impl.leaves)
			continue
		case sel.rows() == rows:
			p.rows = nil
		default:
			f.planPieces(&p, impl.leaves, idx, opts.Counts)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// filterLeaves are the leaf columns read (leaves) the filter names and
// that have statistics, by leaf column.
func (f *File) filterLeaves(pred *filter.Predicate, leaves []int) map[int]*statLeaf {
	f.GroupStats(-1) // decodes the statistics' leaves
	if f.stats == nil {
		return nil
	}
	read := map[int]bool{}
	for _, l := range leaves {
		read[l] = true
	}
	names := map[string]bool{}
	for _, c := range pred.Columns() {
		names[c] = true
	}
	out := map[int]*statLeaf{}
	for i := range f.stats.leaves {
		l := &f.stats.leaves[i]
		if names[l.name] && read[l.col] && l.decode != nil {
			out[l.col] = l
		}
	}
	return out
}

// selectRows returns the rows of group g the filter may keep by the
// column indexes in idx: nil when no filter column of the group has one.
func (f *File) selectRows(g int, groupRows int64, pred *filter.Predicate, statCols map[int]*statLeaf, idx pageIndexes) rowRanges {
	src := &pageStatsSource{group: f.GroupStats(g), names: map[string]int{}}
	var cols []*chunkIndex
	for leaf, l := range statCols {
		if ci := idx[indexKey{g, leaf}]; ci != nil && ci.stats != nil {
			src.names[l.name] = len(cols)
			cols = append(cols, ci)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	src.cur = make([]filter.ColumnStats, len(cols))
	at := make([]int, len(cols)) // each column's page holding row r
	out := rowRanges{}
	for r := int64(0); r < groupRows; {
		next := groupRows
		for i, ci := range cols {
			for at[i]+1 < len(ci.pages) && ci.pages[at[i]+1].first <= r {
				at[i]++
			}
			src.cur[i] = ci.stats[at[i]]
			next = min(next, ci.pageEnd(at[i], groupRows))
		}
		if pred.MayMatch(src) {
			out = out.add(r, next)
		}
		r = next
	}
	return out
}

// pageStatsSource gives the statistics of one stretch of rows: the page
// statistics of the columns in names, the row group's for the others.
type pageStatsSource struct {
	group filter.StatsSource
	names map[string]int // column -> index into cur
	cur   []filter.ColumnStats
}

func (s *pageStatsSource) ColumnStats(column string) (filter.ColumnStats, bool) {
	if i, ok := s.names[column]; ok {
		return s.cur[i], true
	}
	return s.group.ColumnStats(column)
}

// planPieces maps p.rows to the pages of every leaf with an offset index.
func (f *File) planPieces(p *groupPlan, leaves []int, idx pageIndexes, counts *scanner.ReadCounts) {
	rg := f.pf.MetaData().RowGroup(p.g)
	rows := rg.NumRows()
	p.pieces = map[int][]chunkPiece{}
	for _, leaf := range leaves {
		ci := idx[indexKey{p.g, leaf}]
		cc, err := rg.ColumnChunk(leaf)
		if ci == nil || ci.pages == nil || err != nil {
			continue
		}
		runs, skipped := selectPages(ci, p.rows, rows)
		if counts != nil {
			counts.PagesSkipped += int64(skipped)
		}
		var pieces []chunkPiece
		if chunk := chunkOf(cc); chunk.off < ci.pages[0].off {
			pieces = append(pieces, chunkPiece{off: chunk.off, n: ci.pages[0].off - chunk.off, dictionary: true, partOfChunk: true})
		}
		for _, run := range runs {
			first, last := ci.pages[run.from], ci.pages[run.to-1]
			pieces = append(pieces, chunkPiece{off: first.off, n: last.off + last.size - first.off,
				first: first.first, end: ci.pageEnd(run.to-1, rows), partOfChunk: true})
		}
		p.pieces[leaf] = pieces
	}
}

// countSkipped counts the pages of a group no row of which is read.
func countSkipped(counts *scanner.ReadCounts, idx pageIndexes, g int, leaves []int) {
	if counts == nil {
		return
	}
	for _, leaf := range leaves {
		if ci := idx[indexKey{g, leaf}]; ci != nil {
			counts.PagesSkipped += int64(len(ci.pages))
		}
	}
}
