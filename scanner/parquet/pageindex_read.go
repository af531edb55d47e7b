package parquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// indexReader is how the page index is fetched when the source can plan
// it (iosched.File.ReadIndex: coalesced, cut against the footer's tail
// read, counted apart from data). It is declared here, where it is used,
// so that this package does not depend on the IO scheduler.
type indexReader interface {
	ReadIndex(ranges []scanner.Range) ([][]byte, error)
}

// indexKey names a column chunk: row group and leaf column.
type indexKey struct{ g, leaf int }

// pageIndexes are the usable page indexes of the chunks a read uses;
// a chunk without one is absent.
type pageIndexes map[indexKey]*chunkIndex

// indexWant is one index to read: the chunk it belongs to, whether it is
// the column index, and where it lies.
type indexWant struct {
	key    indexKey
	column bool
	loc    scanner.Range
}

// cacheKind is the metadata cache kind of one chunk's offset or column
// index (already checked, or marked unusable).
func cacheKind(k indexKey, column bool) string {
	if column {
		return fmt.Sprintf("parquet.column-index.%d.%d", k.g, k.leaf)
	}
	return fmt.Sprintf("parquet.offset-index.%d.%d", k.g, k.leaf)
}

// unusableIndex marks, in the cache, an index that was read and ignored.
type unusableIndex struct{}

// readPageIndexes returns the page indexes of groups x leaves: offset
// indexes for all, column indexes too for the leaves in statCols. Indexes
// come from the metadata cache where a scan of this file read them
// before; the rest are read in one planned batch, unless they cost more
// than they can save (see the guard rails in pageindex.go), in which
// case nil is returned and the groups are read whole.
//
// The bytes fetched are charged to acct (the read's decode budget) before
// the fetch and given back once decoded: they are bounded by maxBytes,
// but a budget is what keeps every stream's index bytes within the
// server's memory. A budget that refuses them skips the index the same
// way (nil: the groups are read whole, whose pages the budget then
// charges or refuses as it would without an index); only the read's end
// (its context) is an error.
func (f *File) readPageIndexes(groups, leaves []int, statCols map[int]*statLeaf, maxBytes int64, acct *account) (pageIndexes, error) {
	cache, _ := f.src.src.(scanner.MetadataCache)
	out := pageIndexes{}
	var wants []indexWant
	var need, data int64
	md := f.pf.MetaData()
	for _, g := range groups {
		rg := md.RowGroup(g)
		for _, leaf := range leaves {
			cc, err := rg.ColumnChunk(leaf)
			if err != nil {
				return nil, nil // pqarrow reports the damaged footer
			}
			data += cc.TotalCompressedSize()
			k := indexKey{g, leaf}
			for _, column := range []bool{false, true} {
				if column && statCols[leaf] == nil {
					continue
				}
				if v, ok := cachedIndex(cache, k, column); ok {
					f.applyCached(out, k, column, v)
					continue
				}
				loc := indexLocation(cc, column, f.src.Size())
				if loc.Len > 0 {
					wants = append(wants, indexWant{key: k, column: column, loc: loc})
					need += loc.Len
				}
			}
		}
	}
	if len(wants) == 0 {
		return out, nil
	}
	if need > maxBytes || 2*need > data {
		return nil, nil
	}
	if err := acct.reserve(need, "page index"); err != nil {
		if acct.ctx.Err() != nil {
			return nil, err
		}
		return nil, nil
	}
	defer acct.release(need)
	bufs, err := f.fetchIndexes(wants)
	if err != nil {
		return nil, err
	}
	// Offset indexes first: a column index needs its pages' rows.
	for _, column := range []bool{false, true} {
		for i, w := range wants {
			if w.column == column {
				f.decodeIndex(out, w, bufs[i], statCols[w.key.leaf], cache)
			}
		}
	}
	return out, nil
}

// indexLocation is where a chunk's offset (or column) index lies, or an
// empty range when it has none or the footer places it outside the file.
func indexLocation(cc *metadata.ColumnChunkMetaData, column bool, size int64) scanner.Range {
	loc := cc.GetOffsetIndexLocation()
	if column {
		loc = cc.GetColumnIndexLocation()
	}
	if loc == nil || loc.Offset < 0 || loc.Length <= 0 || loc.Length > maxIndexLength || loc.Offset > size-int64(loc.Length) {
		return scanner.Range{}
	}
	return scanner.Range{Off: loc.Offset, Len: int64(loc.Length)}
}

func cachedIndex(cache scanner.MetadataCache, k indexKey, column bool) (any, bool) {
	if cache == nil {
		return nil, false
	}
	return cache.CachedMetadata(cacheKind(k, column))
}

// applyCached puts a cached index into out.
func (f *File) applyCached(out pageIndexes, k indexKey, column bool, v any) {
	switch v := v.(type) {
	case []pageLoc:
		if out[k] == nil {
			out[k] = &chunkIndex{}
		}
		out[k].pages = v
	case []filter.ColumnStats:
		if out[k] != nil {
			out[k].stats = v
		}
	}
}

// fetchIndexes reads the wanted ranges: planned through the source when it
// can (indexReader), else one ReadAt each.
func (f *File) fetchIndexes(wants []indexWant) ([][]byte, error) {
	ranges := make([]scanner.Range, len(wants))
	for i, w := range wants {
		ranges[i] = w.loc
	}
	if ir, ok := f.src.src.(indexReader); ok {
		bufs, err := ir.ReadIndex(ranges)
		if err != nil {
			return nil, fmt.Errorf("%s: reading the page index: %w", f.name, err)
		}
		return bufs, nil
	}
	bufs := make([][]byte, len(ranges))
	for i, r := range ranges {
		bufs[i] = make([]byte, r.Len)
		if _, err := f.src.src.ReadAt(bufs[i], r.Off); err != nil {
			return nil, fmt.Errorf("%s: reading the page index at [%d, %d): %w", f.name, r.Off, r.End(), err)
		}
	}
	return bufs, nil
}

// decodeIndex decodes and checks one index into out, and caches the
// outcome, usable or not.
func (f *File) decodeIndex(out pageIndexes, w indexWant, b []byte, leaf *statLeaf, cache scanner.MetadataCache) {
	md := f.pf.MetaData()
	rows := md.RowGroup(w.key.g).NumRows()
	var val any = unusableIndex{}
	size := int64(64)
	if !w.column {
		cc, err := md.RowGroup(w.key.g).ColumnChunk(w.key.leaf)
		if err != nil {
			return
		}
		pages, err := decodeOffsetIndex(b, chunkOf(cc), rows)
		if err == nil {
			out[w.key] = &chunkIndex{pages: pages}
			val, size = pages, 24*int64(len(pages))+64
		}
	} else if ci := out[w.key]; ci != nil && leaf != nil {
		stats, err := decodeColumnIndex(b, leaf, ci.pages, rows, f)
		if err == nil {
			ci.stats = stats
			val, size = stats, 128*int64(len(stats))+64
		}
	} else {
		return // no usable offset index: the column index is of no use, and may be read again
	}
	if cache != nil {
		cache.CacheMetadata(cacheKind(w.key, w.column), val, size)
	}
}

// chunkOf is where a column chunk's bytes lie (as chunkRanges computes).
func chunkOf(cc *metadata.ColumnChunkMetaData) chunkSpan {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
		start = cc.DictionaryPageOffset()
	}
	return chunkSpan{off: start, n: cc.TotalCompressedSize()}
}
