package parquet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/scand/scand/scanner"
)

// The native read path: flat PLAIN or dictionary-encoded columns decoded
// without pqarrow, and, for PLAIN fixed-width values, without copying.
//
// A PLAIN page of INT32, INT64, FLOAT or DOUBLE values with no nulls holds
// the values exactly as an Arrow array lays them out. So when a batch's
// rows lie in one such page, the batch's column is a slice of the page: of
// the IO scheduler's prefetched buffer itself when the column chunk is
// uncompressed (scanner.Lender), or of the decompressed page otherwise.
// With the zero-copy send path, those bytes then go from the buffer that
// storage filled to the socket with no copy in user space but HTTP/2's.
// pqarrow instead copies every byte three times on the way (scheduler
// buffer to its stream buffer, to its page buffer, to the array) and
// allocates, and clears, an array for each batch.
//
// Batches are cut at page boundaries where that keeps them within half to
// all of the requested batch size, so that most batches reference a
// single page per column. A batch that spans pages, or a page with nulls
// (PLAIN stores only the non-null values; Arrow spaces them out), is
// copied into a fresh array, once. Strings (BYTE_ARRAY) are always copied,
// once: Parquet interleaves lengths with bytes where Arrow keeps offsets
// apart.
//
// Dictionary-encoded pages are gathered from the chunk's dictionary, once
// (indices.go decodes their indices, a batch at a time: a few bytes of RLE
// may encode 2^31 of them).
//
// Booleans, decimals, INT96 and FIXED_LEN_BYTE_ARRAY columns, and pages
// in the DELTA and BYTE_STREAM_SPLIT encodings, are read too
// (native_types.go, native_decode.go and the files they name). Everything
// else (nested columns with a leaf of such a type, or read in row ranges
// when they hold lists: native_nested.go, small integers and other types that
// convert, legacy LZ4, encrypted chunks) goes through pqarrow, for the whole split or for one row group whose pages surprise
// the native reader before it has emitted anything of that group.

// nativeColumn is one output column the native path decodes.
type nativeColumn struct {
	leaf   int
	typ    arrow.DataType
	kind   nativeKind
	phys   parquet.Type
	width  int // output bytes per value; 0 for BYTE_ARRAY and BOOLEAN
	stored int // stored bytes per value (PLAIN); 0 for BYTE_ARRAY and BOOLEAN
	// conv rewrites stored values as Arrow's, nil when they are the same
	// bits (native_types.go).
	conv   func(dst, src []byte)
	maxDef int16
	// pqTop, for a column pqarrow reads (leaf < 0), is its top-level
	// field in the manifest (native_mixed.go).
	pqTop int
	// levels: a leaf of a nested column, whose definition levels are
	// decoded in full (native_nested.go).
	levels bool
	// repeated: a leaf under a list, whose rows are its element slots
	// once a page is loaded, and whose levels are walked apart
	// (native_nested.go); elemDef is the definition level at and above
	// which a level is an element slot (LevelInfo.RepeatedAncestorDefLevel).
	repeated bool
	elemDef  int16
	maxRep   int16
	// nested, for a struct column, is its tree, and leaves its leaves'
	// plans (leaf is then the first one's column).
	nested *nestedField
	leaves []nativeColumn
}

// nativeColumns returns the columns of impl when the native path can read
// at least one of them (the others marked for pqarrow: native_mixed.go),
// or nil.
func (f *File) nativeColumns(impl *projection) []nativeColumn {
	if impl.rowsOnly || len(impl.outLeaves) != len(impl.types) {
		return nil
	}
	descr := f.pf.MetaData().Schema
	cols := make([]nativeColumn, len(impl.types))
	ok := make([]bool, len(cols))
	for i, leaf := range impl.outLeaves {
		if leaf < 0 {
			cols[i], ok[i] = f.nestedColumn(impl, i)
			continue
		}
		c := descr.Column(leaf)
		if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 {
			continue
		}
		col, native := nativePlan(c, impl.types[i])
		if !native {
			continue
		}
		col.leaf, col.phys = leaf, c.PhysicalType()
		cols[i], ok[i] = col, true
	}
	return mixedPlan(impl, cols, ok)
}

// nativeWidth reports whether a Parquet column of physical type phys and
// logical type lt decodes to Arrow type t bit for bit, and the value width
// (0 for BYTE_ARRAY, whose values become offsets and data).
func nativeWidth(phys parquet.Type, lt schema.LogicalType, t arrow.DataType) (int, bool) {
	switch phys {
	case parquet.Types.Int32:
		switch t.ID() {
		case arrow.INT32, arrow.UINT32, arrow.DATE32:
			return 4, true
		case arrow.TIME32:
			l, ok := lt.(timeUnited)
			return 4, ok && l.TimeUnit() == schema.TimeUnitMillis && t.(*arrow.Time32Type).Unit == arrow.Millisecond
		}
	case parquet.Types.Int64:
		switch t.ID() {
		case arrow.INT64, arrow.UINT64, arrow.DURATION:
			// A duration is an INT64 column the stored Arrow schema
			// calls duration (pyarrow, pandas timedelta).
			return 8, true
		case arrow.TIMESTAMP:
			l, ok := lt.(timeUnited)
			return 8, ok && sameUnit(l.TimeUnit(), t.(*arrow.TimestampType).Unit)
		case arrow.TIME64:
			l, ok := lt.(timeUnited)
			return 8, ok && sameUnit(l.TimeUnit(), t.(*arrow.Time64Type).Unit)
		}
	case parquet.Types.Float:
		return 4, t.ID() == arrow.FLOAT32
	case parquet.Types.Double:
		return 8, t.ID() == arrow.FLOAT64
	case parquet.Types.ByteArray:
		return 0, t.ID() == arrow.STRING || t.ID() == arrow.BINARY
	}
	return 0, false
}

// timeUnited is a TIME or TIMESTAMP logical type.
type timeUnited interface{ TimeUnit() schema.TimeUnitType }

func sameUnit(p schema.TimeUnitType, a arrow.TimeUnit) bool {
	switch p {
	case schema.TimeUnitMillis:
		return a == arrow.Millisecond
	case schema.TimeUnitMicros:
		return a == arrow.Microsecond
	case schema.TimeUnitNanos:
		return a == arrow.Nanosecond
	}
	return false
}

