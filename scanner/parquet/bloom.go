package parquet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// Bloom filters for pruning (docs/indexes.md).
//
// The server asks for the filters of the columns a predicate compares
// with = or IN (filter.Predicate.EqualityColumns), for the row groups the
// statistics kept, and nothing else: the filters of other groups and
// columns are never read. All the ranges are announced at once
// (scanner.Prefetch), so the IO scheduler coalesces them (pyarrow writes a
// file's filters next to each other, before the footer) into a few GETs;
// parsed filters go into the metadata cache, so a repeated scan reads none.
//
// A filter that cannot be trusted is ignored and its row group kept: a
// header that is not a BloomFilterHeader, an algorithm, hash or
// compression the format does not define, a bitset size out of bounds or
// disagreeing with the footer's bloom_filter_length (a header lying about
// its size), a range outside the file. A bloom filter only ever lets a
// reader skip work, so a bad one costs the skipping, not the scan; the
// group's data is still read and checked as usual. Storage errors and
// cancellation do fail: they are not the file's fault.

// maxBloomBytesPerCall caps the filter bytes one BloomFilters call reads;
// the filters past it are not read (their groups are kept). A point
// lookup on a few columns of a large file reads a few MiB of filters at
// most (parquet-cpp sizes them at 1 MiB by default).
const maxBloomBytesPerCall = 64 << 20 // 64 MiB

// BloomFilters holds the bloom filters read for a set of row groups. It
// is immutable once returned, and safe for concurrent use.
type BloomFilters struct {
	groups map[int]groupBlooms
	// Bytes counts the filter bytes read from the source (cached filters
	// cost none), and Ignored the filters present but not used: malformed,
	// or past maxBloomBytesPerCall.
	Bytes, Ignored int64
}

// Group is row group g's membership test: what its filters rule out. A
// column without a filter may contain anything.
func (b *BloomFilters) Group(g int) filter.Membership {
	if b == nil {
		return groupBlooms(nil)
	}
	return b.groups[g]
}

// groupBlooms are one row group's filters by dotted column name.
type groupBlooms map[string]bloomLeaf

// bloomLeaf is a column's filter with what converts literals to the
// column's physical values.
type bloomLeaf struct {
	f      *bloomFilter
	phys   parquet.Type
	typ    arrow.DataType
	decode decoder // statistics' PLAIN decoder, to check conversions
}

// MayContain implements filter.Membership.
func (g groupBlooms) MayContain(column string, v scalar.Scalar) bool {
	l, ok := g[column]
	if !ok {
		return true
	}
	plain, ok := l.plainOf(v)
	return !ok || l.f.mayContain(plain)
}

// plainOf is v's PLAIN encoding as the column stores it; ok is false when
// v's type is not exactly the column's or the conversion is not exact.
// The conversion is checked by decoding it back as the column's
// statistics are decoded (stats.go), which knows the logical types: a
// timestamp of another unit, a date64 (stored as days), a decimal or an
// INT96 column give no round trip and so no lookup.
func (l bloomLeaf) plainOf(v scalar.Scalar) ([]byte, bool) {
	if l.decode == nil || !v.IsValid() || !arrow.TypeEqual(v.DataType(), l.typ) {
		return nil, false
	}
	var b []byte
	switch l.phys {
	case parquet.Types.Int32:
		if i, ok := intBits(v); ok {
			b = binary.LittleEndian.AppendUint32(nil, uint32(i))
		}
	case parquet.Types.Int64:
		if i, ok := intBits(v); ok {
			b = binary.LittleEndian.AppendUint64(nil, i)
		}
	case parquet.Types.Float:
		if f, ok := v.(*scalar.Float32); ok {
			b = binary.LittleEndian.AppendUint32(nil, math.Float32bits(f.Value))
		}
	case parquet.Types.Double:
		if f, ok := v.(*scalar.Float64); ok {
			b = binary.LittleEndian.AppendUint64(nil, math.Float64bits(f.Value))
		}
	case parquet.Types.ByteArray, parquet.Types.FixedLenByteArray:
		if s, ok := v.(scalar.BinaryScalar); ok {
			b = s.Data()
		}
	}
	if b == nil {
		return nil, false
	}
	back, ok := l.decode(b)
	return b, ok && scalar.Equals(back, v)
}

