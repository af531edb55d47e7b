package orc

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/scalar"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// The row index (docs/indexes.md). A stripe's index area holds, for each
// column, a ROW_INDEX stream (per stride of rowIndexStride rows: the
// stream positions where the stride starts, and its statistics) and
// possibly bloom filters (bloom.go). stripeIndex reads those of a few
// columns, in one announced batch of ranges, and answers per stride.
//
// What is malformed (a stream that does not decompress or parse, more
// entries than the stripe has strides, or fewer) is ignored: that
// column's strides are then unknown, every one may match, and the stripe
// is read as without an index. Storage errors and cancellation fail.

// maxIndexStream bounds one decompressed index stream.
const maxIndexStream = 64 << 20

// stripeIndex is what the index streams of some columns say of a
// stripe's strides.
type stripeIndex struct {
	f       *File
	rows    int64 // in the stripe
	stride  int64
	strides int
	stats   [][]columnStats // [stride] by column id; nil: none read
	// positions are each column's per-stride stream positions (seek.go),
	// for the columns whose ROW_INDEX was read and parsed.
	positions map[int][][]uint64
	blooms    map[int][]*orcBloom
	utf8      map[int]bool // the column's filters are BLOOM_FILTER_UTF8
}

// strideCount is how many strides a stripe of rows has.
func strideCount(rows, stride int64) int {
	if stride <= 0 {
		return 0
	}
	return int((rows + stride - 1) / stride)
}

// readStripeIndex reads the ROW_INDEX (when stats) and bloom filter
// streams of column ids cols in stripe g. It returns nil, without error,
// when the file has no row index.
func (f *File) readStripeIndex(ctx context.Context, g int, cols []int, stats bool) (*stripeIndex, error) {
	ix, todo, err := f.planStripeIndex(g, cols, stats)
	if err != nil || ix == nil {
		return nil, err
	}
	scanner.Prefetch(f.src, rangesOf(todo))
	return ix, f.readIndexStreams(ctx, ix, g, todo)
}

// idxStream is one index stream of a stripe to read.
type idxStream struct {
	col  int
	kind streamKind
	r    scanner.Range
}

func rangesOf(streams []idxStream) []scanner.Range {
	out := make([]scanner.Range, len(streams))
	for i, s := range streams {
		out[i] = s.r
	}
	return out
}

// planStripeIndex starts stripe g's index with what the metadata cache
// holds, and lists the streams still to read.
func (f *File) planStripeIndex(g int, cols []int, stats bool) (*stripeIndex, []idxStream, error) {
	stride := int64(f.ft.rowIndexStride)
	if stride == 0 || len(cols) == 0 {
		return nil, nil, nil
	}
	if err := f.loadFooters([]int{g}); err != nil {
		return nil, nil, err
	}
	si := f.ft.stripes[g]
	ix := &stripeIndex{f: f, rows: int64(si.numberOfRows), stride: stride, blooms: map[int][]*orcBloom{}, utf8: map[int]bool{},
		positions: map[int][][]uint64{}}
	ix.strides = strideCount(ix.rows, stride)
	want := map[int]bool{}
	for _, c := range cols {
		want[c] = true
	}
	cache, _ := f.src.(scanner.MetadataCache)
	var todo []idxStream
	pos := int64(si.offset)
	for _, st := range f.footers[g].Load().streams {
		off := pos
		pos += int64(st.length)
		c := int(st.column)
		wanted := st.kind == streamBloomFilter || st.kind == streamBloomFilterUTF8 || (stats && st.kind == streamRowIndex)
		if !want[c] || !wanted || st.length == 0 {
			continue
		}
		if v, ok := cachedIndex(cache, g, c, st.kind); ok {
			ix.use(c, st.kind, v)
			continue
		}
		todo = append(todo, idxStream{c, st.kind, scanner.Range{Off: off, Len: int64(st.length)}})
	}
	return ix, todo, nil
}