// nativeGroup reports whether the native path can read row group g's
// chunks of cols, from their metadata.
func (f *File) nativeGroup(g int, cols []nativeColumn) bool {
	rg := f.pf.MetaData().RowGroup(g)
	for _, c := range leafPlans(cols) {
		cc, err := rg.ColumnChunk(c.leaf)
		if err != nil || cc.CryptoMetadata() != nil {
			return false
		}
		for _, e := range cc.Encodings() {
			switch e {
			case parquet.Encodings.Plain, parquet.Encodings.RLE, parquet.Encodings.BitPacked,
				parquet.Encodings.PlainDict, parquet.Encodings.RLEDict,
				// checked page by page (decodable)
				parquet.Encodings.DeltaBinaryPacked, parquet.Encodings.DeltaLengthByteArray,
				parquet.Encodings.DeltaByteArray, parquet.Encodings.ByteStreamSplit:
			default:
				return false
			}
		}
		switch cc.Compression() {
		case compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Gzip,
			compress.Codecs.Brotli, compress.Codecs.Zstd, compress.Codecs.Lz4Raw:
		default:
			return false
		}
	}
	return true
}

// readNative reads the planned row groups through the native path,
// falling back to pqarrow per row group (read whole) where it must.
func (f *File) readNative(ctx context.Context, p *scanner.Projection, impl *projection, cols []nativeColumn, plans []groupPlan, batchRows int64, acct *account, emit func(arrow.RecordBatch) error) error {
	for i := range plans {
		if err := ctx.Err(); err != nil {
			return err
		}
		g := plans[i].g
		if !f.nativeGroup(g, cols) {
			if err := f.readPQ(ctx, p, impl, []int{g}, acct, emit); err != nil {
				return err
			}
			continue
		}
		if err := f.readGroup(ctx, p, impl, cols, &plans[i], batchRows, acct, emit); err != nil {
			return err
		}
	}
	return nil
}

// readGroup reads row group g natively, or with pqarrow from the chunks
// the native reader fetched when its pages need pqarrow.
func (f *File) readGroup(ctx context.Context, p *scanner.Projection, impl *projection, cols []nativeColumn, plan *groupPlan, batchRows int64, acct *account, emit func(arrow.RecordBatch) error) error {
	g := plan.g
	if plan.rows != nil {
		cols = demoteRepeated(impl, cols)
	}
	gr, err := f.openGroup(plan, cols, acct)
	if gr != nil {
		// Deferred: a panic contained by scanner.Recover must still give
		// the lent chunks, and their budget, back.
		defer gr.release()
	}
	switch {
	case errors.Is(err, errNotNative):
		// pqarrow reads the chunks already fetched from them.
		f.src.held = gr.chunks
		defer func() { f.src.held = nil }()
		return f.readPQ(ctx, p, impl, []int{g}, acct, emit)
	case err != nil:
		return err
	}
	f.nativeGroups++
	ranges := plan.rows
	if ranges == nil {
		ranges = rowRanges{{0, gr.rows}}
	}
	if gr.mixed(cols) {
		done, err := gr.openPQColumns(ctx, impl, cols)
		if err == nil {
			err = gr.emitRanges(ctx, p.Schema, batchRows, ranges, emit)
		}
		if derr := done(); err == nil && derr != nil {
			err = fmt.Errorf("%s: decoding row groups: %w", f.name, derr)
		}
		return err
	}
	return gr.emitRanges(ctx, p.Schema, batchRows, ranges, emit)
}

// errNotNative: the row group's pages need pqarrow. Nothing of the group
// has been emitted when it is returned.
var errNotNative = errors.New("parquet: row group needs the general reader")

// chunkRef counts the references to one column chunk's bytes: the group
// reader's own, and one per Arrow buffer that points into them. The last
// one gives the bytes back to the source that lent them. It is the
// memory.Allocator of those buffers, so that releasing a buffer is what
// drops its reference.
type chunkRef struct {
	refs    atomic.Int64
	release func()
}

// newChunkRef returns a chunkRef holding the group reader's reference;
// release runs when the last reference is dropped.
func newChunkRef(release func()) *chunkRef {
	c := &chunkRef{release: release}
	c.refs.Store(1)
	return c
}

func (c *chunkRef) Allocate(int) []byte           { panic("parquet: chunkRef.Allocate") }
func (c *chunkRef) Reallocate(int, []byte) []byte { panic("parquet: chunkRef.Reallocate") }
func (c *chunkRef) Free([]byte)                   { c.drop() }

func (c *chunkRef) drop() {
	if c.refs.Add(-1) == 0 && c.release != nil {
		c.release()
	}
}

// buffer wraps b, which lies in the chunk, as an Arrow buffer holding a
// reference to the chunk.
func (c *chunkRef) buffer(b []byte) *memory.Buffer {
	if c == nil {
		return memory.NewBufferBytes(b) // garbage collected
	}
	c.refs.Add(1)
	return memory.NewBufferWithAllocator(b, c)
}

// nativePage is one data page of a column chunk, as found in its header;
// load decodes its levels and locates its values.
type nativePage struct {
	hdr    pageHeader
	body   []byte // as stored (maybe compressed)
	rows   int
	first  int64     // its first row, within the row group
	ref    *chunkRef // the fetched bytes body lies in
	loaded bool
	nulls  int
	valid  []byte    // validity bits, nil when the page has no nulls
	defs   []int16   // definition levels of a nested leaf (levels)
	reps   []int16   // repetition levels of a repeated leaf
	levels int       // a repeated leaf's levels (rows counts its element slots)
	values []byte    // PLAIN values of the non-null rows
	owner  *chunkRef // values' memory (the chunk's, or own)
	dict   bool      // dictionary encoded: ids decodes the values' indices
	// ids decodes the page's dictionary indices a batch at a time into
	// win, the indices of values [winStart, winStart+len(win)); next is
	// the first value not decoded yet.
	ids      *indexDecoder
	win      []int32
	winStart int
	next     int
	// own holds the decompressed body, and gives its budget back once the
	// page and every array pointing into it are done; charged is the
	// budget of valid and win.
	own     *chunkRef
	charged int64
}

// free forgets the page's memory and gives its budget back (the
// decompressed body's once the arrays pointing into it are released).
func (p *nativePage) free(acct *account) {
	acct.release(p.charged)
	if p.own != nil {
		p.own.drop()
	}
	*p = nativePage{}
}

// nativeDict is a column chunk's dictionary: PLAIN values, fixed width
// (values) or byte arrays (starts and lengths into body).
type nativeDict struct {
	hdr         pageHeader
	body        []byte
	loaded      bool
	n           int
	values      []byte
	starts, lns []int32
	own         *chunkRef // the decompressed body, as nativePage.own
	charged     int64     // the budget of starts and lns
	// arr is the entries as an Arrow string or binary array, once a
	// batch returned the column as a dictionary (native_dict.go).
	arr *array.Data
}