// intBits is an integer or temporal scalar's value as 64 bits (two's
// complement), which the physical type then truncates.
func intBits(v scalar.Scalar) (uint64, bool) {
	switch s := v.(type) {
	case *scalar.Int8:
		return uint64(int64(s.Value)), true
	case *scalar.Int16:
		return uint64(int64(s.Value)), true
	case *scalar.Int32:
		return uint64(int64(s.Value)), true
	case *scalar.Int64:
		return uint64(s.Value), true
	case *scalar.Uint8:
		return uint64(s.Value), true
	case *scalar.Uint16:
		return uint64(s.Value), true
	case *scalar.Uint32:
		return uint64(s.Value), true
	case *scalar.Uint64:
		return s.Value, true
	case *scalar.Date32:
		return uint64(int64(s.Value)), true
	case *scalar.Time32:
		return uint64(int64(s.Value)), true
	case *scalar.Time64:
		return uint64(int64(s.Value)), true
	case *scalar.Timestamp:
		return uint64(int64(s.Value)), true
	}
	return 0, false
}

// bloomRef is one filter to read: row group g's chunk of leaf l.
type bloomRef struct {
	g    int
	leaf statLeaf
	off  int64
	len  int64 // the footer's bloom_filter_length; 0: not given
}

// BloomFilters reads the bloom filters of columns (dotted names; columns
// without a filter, under lists, or unknown are skipped) in row groups
// groups. It is not safe for concurrent use with other calls on f.
func (f *File) BloomFilters(ctx context.Context, groups []int, columns []string) (*BloomFilters, error) {
	return f.BloomFiltersWithin(ctx, nil, groups, columns)
}

// BloomFiltersWithin is BloomFilters charging the bytes it reads to
// budget (nil: none) while it reads and parses them: each filter's
// before its fetch, given back once parsed. A filter the budget refuses
// is skipped (counted in Ignored, its group kept) rather than read over
// the budget; only the end of ctx is an error.
func (f *File) BloomFiltersWithin(ctx context.Context, budget scanner.Reserver, groups []int, columns []string) (_ *BloomFilters, err error) {
	defer scanner.Recover(&err, f.name+": reading bloom filters")
	acct := newAccount(ctx, budget)
	out := &BloomFilters{groups: map[int]groupBlooms{}}
	refs := f.bloomRefs(groups, columns, out)
	cache, _ := f.src.src.(scanner.MetadataCache)
	var todo []bloomRef
	for _, r := range refs {
		if v, ok := cachedBloom(cache, r); ok {
			out.add(r, v)
			continue
		}
		todo = append(todo, r)
	}
	ranges := make([]scanner.Range, 0, len(todo))
	for _, r := range todo {
		ranges = append(ranges, scanner.Range{Off: r.off, Len: r.readLen(f.src.Size())})
	}
	scanner.Prefetch(f.src.src, ranges)
	for i, r := range todo {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if out.Bytes+ranges[i].Len > maxBloomBytesPerCall {
			out.Ignored++
			continue
		}
		bf, n, err := f.readBloom(r, ranges[i].Len, acct)
		out.Bytes += n
		if errors.Is(err, errBloomRefused) {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			out.Ignored++
			continue
		}
		if err != nil {
			return nil, err
		}
		if cache != nil {
			cache.CacheMetadata(bloomCacheKey(r), bf, int64(4*len(bf.orEmpty()))+64)
		}
		out.add(r, bf)
	}
	return out, nil
}

// bloomRefs lists the filters to read, in file order of the groups.
func (f *File) bloomRefs(groups []int, columns []string, out *BloomFilters) []bloomRef {
	md := f.pf.MetaData()
	if f.stats == nil {
		f.stats = &statsCache{leaves: statLeaves(f.manifest, md), groups: make([]filter.StatsMap, md.NumRowGroups())}
	}
	var leaves []statLeaf
	for _, l := range f.stats.leaves {
		for _, c := range columns {
			if l.name == c {
				leaves = append(leaves, l)
			}
		}
	}
	var refs []bloomRef
	for _, g := range groups {
		if g < 0 || g >= md.NumRowGroups() {
			continue
		}
		out.groups[g] = groupBlooms{}
		for _, l := range leaves {
			rg := md.RowGroups[g]
			if l.col >= len(rg.Columns) || rg.Columns[l.col] == nil || rg.Columns[l.col].MetaData == nil || rg.Columns[l.col].CryptoMetadata != nil {
				continue
			}
			m := rg.Columns[l.col].MetaData
			if m.BloomFilterOffset == nil || *m.BloomFilterOffset <= 0 {
				continue
			}
			r := bloomRef{g: g, leaf: l, off: *m.BloomFilterOffset}
			if m.BloomFilterLength != nil && *m.BloomFilterLength > 0 {
				r.len = int64(*m.BloomFilterLength)
			}
			refs = append(refs, r)
		}
	}
	return refs
}