// readIndexStreams reads, parses and caches the index streams todo of
// stripe g into ix. They have been announced.
func (f *File) readIndexStreams(ctx context.Context, ix *stripeIndex, g int, todo []idxStream) error {
	cache, _ := f.src.(scanner.MetadataCache)
	c := f.newCodec()
	for _, s := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, err := f.readAt(s.r.Off, s.r.Len)
		if err != nil {
			return fmt.Errorf("stripe %d: %v stream of column %d: %w", g, s.kind, s.col, err)
		}
		v := ix.parse(s.kind, c, raw)
		if cache != nil {
			cache.CacheMetadata(indexCacheKey(g, s.col, s.kind), v, 2*s.r.Len+64)
		}
		ix.use(s.col, s.kind, v)
	}
	return nil
}

// parsedIndex is one parsed index stream, as the metadata cache keeps it
// (kind "orc-index/<stripe>/<column>/<stream kind>"), so that a repeated
// scan reads no index bytes; both nil: the stream was malformed. It is
// immutable.
type parsedIndex struct {
	stats     []columnStats
	positions [][]uint64 // with stats: each stride's stream positions
	blooms    []*orcBloom
}

func indexCacheKey(g, col int, kind streamKind) string {
	return fmt.Sprintf("orc-index/%d/%d/%d", g, col, kind)
}

func cachedIndex(cache scanner.MetadataCache, g, col int, kind streamKind) (*parsedIndex, bool) {
	if cache == nil {
		return nil, false
	}
	v, ok := cache.CachedMetadata(indexCacheKey(g, col, kind))
	if !ok {
		return nil, false
	}
	p, ok := v.(*parsedIndex)
	return p, ok
}

// parse decompresses and parses one index stream; what is malformed
// comes back empty (ignored).
func (ix *stripeIndex) parse(kind streamKind, c *codec, raw []byte) *parsedIndex {
	b, err := readAll(c, raw, maxIndexStream)
	if err != nil {
		return &parsedIndex{}
	}
	switch kind {
	case streamRowIndex:
		if entries, positions, err := parseRowIndex(b); err == nil && len(entries) == ix.strides {
			return &parsedIndex{stats: entries, positions: positions}
		}
	case streamBloomFilter, streamBloomFilterUTF8:
		if bfs, err := parseBloomIndex(b); err == nil && len(bfs) == ix.strides {
			return &parsedIndex{blooms: bfs}
		}
	}
	return &parsedIndex{}
}

// use puts one parsed index stream into ix.
func (ix *stripeIndex) use(col int, kind streamKind, p *parsedIndex) {
	switch {
	case p.stats != nil:
		if ix.stats == nil {
			ix.stats = make([][]columnStats, ix.strides)
			for i := range ix.stats {
				ix.stats[i] = make([]columnStats, len(ix.f.ft.types))
			}
		}
		for i, e := range p.stats {
			ix.stats[i][col] = e
		}
		ix.positions[col] = p.positions
	case p.blooms != nil:
		if _, have := ix.blooms[col]; have && kind == streamBloomFilter {
			return // the UTF-8 variant wins
		}
		ix.blooms[col], ix.utf8[col] = p.blooms, kind == streamBloomFilterUTF8
	}
}

// parseRowIndex decodes a RowIndex: entries (1), each with positions (1,
// packed or not; seek.go uses them) and statistics (2).
func parseRowIndex(b []byte) ([]columnStats, [][]uint64, error) {
	var out []columnStats
	var positions [][]uint64
	err := walk(b, func(f pbField) error {
		if f.num != 1 {
			return nil
		}
		var cs columnStats
		var pos []uint64
		err := walk(f.b, func(g pbField) error {
			switch {
			case g.num == 1 && g.typ == protowire.VarintType:
				pos = append(pos, g.u)
			case g.num == 1 && g.typ == protowire.BytesType:
				var err error
				pos, err = appendPacked(pos, g.b)
				return err
			case g.num == 2:
				var err error
				cs, err = parseColumnStats(g.b)
				return err
			}
			return nil
		})
		out = append(out, cs)
		positions = append(positions, pos)
		return err
	})
	return out, positions, err
}