func (d *nativeDict) free(acct *account) {
	acct.release(d.charged)
	if d.arr != nil {
		d.arr.Release()
	}
	if d.own != nil {
		d.own.drop()
	}
	*d = nativeDict{}
}

// loadDict decompresses and indexes the chunk's dictionary page.
func (c *columnCursor) loadDict() (*nativeDict, error) {
	d := c.dict
	if d.loaded {
		return d, nil
	}
	body := d.body
	if c.codec != nil {
		out, own, err := c.decompress(body, int(d.hdr.uncompressedSize), "dictionary page")
		if err != nil {
			return nil, err
		}
		body, d.own = out, own
	}
	d.n = int(d.hdr.numValues)
	if w := c.col.stored; w > 0 {
		if len(body)/w < d.n {
			return nil, corrupt("dictionary page holds %d bytes for %d values of %d bytes", len(body), d.n, w)
		}
		d.values = body[:d.n*w]
		if err := c.convertDict(d); err != nil {
			return nil, err
		}
	} else {
		if d.n > len(body)/4 {
			return nil, corrupt("dictionary page of %d bytes claims %d byte arrays", len(body), d.n)
		}
		if err := c.acct.reserve(8*int64(d.n), "dictionary index of "+c.name); err != nil {
			return nil, err
		}
		d.charged = 8 * int64(d.n)
		d.starts, d.lns = make([]int32, d.n), make([]int32, d.n)
		pos := 0
		for i := range d.n {
			if len(body)-pos < 4 {
				return nil, corrupt("dictionary byte array %d runs past its page", i)
			}
			ln := int(binary.LittleEndian.Uint32(body[pos:]))
			if ln < 0 || ln > len(body)-pos-4 {
				return nil, corrupt("dictionary byte array of %d bytes runs past its page", ln)
			}
			d.starts[i], d.lns[i] = int32(pos+4), int32(ln)
			pos += 4 + ln
		}
		d.values = body
	}
	d.loaded = true
	return d, nil
}

// columnCursor walks one column's pages as batches consume its rows.
type columnCursor struct {
	col   nativeColumn
	name  string
	codec compress.Codec // nil when uncompressed
	acct  *account       // charged for decompressed pages and decoder buffers
	refs  []*chunkRef    // the fetched pieces of the chunk (readPieces)
	dict  *nativeDict    // the chunk's dictionary page, if it has one
	// asDict: batches are dictionary arrays where they can be
	// (native_dict.go).
	asDict bool
	// spareWin is a consumed page's window of dictionary indices, for
	// the next page to decode into.
	spareWin []int32
	pages    []nativePage
	pi       int // current page
	row      int // rows of the current page consumed
	pos      int // bytes of the current page's values consumed (BYTE_ARRAY)
	// lv walks a repeated leaf's levels ahead of the values (native_nested.go).
	lv levelWalk
	// defScratch is scratch for the levels of the structs this leaf gives
	// the validity of (structValidity). It is the leaf's, not the group
	// reader's, so that nested columns decode at once (native_parallel.go):
	// a leaf belongs to one output column.
	defScratch []int16
}

// groupReader decodes one row group's projected columns.
type groupReader struct {
	f      *File
	g      int
	rows   int64
	cols   []*columnCursor
	chunks []heldChunk
	mem    memory.Allocator
	acct   *account
	// pq has, for each output column pqarrow reads, its reader (nil for
	// the native ones); nil when every column is native.
	pq    []*pqColumn
	pqRow int64 // the next row of the group the pq readers give
	// plan is the output columns' plans.
	plan []nativeColumn
}

// openGroup fetches row group plan.g's chunks of cols, or the pieces of
// them the plan selects (borrowed from the source when it lends them),
// and reads their page headers. It returns errNotNative when a page needs
// pqarrow, and other errors from the store; the group reader it returns
// holds the chunks fetched so far in every case, and the caller releases
// it.
func (f *File) openGroup(plan *groupPlan, cols []nativeColumn, acct *account) (*groupReader, error) {
	g := plan.g
	rg := f.pf.MetaData().RowGroup(g)
	gr := &groupReader{f: f, g: g, rows: rg.NumRows(), mem: f.mem, acct: acct, plan: cols}
	if f.mem == arrayBuffers {
		// Everything the native path allocates is written in full
		// before it is read (values under nulls are cleared one by one),
		// so it needs no cleared memory.
		gr.mem = pageBuffers
	}
	for _, c := range leafPlans(cols) {
		cc, err := rg.ColumnChunk(c.leaf)
		if err != nil {
			return gr, errNotNative
		}
		off, n := cc.DataPageOffset(), cc.TotalCompressedSize()
		if d := cc.DictionaryPageOffset(); cc.HasDictionaryPage() && d > 0 && d < off {
			off = d
		}
		if off < 0 || n <= 0 || off+n > f.src.Size() {
			return gr, errNotNative
		}
		cur := &columnCursor{col: c, name: cc.PathInSchema().String(), acct: acct, asDict: f.dictLeaves[c.leaf]}
		gr.cols = append(gr.cols, cur)
		pieces := plan.pieces[c.leaf]
		if pieces == nil {
			pieces = []chunkPiece{{off: off, n: n, first: 0, end: gr.rows}}
		}
		if cc.Compression() != compress.Codecs.Uncompressed {
			if cur.codec, err = compress.GetCodec(cc.Compression()); err != nil {
				return gr, errNotNative
			}
		}
		declared := chunkSizes{uncompressed: cc.TotalUncompressedSize(), rows: rg.NumRows()}
		if err := gr.readPieces(cur, pieces, declared); err != nil {
			return gr, err
		}
	}
	return gr, nil
}

// readPieces fetches a column's pieces and reads their page headers. A
// piece the page index placed whose pages contradict it is errNotNative:
// the group is then read whole, as if it had no index.
func (gr *groupReader) readPieces(cur *columnCursor, pieces []chunkPiece, declared chunkSizes) error {
	var before int64 // uncompressed bytes of the pages read so far
	for _, pc := range pieces {
		data, ref, err := gr.f.fetchPiece(pc.off, pc.n)
		if err != nil {
			return err
		}
		cur.refs = append(cur.refs, ref)
		gr.chunks = append(gr.chunks, heldChunk{off: pc.off, data: data})
		rows, err := cur.readHeaders(data, ref, pc.first, declared, &before)
		switch {
		case err == nil && rows != pc.end-pc.first && !pc.dictionary:
			err = errNotNative // the offset index's rows are not the pages'
		case err == nil && pc.dictionary && rows != 0:
			err = errNotNative // data pages before the index's first
		case errors.Is(err, errOverDeclared) && !pc.partOfChunk:
			return fmt.Errorf("%s: row group %d column %s: %w", gr.f.name, gr.g, cur.name, err)
		}
		if err != nil {
			return errNotNative
		}
	}
	return nil
}

