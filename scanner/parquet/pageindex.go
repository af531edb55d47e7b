package parquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// The page index: per column chunk, an offset index (each data page's
// file offset, size and first row) and a column index (each page's
// min/max, null count, all-null flag). Both are Thrift structs outside the
// footer, at locations the footer gives; pyarrow and arrow-go write all of
// them together just before the footer.
//
// What the reader does with them (pageprune.go): with a filter, column
// index statistics select row ranges of each row group; without one, a
// limit selects the first rows. The offset index maps the selected rows
// to the pages of every column read, and only those pages are fetched.
//
// Guard rails. The page index is redundant with the data: a reader that
// ignores it reads the same rows. So an index that cannot be trusted is
// ignored, and its row group read whole, rather than failing the scan:
//   - a location outside the file, or past the data it indexes: ignored
//     for that column chunk (checkLocation);
//   - an offset index whose pages are out of order, overlap, leave the
//     column chunk, do not start at row 0 or run past the group's rows:
//     ignored for the column chunk (checkPages);
//   - a column index whose lists disagree in length with the offset
//     index, or that does not decode: its statistics are not used;
//   - pages whose headers then contradict the offset index (a first row
//     that does not follow from the value counts, a page size that does
//     not match its header): found when the pages are read, before any
//     row of the group is emitted, and the group is read whole
//     (readPieces).
// Corrupt data pages stay what they were before the index: ErrCorrupt.
// Every decoder call runs under recover; none of this can fail a scan.
//
// Caps: an index is read only when its bytes are at most half the data
// bytes it gates and within ReadOptions.MaxIndexBytes (default
// DefaultMaxIndexBytes): beyond that it costs about what it can save.

// DefaultMaxIndexBytes caps the page index bytes one read fetches.
const DefaultMaxIndexBytes = 32 << 20 // 32 MiB

// maxIndexLength bounds one column chunk's index: no writer produces a
// bigger one, and the Thrift decoder allocates what it claims.
const maxIndexLength = 64 << 20

// pageLoc is one data page, from the offset index.
type pageLoc struct {
	off   int64 // file offset of the page header
	size  int64 // header and body, compressed
	first int64 // its first row, within the row group
}

// chunkIndex is a column chunk's page index, checked (checkPages).
type chunkIndex struct {
	pages []pageLoc
	// stats are each page's statistics from the column index, nil when
	// the chunk has none that is usable.
	stats []filter.ColumnStats
}

// pageEnd is the row after page i's last.
func (ci *chunkIndex) pageEnd(i int, groupRows int64) int64 {
	if i+1 < len(ci.pages) {
		return ci.pages[i+1].first
	}
	return groupRows
}

// chunkSpan is a column chunk's bytes, as the footer places them.
type chunkSpan struct {
	off, n int64
}

// checkPages validates an offset index against its column chunk: pages in
// order, not overlapping, inside the chunk, the first at row 0, first rows
// strictly increasing below the group's rows.
func checkPages(pages []pageLoc, chunk chunkSpan, groupRows int64) error {
	if len(pages) == 0 {
		return fmt.Errorf("offset index lists no pages")
	}
	end := chunk.off + chunk.n
	for i, p := range pages {
		switch {
		case p.size <= 0 || p.off < chunk.off || p.off > end-p.size:
			return fmt.Errorf("page %d at [%d, +%d) lies outside its column chunk [%d, %d)", i, p.off, p.size, chunk.off, end)
		case i == 0 && p.first != 0:
			return fmt.Errorf("first page starts at row %d, not 0", p.first)
		case i > 0 && p.first <= pages[i-1].first:
			return fmt.Errorf("page %d starts at row %d, not after page %d's %d", i, p.first, i-1, pages[i-1].first)
		case i > 0 && p.off < pages[i-1].off+pages[i-1].size:
			return fmt.Errorf("page %d at %d overlaps page %d ending at %d", i, p.off, i-1, pages[i-1].off+pages[i-1].size)
		case p.first >= groupRows:
			return fmt.Errorf("page %d starts at row %d of a row group of %d", i, p.first, groupRows)
		}
	}
	return nil
}

// decodeOffsetIndex decodes and checks an offset index.
func decodeOffsetIndex(b []byte, chunk chunkSpan, groupRows int64) (pages []pageLoc, err error) {
	defer scanner.Recover(&err, "decoding the offset index")
	oi := metadata.NewOffsetIndex(b, nil, nil)
	locs := oi.GetPageLocations()
	pages = make([]pageLoc, len(locs))
	for i, l := range locs {
		if l == nil {
			return nil, fmt.Errorf("offset index entry %d is empty", i)
		}
		pages[i] = pageLoc{off: l.Offset, size: int64(l.CompressedPageSize), first: l.FirstRowIndex}
	}
	if err := checkPages(pages, chunk, groupRows); err != nil {
		return nil, err
	}
	return pages, nil
}

// decodeColumnIndex decodes a column index of a chunk with pages pages
// into per-page statistics, as leaf trusts them; the rows of each page
// come from the offset index.
func decodeColumnIndex(b []byte, leaf *statLeaf, pages []pageLoc, groupRows int64, f *File) (out []filter.ColumnStats, err error) {
	defer scanner.Recover(&err, "decoding the column index")
	ci := metadata.NewColumnIndex(f.pf.MetaData().Schema.Column(leaf.col), b, nil, nil)
	nullPages, mins, maxs := ci.GetNullPages(), ci.GetMinValues(), ci.GetMaxValues()
	n := len(pages)
	if len(nullPages) != n || len(mins) != n || len(maxs) != n {
		return nil, fmt.Errorf("column index lists %d pages, the offset index %d", len(nullPages), n)
	}
	var nulls []int64
	if ci.IsSetNullCounts() {
		if nulls = ci.GetNullCounts(); len(nulls) != n {
			return nil, fmt.Errorf("column index has %d null counts for %d pages", len(nulls), n)
		}
	}
	out = make([]filter.ColumnStats, n)
	for i := range pages {
		rows := (&chunkIndex{pages: pages}).pageEnd(i, groupRows) - pages[i].first
		r := rawStats{rows: rows, nulls: -1, nans: -1}
		if nulls != nil && nulls[i] >= 0 && nulls[i] <= rows {
			r.nulls = nulls[i]
		}
		if nullPages[i] {
			r.nulls = rows // min and max are empty
		} else {
			r.min, r.max = mins[i], maxs[i]
			r.oldMin, r.oldMax = mins[i], maxs[i]
		}
		out[i] = leaf.pageStats(r)
	}
	return out, nil
}

// pageStats turns a page's column index entry into what filter trusts:
// its bounds follow the column index's own rule (the column's order, the
// min_value/max_value of the footer), which stats applies to useNew.
func (l *statLeaf) pageStats(r rawStats) filter.ColumnStats {
	if !l.useNew {
		r.min, r.max = nil, nil
	}
	r.oldMin, r.oldMax = nil, nil
	return l.stats(r)
}