// readLen is how much of the file to read for r: its declared length, or
// a guess of its header's, within the file (a range past the end reads
// nothing, and r is then malformed).
func (r bloomRef) readLen(size int64) int64 {
	n := r.len
	if n == 0 {
		n = bloomHeaderGuess
	}
	if r.off >= size {
		return 0
	}
	return min(n, size-r.off)
}

// errBloomRefused: the budget refused a filter's bytes; it is skipped.
var errBloomRefused = errors.New("parquet: bloom filter bytes refused by the budget")

// readBloom reads and parses one filter; a malformed one comes back as
// an empty bloomFilter (ignored), and only storage errors and the
// budget's refusal (errBloomRefused) are errors. n is the bytes read. The
// read buffers are charged to acct while they are held.
func (f *File) readBloom(r bloomRef, n int64, acct *account) (_ *bloomFilter, read int64, err error) {
	if n == 0 || (r.len > 0 && n < r.len) {
		return &bloomFilter{}, 0, nil // outside the file
	}
	if err := acct.reserve(n, "bloom filter"); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errBloomRefused, err)
	}
	defer acct.release(n)
	buf := make([]byte, n)
	if _, err := f.src.src.ReadAt(buf, r.off); err != nil {
		return nil, n, fmt.Errorf("%s: reading the bloom filter of column %q in row group %d (bytes %d-%d): %w", f.name, r.leaf.name, r.g, r.off, r.off+n, err)
	}
	bf, need, err := parseBloomFilter(buf, r.len)
	if errors.Is(err, errShortBloom) && r.len == 0 && need <= bloomMaxBytes+bloomHeaderGuess && r.off+need <= f.src.Size() {
		// No length in the footer: the header said how much to read.
		if err := acct.reserve(need, "bloom filter"); err != nil {
			return nil, n, fmt.Errorf("%w: %w", errBloomRefused, err)
		}
		defer acct.release(need)
		buf = make([]byte, need)
		if _, err := f.src.src.ReadAt(buf, r.off); err != nil {
			return nil, n + need, fmt.Errorf("%s: reading the bloom filter of column %q in row group %d (bytes %d-%d): %w", f.name, r.leaf.name, r.g, r.off, r.off+need, err)
		}
		n += need
		bf, _, err = parseBloomFilter(buf, 0)
	}
	if err != nil {
		return &bloomFilter{}, n, nil
	}
	return bf, n, nil
}

// add records r's filter; an empty one (malformed) is ignored.
func (b *BloomFilters) add(r bloomRef, bf *bloomFilter) {
	if len(bf.orEmpty()) == 0 {
		b.Ignored++
		return
	}
	d := r.leaf
	b.groups[r.g][d.name] = bloomLeaf{f: bf, phys: d.phys, typ: d.typ, decode: d.bloomDecode}
}

func (f *bloomFilter) orEmpty() []uint32 {
	if f == nil {
		return nil
	}
	return f.words
}

func bloomCacheKey(r bloomRef) string {
	return fmt.Sprintf("parquet-bloom/%d/%d", r.g, r.leaf.col)
}

func cachedBloom(cache scanner.MetadataCache, r bloomRef) (*bloomFilter, bool) {
	if cache == nil {
		return nil, false
	}
	v, ok := cache.CachedMetadata(bloomCacheKey(r))
	if !ok {
		return nil, false
	}
	bf, ok := v.(*bloomFilter)
	return bf, ok
}

// bloomDecoder is the PLAIN decoder of a leaf's values, whatever its
// writer (bloom filters do not depend on the sort order that makes old
// writers' statistics untrusted).
func bloomDecoder(d *schema.Column, typ arrow.DataType) decoder {
	return decoderFor(d, typ)
}

// GroupBlooms is BloomFilters for the server's pruning: each group's
// membership test.
func (f *File) GroupBlooms(ctx context.Context, groups []int, columns []string) (func(g int) filter.Membership, error) {
	return f.GroupBloomsWithin(ctx, nil, groups, columns)
}

// GroupBloomsWithin is GroupBlooms charging the bytes read to budget (see
// BloomFiltersWithin).
func (f *File) GroupBloomsWithin(ctx context.Context, budget scanner.Reserver, groups []int, columns []string) (func(g int) filter.Membership, error) {
	bf, err := f.BloomFiltersWithin(ctx, budget, groups, columns)
	if err != nil {
		return nil, err
	}
	return bf.Group, nil
}