// fetchPiece fetches n bytes at off: borrowed from the source when it
// lends them, else read into a pooled buffer that goes back when the last
// array pointing into it is released. errNotNative when memory is short
// (pqarrow then streams the group through page-sized buffers) or ReadAt
// fails (pqarrow reads it again and reports).
func (f *File) fetchPiece(off, n int64) ([]byte, *chunkRef, error) {
	if b, ref, ok := f.reused(off, n); ok {
		return b, ref, nil // decoded by late materialization already
	}
	if lender, ok := f.src.src.(scanner.Lender); ok {
		b, release, ok, err := lender.Borrow(off, n)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return b, newChunkRef(release), nil
		}
		if !isMapped(f.src.src) {
			// A copy of the whole chunk would sit outside the budget.
			return nil, nil, errNotNative
		}
	}
	buf := pageBuffers.Allocate(int(n))
	if _, err := f.src.src.ReadAt(buf, off); err != nil {
		pageBuffers.Free(buf)
		return nil, nil, errNotNative
	}
	return buf, newChunkRef(func() { pageBuffers.Free(buf) }), nil
}

// isMapped reports whether src is a memory-mapped file, as its storage
// declares (storage.Capabilities.Mapped).
func isMapped(src scanner.Source) bool { return scanner.CapabilitiesOf(src).Mapped }

// chunkSizes is what the footer declares for a column chunk beyond its
// bytes (whose length is its total_compressed_size): its uncompressed size
// and its row group's rows. Every page must fit in them.
type chunkSizes struct {
	uncompressed, rows int64
}

// errOverDeclared marks a page that claims more than its column chunk
// declares: a corrupt (or hostile) file, not one for pqarrow to try.
var errOverDeclared = fmt.Errorf("page claims more than its column chunk declares: %w", scanner.ErrCorrupt)

func overDeclared(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), errOverDeclared)
}

// readHeaders splits bytes of a column chunk (the whole chunk, or a piece
// of it starting at row first) into its data pages, and checks that they
// are PLAIN pages the native reader decodes; it returns their rows.
// before is the uncompressed size of the chunk's pages read before. A page
// whose sizes or value count exceed what the footer declares for the chunk
// is an errOverDeclared error; other surprises are errNotNative.
func (c *columnCursor) readHeaders(chunk []byte, ref *chunkRef, first int64, declared chunkSizes, before *int64) (int64, error) {
	var total int64
	for pos := 0; pos < len(chunk); {
		h, n, err := parsePageHeader(chunk[pos:])
		if err != nil {
			return 0, err
		}
		pos += n
		if err := checkDeclared(&h, pos, len(chunk), *before, c.declaredFor(declared)); err != nil {
			return 0, err
		}
		*before += int64(h.uncompressedSize)
		body := chunk[pos : pos+int(h.compressedSize)]
		pos += int(h.compressedSize)
		switch h.typ {
		case pageTypeIndexPage:
			continue
		case pageTypeDictionaryPage:
			if c.dict != nil || len(c.pages) > 0 || h.numValues < 0 ||
				(h.encoding != int32(parquet.Encodings.Plain) && h.encoding != int32(parquet.Encodings.PlainDict)) {
				return 0, errNotNative
			}
			if err := c.checkDictionary(&h); err != nil {
				return 0, err
			}
			c.dict = &nativeDict{hdr: h, body: body}
			continue
		case pageTypeDataPage, pageTypeDataPageV2:
		default:
			return 0, errNotNative
		}
		p, err := c.dataPage(h, body)
		if err != nil {
			return 0, err
		}
		p.ref = ref
		if c.col.repeated {
			// Its rows are known once its levels are decoded; only whole
			// chunks are read (native_nested.go).
			p.levels = p.rows
			c.pages = append(c.pages, p)
			continue
		}
		p.first = first + total
		total += int64(p.rows)
		if total > declared.rows {
			return 0, errNotNative
		}
		c.pages = append(c.pages, p)
	}
	if c.col.repeated {
		if first != 0 {
			return 0, errNotNative
		}
		return declared.rows, nil
	}
	return total, nil
}

// checkDeclared checks a page header found at byte pos of a chunk of
// chunkLen bytes against the chunk's declared sizes; before is the
// uncompressed size of the chunk's earlier pages. A page that runs past
// the chunk's bytes is left to pqarrow (errNotNative).
func checkDeclared(h *pageHeader, pos, chunkLen int, before int64, declared chunkSizes) error {
	switch {
	case int(h.compressedSize) > chunkLen-pos:
		// Not necessarily corrupt: old parquet-mr left the dictionary
		// page header out of total_compressed_size (PARQUET-816), which
		// pqarrow reads past; its page limits still bound the page.
		return errNotNative
	case before+int64(h.uncompressedSize) > declared.uncompressed:
		return overDeclared("page of %d uncompressed bytes after %d in a column chunk of %d (total_uncompressed_size)",
			h.uncompressedSize, before, declared.uncompressed)
	case h.typ != pageTypeDictionaryPage && int64(h.numValues) > declared.rows:
		return overDeclared("page of %d values in a row group of %d rows", h.numValues, declared.rows)
	}
	return nil
}

// checkDictionary checks a dictionary page's value count against its
// uncompressed size: a value takes at least its width, a byte array its
// 4-byte length.
func (c *columnCursor) checkDictionary(h *pageHeader) error {
	w := int64(4)
	if c.col.stored > 0 {
		w = int64(c.col.stored)
	}
	if int64(h.numValues)*w > int64(h.uncompressedSize) {
		return overDeclared("dictionary page of %d uncompressed bytes claims %d values", h.uncompressedSize, h.numValues)
	}
	return nil
}

