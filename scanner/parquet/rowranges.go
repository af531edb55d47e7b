package parquet

// rowRange is the rows [start, end) of a row group.
type rowRange struct{ start, end int64 }

// rowRanges are sorted, disjoint, non-empty, non-adjacent row ranges of
// one row group: the rows a read selects.
type rowRanges []rowRange

// add appends [start, end), which must not start before the last range
// does, merging it with the last when they touch or overlap.
func (rs rowRanges) add(start, end int64) rowRanges {
	if end <= start {
		return rs
	}
	if n := len(rs); n > 0 && start <= rs[n-1].end {
		rs[n-1].end = max(rs[n-1].end, end)
		return rs
	}
	return append(rs, rowRange{start, end})
}

// rows counts the selected rows.
func (rs rowRanges) rows() int64 {
	var n int64
	for _, r := range rs {
		n += r.end - r.start
	}
	return n
}

// overlaps reports whether any range meets [start, end).
func (rs rowRanges) overlaps(start, end int64) bool {
	for _, r := range rs {
		if r.start < end && start < r.end {
			return true
		}
		if r.start >= end {
			break
		}
	}
	return false
}

// pageRun is consecutive pages [from, to) of a column chunk's offset
// index.
type pageRun struct{ from, to int }

// selectPages lists the runs of consecutive pages of ci that hold a
// selected row, and how many pages are left out.
func selectPages(ci *chunkIndex, rs rowRanges, groupRows int64) (runs []pageRun, skipped int) {
	for i := range ci.pages {
		if !rs.overlaps(ci.pages[i].first, ci.pageEnd(i, groupRows)) {
			skipped++
			continue
		}
		if n := len(runs); n > 0 && runs[n-1].to == i {
			runs[n-1].to = i + 1
		} else {
			runs = append(runs, pageRun{i, i + 1})
		}
	}
	return runs, skipped
}
