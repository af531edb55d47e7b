package parquet

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/scand/scand/scanner"
)

var _ scanner.LatePlanner = (*File)(nil)

// PlanLate implements scanner.LatePlanner: the plan-time prediction of
// which row groups of a filtered read of groups go late, from the footer
// alone. Each group gets the reader's own decision (groupLate) with what
// the footer says of it: whether the native reader reads its chunks,
// whether every column read has an offset index (and the page index is
// small enough for the reader to read it), and, for the other columns'
// selected pages, their whole chunks' data bytes: an upper bound, as the
// page index (not read at plan time) may select fewer of them.
func (f *File) PlanLate(p *scanner.Projection, groups []int, filterColumns []string, mode scanner.LateMode, roundTripBytes int64) scanner.LatePlan {
	impl, _ := p.Impl.(*projection)
	out := scanner.LatePlan{Strategy: "no", Groups: len(groups)}
	switch {
	case len(filterColumns) == 0:
		out.Reason = "no filter"
		return out
	case mode == scanner.LateOff:
		out.Reason = "late materialization is off"
		return out
	case impl == nil || impl.native == nil || f.noNative:
		out.Reason = "the native reader does not read these columns"
		return out
	}
	filterCols, fields, why := lateColumns(p, impl, filterColumns)
	if why != "" {
		out.Reason = why
		return out
	}
	filterLeaf := map[int]bool{}
	for _, c := range filterCols {
		filterLeaf[c.leaf] = true
	}
	var notLate string
	for _, g := range groups {
		ff := f.footerFacts(g, impl, filterLeaf)
		ff.roundTrip = roundTripBytes
		late, why := groupLate(mode, ff)
		if late {
			out.LateGroups++
		} else if notLate == "" {
			notLate = why
		}
	}
	names := make([]string, len(fields))
	for i, fd := range fields {
		names[i] = fd.Name
	}
	deferred := fmt.Sprintf("filter on %s; %d of %d columns deferred", strings.Join(names, ", "), len(impl.native)-len(filterCols), len(impl.native))
	switch {
	case out.LateGroups == 0:
		out.Reason = notLate
	case out.LateGroups == len(groups):
		out.Strategy, out.Reason = "yes", deferred
	default:
		out.Strategy = "while reading"
		out.Reason = fmt.Sprintf("%s in %d of %d row groups; the others: %s", deferred, out.LateGroups, len(groups), notLate)
	}
	return out
}

// footerFacts are row group g's lateFacts as the footer tells them (see
// PlanLate).
func (f *File) footerFacts(g int, impl *projection, filterLeaf map[int]bool) lateFacts {
	md := f.pf.MetaData()
	if g < 0 || g >= md.NumRowGroups() {
		return lateFacts{}
	}
	rg := md.RowGroup(g)
	ff := lateFacts{native: f.nativeGroup(g, impl.native), offsetIndex: true, headers: flatColumns(impl.native)}
	var index, data int64
	for _, leaf := range impl.leaves {
		cc, err := rg.ColumnChunk(leaf)
		if err != nil {
			return lateFacts{}
		}
		data += cc.TotalCompressedSize()
		loc := indexLocation(cc, false, f.src.Size())
		if loc.Len == 0 {
			ff.offsetIndex = false
		}
		index += loc.Len
		if filterLeaf[leaf] {
			index += indexLocation(cc, true, f.src.Size()).Len
			continue
		}
		ff.otherBytes += dataPageBytes(cc)
	}
	// readPageIndexes' guard rails: an index over MaxIndexBytes' default,
	// or over half the data it gates, is not read.
	if index > DefaultMaxIndexBytes || 2*index > data {
		ff.offsetIndex = false
	}
	return ff
}

// dataPageBytes are a chunk's compressed bytes without its dictionary
// page.
func dataPageBytes(cc *metadata.ColumnChunkMetaData) int64 {
	n := cc.TotalCompressedSize()
	if d := cc.DictionaryPageOffset(); cc.HasDictionaryPage() && d > 0 && d < cc.DataPageOffset() {
		n -= cc.DataPageOffset() - d
	}
	return n
}