// dataPage makes the nativePage of a data page header, or says why the
// native reader cannot decode it.
func (c *columnCursor) dataPage(h pageHeader, body []byte) (nativePage, error) {
	p := nativePage{hdr: h, body: body, rows: int(h.numValues)}
	switch {
	case !h.hasData:
		return p, errNotNative
	case h.encoding == int32(parquet.Encodings.Plain):
	case (h.encoding == int32(parquet.Encodings.RLEDict) || h.encoding == int32(parquet.Encodings.PlainDict)) && c.dict != nil && c.col.kind != kindBool:
		p.dict = true
	case c.decodable(&h):
	default:
		return p, errNotNative
	}
	rep := c.col.repeated
	if h.typ == pageTypeDataPage {
		if (c.col.maxDef > 0 && h.defEncoding != int32(parquet.Encodings.RLE)) ||
			(rep && h.repEncoding != int32(parquet.Encodings.RLE)) {
			return p, errNotNative
		}
	} else {
		if (!rep && (h.repLevelsLen != 0 || h.numRows != h.numValues)) || h.defLevelsLen < 0 || h.repLevelsLen < 0 ||
			int64(h.defLevelsLen)+int64(h.repLevelsLen) > int64(len(body)) || (c.col.maxDef == 0 && h.defLevelsLen != 0) {
			return p, errNotNative
		}
	}
	if p.rows < 0 {
		return p, errNotNative
	}
	return p, nil
}

// release drops the group reader's references to its chunks, and frees
// its pages and dictionaries with their budget.
func (gr *groupReader) release() {
	gr.chunks = nil
	for _, c := range gr.cols {
		putIndexWindow(c.spareWin)
		c.spareWin = nil
		for i := range c.pages {
			putIndexWindow(c.pages[i].win)
			c.pages[i].free(c.acct)
		}
		if c.dict != nil {
			c.dict.free(c.acct)
		}
		for _, r := range c.refs {
			r.drop()
		}
		c.refs = nil
		c.acct.release(c.lv.charged)
		c.lv = levelWalk{}
	}
}

// emitRanges emits the rows of ranges of the row group, as batches of at
// most batchRows rows, every column cut to exactly those rows.
func (gr *groupReader) emitRanges(ctx context.Context, sc *arrow.Schema, batchRows int64, ranges rowRanges, emit func(arrow.RecordBatch) error) error {
	bounds := gr.pageBounds()
	for _, rr := range ranges {
		for _, c := range gr.cols {
			if c.col.repeated && rr.start == 0 {
				continue // read whole (demoteRepeated)
			}
			if err := c.seek(rr.start); err != nil {
				return fmt.Errorf("%s: row group %d column %s: %w", gr.f.name, gr.g, c.name, err)
			}
		}
		if err := gr.seekPQ(rr.start, batchRows); err != nil {
			return fmt.Errorf("%s: row group %d: %w", gr.f.name, gr.g, err)
		}
		for r0 := rr.start; r0 < rr.end; {
			if err := ctx.Err(); err != nil {
				return err
			}
			r1 := cutBatch(bounds, r0, batchRows, rr.end)
			rec, err := gr.batch(sc, int(r1-r0))
			if err != nil {
				return fmt.Errorf("%s: row group %d: %w", gr.f.name, gr.g, err)
			}
			if err := emit(rec); err != nil {
				return err
			}
			r0 = r1
		}
	}
	return nil
}

// pageBounds lists the rows, within the group, at which some column's
// page ends, in order.
func (gr *groupReader) pageBounds() []int64 {
	var out []int64
	for _, c := range gr.cols {
		if c.col.repeated {
			continue // its pages' rows are not known before they are decoded
		}
		for _, p := range c.pages {
			out = append(out, p.first+int64(p.rows))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// cutBatch chooses where the batch starting at r0 ends: at the last page
// boundary that keeps it between half and all of batchRows, else at
// batchRows.
func cutBatch(bounds []int64, r0, batchRows, rows int64) int64 {
	end := min(r0+batchRows, rows)
	if end == rows {
		return end
	}
	best := end
	for _, b := range bounds {
		if b > end {
			break
		}
		if b > r0+batchRows/2 {
			best = b
		}
	}
	return best
}

// batch decodes the next n rows of every column.
func (gr *groupReader) batch(sc *arrow.Schema, n int) (rec arrow.RecordBatch, err error) {
	if gr.pq == nil && worthParallel(len(gr.plan), len(gr.cols), n) {
		return gr.batchParallel(sc, n) // native_parallel.go
	}
	arrs := make([]arrow.Array, 0, len(gr.cols))
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	for i, ci := 0, 0; i < sc.NumFields(); i++ {
		if gr.pq != nil && gr.pq[i] != nil {
			a, err := gr.pq[i].take(gr, n)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", sc.Field(i).Name, err)
			}
			arrs = append(arrs, a)
			continue
		}
		if nc := gr.plan[i]; nc.nested != nil {
			curs := gr.cols[ci : ci+len(nc.leaves)]
			ci += len(nc.leaves)
			d, err := gr.takeNestedColumn(&nc, curs, n)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", sc.Field(i).Name, err)
			}
			arrs = append(arrs, array.MakeFromData(d))
			d.Release()
			continue
		}
		c := gr.cols[ci]
		ci++
		d, err := c.take(n, gr.mem)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		arrs = append(arrs, array.MakeFromData(d))
		d.Release()
	}
	gr.pqRow += int64(n)
	return array.NewRecordBatch(withColumnTypes(sc, arrs), arrs, int64(n)), nil
}

// corrupt reports a page the native reader cannot decode after it has
// emitted part of the row group.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), scanner.ErrCorrupt)
}