// appendPacked appends the packed varints of b to dst.
func appendPacked(dst []uint64, b []byte) ([]uint64, error) {
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return dst, fmt.Errorf("malformed packed positions")
		}
		dst, b = append(dst, v), b[n:]
	}
	return dst, nil
}

// strideRows is the number of rows of stride s.
func (ix *stripeIndex) strideRows(s int) int64 {
	return min(ix.stride, ix.rows-int64(s)*ix.stride)
}

// strideSource is stride s's statistics and bloom filters.
func (ix *stripeIndex) strideSource(s int) filter.StatsSource {
	var cols []columnStats
	if ix.stats != nil {
		cols = ix.stats[s]
	}
	gs := &groupStats{f: ix.f, rows: ix.strideRows(s), cols: cols, encrypted: ix.f.encryptedIDs()}
	if cols == nil {
		gs.cols = make([]columnStats, len(ix.f.ft.types))
	}
	return strideStats{groupStats: gs, ix: ix, stride: s}
}

// strideStats is a StatsSource and a filter.Membership for one stride.
type strideStats struct {
	*groupStats
	ix     *stripeIndex
	stride int
}

// MayContain implements filter.Membership.
func (s strideStats) MayContain(column string, v scalar.Scalar) bool {
	return s.ix.mayContain(s.stride, column, v)
}

func (ix *stripeIndex) mayContain(stride int, column string, v scalar.Scalar) bool {
	_, path := resolvePath(ix.f.tops, column)
	if path == nil {
		return true
	}
	n := path[len(path)-1]
	bfs, ok := ix.blooms[n.id]
	if !ok || !ix.f.bloomUsable() || (n.id < len(ix.f.encryptedIDs()) && ix.f.encryptedIDs()[n.id]) {
		return true
	}
	h, ok := bloomHash(n.t.kind, ix.utf8[n.id], v)
	return !ok || bfs[stride].testHash(h)
}

// stripeMembership is a stripe's membership test: a value may be in the
// stripe when it may be in one of its strides.
type stripeMembership struct{ ix *stripeIndex }

func (m stripeMembership) MayContain(column string, v scalar.Scalar) bool {
	if m.ix == nil {
		return true
	}
	for s := range m.ix.strides {
		if m.ix.mayContain(s, column, v) {
			return true
		}
	}
	return false
}

// columnIDs are the ORC column ids of dotted column names (unknown names
// are left out).
func (f *File) columnIDs(names []string) []int {
	var out []int
	for _, name := range names {
		if _, path := resolvePath(f.tops, name); path != nil {
			out = append(out, path[len(path)-1].id)
		}
	}
	return out
}

// GroupBlooms reads the bloom filters of columns in stripes groups, for
// the server's pruning: a stripe may contain a value when one of its
// strides' filters may.
func (f *File) GroupBlooms(ctx context.Context, groups []int, columns []string) (_ func(g int) filter.Membership, err error) {
	defer scanner.Recover(&err, f.name+": reading ORC bloom filters")
	ids := f.columnIDs(columns)
	byStripe := map[int]*stripeIndex{}
	if !f.bloomUsable() {
		return func(int) filter.Membership { return stripeMembership{} }, nil
	}
	// Every stripe's filters are announced together, so the IO scheduler
	// can merge them across stripes, then read stripe by stripe.
	todo := map[int][]idxStream{}
	var ranges []scanner.Range
	for _, g := range groups {
		if g < 0 || g >= len(f.ft.stripes) {
			continue
		}
		ix, streams, err := f.planStripeIndex(g, ids, false)
		if err != nil {
			return nil, classify(f.name, err)
		}
		byStripe[g], todo[g] = ix, streams
		ranges = append(ranges, rangesOf(streams)...)
	}
	scanner.Prefetch(f.src, ranges)
	for _, g := range groups {
		if ix := byStripe[g]; ix != nil {
			if err := f.readIndexStreams(ctx, ix, g, todo[g]); err != nil {
				return nil, classify(f.name, err)
			}
		}
	}
	return func(g int) filter.Membership { return stripeMembership{byStripe[g]} }, nil
}