// load decompresses page p if needed and decodes its definition levels.
func (c *columnCursor) load(p *nativePage) error {
	if p.loaded {
		return nil
	}
	h := &p.hdr
	body := p.body
	owner := p.ref
	var levels, repLevels []byte
	if h.typ == pageTypeDataPageV2 {
		repLevels = body[:h.repLevelsLen]
		levels = body[h.repLevelsLen : h.repLevelsLen+h.defLevelsLen]
		body = body[h.repLevelsLen+h.defLevelsLen:]
		if c.codec != nil && h.isCompressed && len(body) > 0 {
			want := int(h.uncompressedSize) - int(h.defLevelsLen) - int(h.repLevelsLen)
			out, own, err := c.decompress(body, want, "data page")
			if err != nil {
				return err
			}
			body, owner, p.own = out, own, own
		}
	} else {
		if c.codec != nil {
			out, own, err := c.decompress(body, int(h.uncompressedSize), "data page")
			if err != nil {
				return err
			}
			body, owner, p.own = out, own, own
		}
		var err error
		if c.col.repeated {
			if repLevels, body, err = splitLevels(body, "repetition"); err != nil {
				return err
			}
		}
		if c.col.maxDef > 0 {
			if levels, body, err = splitLevels(body, "definition"); err != nil {
				return err
			}
		}
	}
	if c.col.repeated {
		if err := c.loadRepeated(p, repLevels, levels); err != nil {
			return err
		}
	} else if c.col.levels && c.col.maxDef > 0 {
		if err := c.loadLevels(p, levels); err != nil {
			return err
		}
	} else if c.col.maxDef > 0 {
		nulls, err := countNulls(levels, p.rows)
		if err != nil {
			return err
		}
		if nulls > 0 {
			n := bitutil.BytesForBits(int64(p.rows))
			if err := c.charge(p, n, "validity bitmap"); err != nil {
				return err
			}
			p.valid = make([]byte, n)
			if _, err := decodeValidity(levels, p.rows, p.valid, 0); err != nil {
				return err
			}
		}
		p.nulls = nulls
	}
	vals := p.rows - p.nulls
	if p.dict {
		d, err := c.loadDict()
		if err != nil {
			return err
		}
		if vals > 0 {
			if len(body) < 1 {
				return corrupt("dictionary-encoded page without its bit width")
			}
			if p.ids, err = newIndexDecoder(body[1:], int(body[0]), d.n); err != nil {
				return err
			}
		}
		p.loaded = true
		return nil
	}
	if h.encoding != int32(parquet.Encodings.Plain) {
		out, own, err := c.decodeValues(p, body, vals)
		if err != nil {
			return err
		}
		body, owner = out, own
	}
	switch {
	case c.col.kind == kindBool:
		if int64(len(body)) < bitutil.BytesForBits(int64(vals)) {
			return corrupt("page holds %d bytes for %d booleans", len(body), vals)
		}
	case c.col.stored > 0:
		if len(body)/c.col.stored < vals {
			return corrupt("page holds %d bytes for %d values of %d bytes", len(body), vals, c.col.stored)
		}
		body = body[:vals*c.col.stored]
	}
	// BYTE_ARRAY lengths are checked as the values are copied: a pass
	// over them here would cost as much as the copy.
	p.values, p.owner, p.loaded = body, owner, true
	return nil
}

// decompress inflates a page body of want bytes (checked against the
// chunk's declared size by readHeaders) into a fresh buffer, charged to
// the budget first. The buffer comes from pageBuffers; the returned
// reference gives it and its budget back once the page and the arrays
// that slice it are done with it.
func (c *columnCursor) decompress(src []byte, want int, what string) ([]byte, *chunkRef, error) {
	if want < 0 || want > math.MaxInt32 {
		return nil, nil, corrupt("%s of %d bytes uncompressed", what, want)
	}
	if err := c.acct.reserve(int64(want), what+" of "+c.name); err != nil {
		return nil, nil, err
	}
	// Pooled: the codec writes every byte of dst (the length is checked
	// below), so a reused buffer needs no clearing.
	acct := c.acct
	dst := pageBuffers.Allocate(want)
	own := newChunkRef(func() {
		pageBuffers.Free(dst)
		acct.release(int64(want))
	})
	out, err := compress.Decode(c.codec, dst, src)
	if err != nil {
		own.drop()
		return nil, nil, corrupt("decompressing %s of %d bytes: %v", what, want, err)
	}
	if len(out) != want {
		own.drop()
		return nil, nil, corrupt("%s decompressed to %d bytes, header says %d", what, len(out), want)
	}
	return out, own, nil
}

// indices returns the dictionary indices of values [first, first+n) of
// page p: the ones decoded last, or the next n, decoded now into the
// page's window (charged as it grows).
func (c *columnCursor) indices(p *nativePage, first, n int) ([]int32, error) {
	if first >= p.winStart && first+n <= p.winStart+len(p.win) {
		return p.win[first-p.winStart : first-p.winStart+n], nil
	}
	if n == 0 {
		return nil, nil
	}
	if first != p.next || p.ids == nil {
		return nil, corrupt("dictionary indices of values %d..%d asked after %d", first, first+n, p.next)
	}
	if cap(p.win) < n {
		win := c.spareWin
		if cap(win) < n {
			win = getIndexWindow(n)
		}
		if err := c.charge(p, 4*int64(cap(win)-cap(p.win)), "dictionary indices"); err != nil {
			return nil, err
		}
		p.win, c.spareWin = win, nil
	}
	p.win = p.win[:n]
	if err := p.ids.next(p.win); err != nil {
		return nil, err
	}
	p.winStart, p.next = first, first+n
	return p.win, nil
}

// indexWindows keeps the dictionary-index windows of released group
// readers for the next ones. A window is scratch (its indices are copied
// or gathered out of it, never lent) as long as a batch, 256 KiB at 64 Ki
// rows, and a new one is zeroed by the runtime: 5 % of the server's CPU
// on bench/taxi q3 (18 files, every column chunk a new window). A
// sync.Pool lost them to the collections between two files; this list
// keeps at most maxIndexWindows.
var indexWindows struct {
	sync.Mutex
	free [][]int32
}

// maxIndexWindows bounds the windows kept: a few streams' columns.
const maxIndexWindows = 32

// getIndexWindow returns a window of at least n indices, empty.
func getIndexWindow(n int) []int32 {
	indexWindows.Lock()
	defer indexWindows.Unlock()
	for i := len(indexWindows.free) - 1; i >= 0; i-- {
		if w := indexWindows.free[i]; cap(w) >= n {
			last := len(indexWindows.free) - 1
			indexWindows.free[i] = indexWindows.free[last]
			indexWindows.free[last] = nil
			indexWindows.free = indexWindows.free[:last]
			return w[:0]
		}
	}
	return make([]int32, 0, n)
}

// putIndexWindow gives a window back for reuse; the caller holds no
// reference to it any more.
func putIndexWindow(w []int32) {
	if cap(w) == 0 {
		return
	}
	indexWindows.Lock()
	defer indexWindows.Unlock()
	if len(indexWindows.free) < maxIndexWindows {
		indexWindows.free = append(indexWindows.free, w[:0])
	}
}

// charge reserves n bytes of decoder buffers for page p; they go back
// when the page is freed.
func (c *columnCursor) charge(p *nativePage, n int64, what string) error {
	if err := c.acct.reserve(n, what+" of "+c.name); err != nil {
		return err
	}
	p.charged += n
	return nil
}

// page returns the current page, loaded, moving past exhausted ones.
func (c *columnCursor) page() (*nativePage, error) {
	for c.pi < len(c.pages) && c.row == c.pages[c.pi].rows {
		c.pi++
		c.row, c.pos = 0, 0
	}
	if c.pi == len(c.pages) {
		return nil, corrupt("column has fewer rows than its row group")
	}
	p := &c.pages[c.pi]
	return p, c.load(p)
}

// dropConsumed forgets the pages before the current one, so that their
// memory goes once the arrays that point into it do.
func (c *columnCursor) dropConsumed() {
	for i := range c.pages[:c.pi] {
		if w := c.pages[i].win; cap(w) > cap(c.spareWin) {
			putIndexWindow(c.spareWin)
			c.spareWin = w[:0] // the next page's, instead of a new one
		} else {
			putIndexWindow(w)
		}
		c.pages[i].free(c.acct)
	}
}

// take decodes the next n rows of the column.
func (c *columnCursor) take(n int, mem memory.Allocator) (arrow.ArrayData, error) {
	switch c.col.kind {
	case kindBool:
		return c.takeBools(n, mem)
	}
	if c.asDict {
		d, ok, err := c.takeDictionary(n, mem)
		if ok || err != nil {
			return d, err
		}
	}
	if c.col.kind == kindBytes {
		return c.takeByteArrays(n, mem)
	}
	p, err := c.page()
	if err != nil {
		return nil, err
	}
	w, sw := c.col.width, c.col.stored
	if !p.dict && p.nulls == 0 && p.rows-c.row >= n && c.col.conv == nil {
		// The rows lie in one page without nulls: point into it.
		vals := p.owner.buffer(p.values[c.row*w : (c.row+n)*w])
		c.row += n
		c.dropConsumed()
		d := array.NewData(c.col.typ, n, []*memory.Buffer{nil, vals}, nil, 0, 0)
		vals.Release()
		return d, nil
	}
	// Copy: the rows span pages, or have nulls to space out.
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(n * w)
	out := vals.Bytes()
	var valid *memory.Buffer
	nulls := 0
	for done := 0; done < n; {
		if done > 0 {
			if p, err = c.page(); err != nil {
				release(vals, valid)
				return nil, err
			}
		}
		k := min(n-done, p.rows-c.row)
		if p.nulls == 0 {
			first := p.valuesBefore(c.row)
			if p.dict {
				idx, err := c.indices(p, first, k)
				if err != nil {
					release(vals, valid)
					return nil, err
				}
				gather(out[done*w:(done+k)*w], w, c.dict.values, idx)
			} else {
				c.put(out[done*w:(done+k)*w], p.values[first*sw:(first+k)*sw])
			}
			if valid != nil {
				bitutil.SetBitsTo(valid.Bytes(), int64(done), int64(k), true)
			}
		} else {
			if valid == nil {
				valid = memory.NewResizableBuffer(mem)
				valid.Resize(int(bitutil.BytesForBits(int64(n))))
				valid.Bytes()[valid.Len()-1] = 0 // bits past n
				bitutil.SetBitsTo(valid.Bytes(), 0, int64(done), true)
			}
			// The rows' values densely at the front of their slots, then
			// spaced out to their rows (native_spread.go).
			v := p.valuesBefore(c.row)
			nv := p.valuesBefore(c.row+k) - v
			dense := out[done*w : (done+nv)*w]
			if p.dict {
				idx, err := c.indices(p, v, nv)
				if err != nil {
					release(vals, valid)
					return nil, err
				}
				gather(dense, w, c.dict.values, idx)
			} else {
				c.put(dense, p.values[v*sw:(v+nv)*sw])
			}
			spreadFixed(out[done*w:(done+k)*w], w, p.valid, c.row, nv)
			bitutil.CopyBitmap(p.valid, c.row, k, valid.Bytes(), done)
			nulls += k - nv
		}
		c.row += k
		done += k
	}
	c.dropConsumed()
	if nulls == 0 && valid != nil {
		valid.Release()
		valid = nil
	}
	d := array.NewData(c.col.typ, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	release(vals, valid)
	return d, nil
}

// gather writes dictionary entries idx of width w into out.
func gather(out []byte, w int, dict []byte, idx []int32) {
	switch w {
	case 8:
		o, d := arrow.Uint64Traits.CastFromBytes(out), arrow.Uint64Traits.CastFromBytes(dict)
		for i, e := range idx {
			o[i] = d[e]
		}
	case 4:
		o, d := arrow.Uint32Traits.CastFromBytes(out), arrow.Uint32Traits.CastFromBytes(dict)
		for i, e := range idx {
			o[i] = d[e]
		}
	case 16: // decimal128, uuid
		o, d := arrow.Uint64Traits.CastFromBytes(out), arrow.Uint64Traits.CastFromBytes(dict)
		for i, e := range idx {
			o[2*i], o[2*i+1] = d[2*e], d[2*e+1]
		}
	case 2: // int16, uint16, float16
		o, d := arrow.Uint16Traits.CastFromBytes(out), arrow.Uint16Traits.CastFromBytes(dict)
		for i, e := range idx {
			o[i] = d[e]
		}
	case 1: // int8, uint8
		for i, e := range idx {
			out[i] = dict[e]
		}
	default:
		for i, e := range idx {
			copy(out[i*w:(i+1)*w], dict[int(e)*w:(int(e)+1)*w])
		}
	}
}

// release releases the buffers that are not nil.
func release(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// valuesBefore counts the values (non-null rows) of p before row.
func (p *nativePage) valuesBefore(row int) int {
	if p.nulls == 0 || row == 0 {
		return row
	}
	return bitutil.CountSetBits(p.valid, 0, row)
}

// takeByteArrays decodes the next n rows of a BYTE_ARRAY column into
// offsets and data, copying the bytes once.
func (c *columnCursor) takeByteArrays(n int, mem memory.Allocator) (arrow.ArrayData, error) {
	// Size the data buffer by the page bytes the rows can span: it holds
	// the strings without their 4-byte lengths, so this is an upper bound.
	bound, rows := 0, 0
	for i := c.pi; i < len(c.pages) && rows < n; i++ {
		p := &c.pages[i]
		if err := c.load(p); err != nil {
			return nil, err
		}
		start, from := 0, 0
		if i == c.pi {
			start, from = c.pos, c.row
		}
		if p.dict {
			// Exactly the entries the batch takes from this page.
			k := min(n-rows, p.rows-from)
			v := p.valuesBefore(from)
			idx, err := c.indices(p, v, p.valuesBefore(from+k)-v)
			if err != nil {
				return nil, err
			}
			for _, e := range idx {
				bound += int(c.dict.lns[e])
			}
		} else {
			bound += len(p.values) - start
		}
		rows += p.rows - from
	}
	if rows < n {
		return nil, corrupt("column has fewer rows than its row group")
	}
	if bound > math.MaxInt32 {
		return nil, fmt.Errorf("%d bytes of strings in one batch: %w", bound, scanner.ErrUnsupported)
	}
	offsets := memory.NewResizableBuffer(mem)
	offsets.Resize((n + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	data := memory.NewResizableBuffer(mem)
	data.Resize(bound + gatherSlack)
	db := data.Bytes()
	var valid *memory.Buffer
	var vb []byte
	nulls := 0
	at := int32(0)
	offs[0] = 0
	for done := 0; done < n; {
		p, err := c.page() // loaded above
		if err != nil {
			release(offsets, data, valid)
			return nil, err
		}
		k := min(n-done, p.rows-c.row)
		vals, pos := p.values, c.pos
		v := p.valuesBefore(c.row) // dictionary pages: the next value's index
		var idx []int32            // dictionary pages: the indices of values v...
		if p.dict {
			// Decoded by the bound pass above: the same values.
			if idx, err = c.indices(p, v, p.valuesBefore(c.row+k)-v); err != nil {
				release(offsets, data, valid)
				return nil, err
			}
		}
		if p.nulls > 0 && valid == nil {
			valid = memory.NewResizableBuffer(mem)
			valid.Resize(int(bitutil.BytesForBits(int64(n))))
			vb = valid.Bytes()
			vb[len(vb)-1] = 0 // bits past n
			bitutil.SetBitsTo(vb, 0, int64(done), true)
		}
		if p.dict {
			// The entries of the non-null rows, back to back, then
			// their ends spread to the rows (a null row ends where
			// the row before it does).
			start := at
			at = gatherDict(db, offs[done+1:done+1+len(idx)], at, idx, c.dict)
			if p.nulls > 0 {
				spreadEnds(offs[done+1:done+1+k], len(idx), start, p.valid, c.row)
				bitutil.CopyBitmap(p.valid, c.row, k, vb, done)
				nulls += k - len(idx)
			} else if valid != nil {
				bitutil.SetBitsTo(vb, int64(done), int64(k), true)
			}
			c.row += k
			done += k
			continue
		}
		for i := 0; i < k; i++ {
			if p.nulls > 0 {
				if !bitutil.BitIsSet(p.valid, c.row+i) {
					bitutil.ClearBit(vb, done+i)
					nulls++
					offs[done+i+1] = at
					continue
				}
				bitutil.SetBit(vb, done+i)
			}
			if len(vals)-pos < 4 {
				err = corrupt("byte array runs past its page")
				break
			}
			ln := int(uint32(vals[pos]) | uint32(vals[pos+1])<<8 | uint32(vals[pos+2])<<16 | uint32(vals[pos+3])<<24)
			if ln < 0 || ln > len(vals)-pos-4 {
				err = corrupt("byte array of %d bytes runs past its page", ln)
				break
			}
			at += int32(copy(db[at:], vals[pos+4:pos+4+ln]))
			pos += 4 + ln
			offs[done+i+1] = at
		}
		if err != nil {
			release(offsets, data, valid)
			return nil, err
		}
		if p.nulls == 0 && valid != nil {
			bitutil.SetBitsTo(vb, int64(done), int64(k), true)
		}
		c.pos = pos
		c.row += k
		done += k
	}
	c.dropConsumed()
	data.ResizeNoShrink(int(at))
	if nulls == 0 && valid != nil {
		valid.Release()
		valid = nil
	}
	d := array.NewData(c.col.typ, n, []*memory.Buffer{valid, offsets, data}, nil, nulls, 0)
	release(offsets, data, valid)
	return d, nil
}

// gatherSlack is the room past a string batch's bytes that gatherDict
// may write into: it moves short entries 16 bytes at a time.
const gatherSlack = 16

// gatherDict copies dictionary entries idx to db from at on, one after
// another, and writes the end offset of each to offs (len(offs) ==
// len(idx)); it returns the end of the last. db has room for the entries'
// bytes (the sizing pass in takeByteArrays summed their lengths) plus
// gatherSlack.
//
// Dictionary strings are short (flags, modes, names), where a call to
// memmove per entry costs more than the bytes it moves: an entry of up to
// 16 bytes whose dictionary page has 16 bytes from its start is moved as
// one 16-byte block, whose tail the next entry overwrites (or, after the
// last, lies past the data's length).
func gatherDict(db []byte, offs []int32, at int32, idx []int32, d *nativeDict) int32 {
	vals, starts, lns := d.values, d.starts, d.lns
	offs = offs[:len(idx)]
	for i, e := range idx {
		st, ln := starts[e], lns[e]
		if ln <= 16 && int(st)+16 <= len(vals) {
			*(*[16]byte)(db[at:]) = *(*[16]byte)(vals[st:])
		} else {
			copy(db[at:at+ln], vals[st:st+ln])
		}
		at += ln
		offs[i] = at
	}
	return at
}

// spreadEnds moves the ends of the first m values in ends to the rows
// they belong to, in place: row i of ends is valid when bit from+i of
// valid is set, and a null row ends where the row before it does (start
// before the first). It walks backwards, so no end is overwritten before
// it is moved.
func spreadEnds(ends []int32, m int, start int32, valid []byte, from int) {
	j := m - 1
	for i := len(ends) - 1; i >= 0; i-- {
		if bitutil.BitIsSet(valid, from+i) {
			ends[i] = ends[j]
			j--
		} else if j >= 0 {
			ends[i] = ends[j]
		} else {
			ends[i] = start
		}
	}
}

// overlaySource is the Source pqarrow reads through. When the native path
// gives a row group up after fetching its chunks, it lends them to pqarrow
// here, so that falling back costs no second fetch.
type overlaySource struct {
	src  scanner.Source
	held []heldChunk
}

// heldChunk is a column chunk's bytes, starting at file offset off.
type heldChunk struct {
	off  int64
	data []byte
}

func (o *overlaySource) ReadAt(p []byte, off int64) (int, error) {
	for _, h := range o.held {
		if off >= h.off && off+int64(len(p)) <= h.off+int64(len(h.data)) {
			return copy(p, h.data[off-h.off:]), nil
		}
	}
	return o.src.ReadAt(p, off)
}

func (o *overlaySource) Size() int64 { return o.src.Size() }
