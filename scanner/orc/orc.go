package orc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // writer time zones must resolve on hosts without zoneinfo
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// DefaultBatchRows caps rows per batch when the caller does not choose.
const DefaultBatchRows = 64 << 10

// tailReadSize is how much of the file's end Open reads first: enough for
// the postscript, footer and metadata of most files in one request.
const tailReadSize = 16 << 10

// File is an open ORC file. It is not safe for concurrent use.
type File struct {
	name string
	src  scanner.Source
	size int64
	*fileMeta
	noSeek bool // tests: read kept strides without seeking (seek.go), as the oracle
}

// fileMeta is what the file's tail says: everything Open parses, and the
// stripe footers as they are read. When the Source is a
// scanner.MetadataCache it is shared, through the cache, by every File
// opened on the same object (same name, size and version), so a scan's
// GetFlightInfo pays for the tail and the stripe footers and its DoGets
// read only stripe data. It is immutable after Open except for footers,
// whose entries are set once each, atomically; it is safe for concurrent
// use.
type fileMeta struct {
	ps        *postScript
	ft        *footer
	codec     compressionKind
	blockSize int
	decimal64 bool     // file version 1.9999 (UNSTABLE-PRE-2.0)
	warnings  []string // what Warnings reports, without the file name

	// Column statistics (stats.go decodes them when asked).
	stripeStats [][]byte // per stripe, its StripeStatistics undecoded (nil: none or untrusted)
	statsErr    error    // why stripeStats is nil, if the section is damaged
	tailBytes   int64    // decompressed footer and metadata, which the above alias

	tops   []*projNode
	schema *arrow.Schema

	footers []atomic.Pointer[stripeFooter] // stripe footers read so far
}

// metaCacheKind names ORC tails in a scanner.MetadataCache.
const metaCacheKind = "orc"

var _ scanner.File = (*File)(nil)

// ioError marks an error from the Source, which keeps its identity (it is
// the storage layer's, not evidence of a corrupt file).
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

func (f *File) readAt(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > f.size || n > f.size-off {
		return nil, fmt.Errorf("range [%d, +%d) runs past the end of the %d-byte file", off, n, f.size)
	}
	buf := make([]byte, n)
	if err := f.readInto(buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

// readInto fills buf from the file at off.
func (f *File) readInto(buf []byte, off int64) error {
	n := int64(len(buf))
	if off < 0 || off > f.size || n > f.size-off {
		return fmt.Errorf("range [%d, +%d) runs past the end of the %d-byte file", off, n, f.size)
	}
	if _, err := f.src.ReadAt(buf, off); err != nil && !(errors.Is(err, io.EOF) && off+n == f.size) {
		return &ioError{err}
	}
	return nil
}

// classify wraps err with what was being done; errors that are not already
// classified (unsupported, storage, cancellation) mean a corrupt file.
func classify(what string, err error) error {
	if err == nil {
		return nil
	}
	var ioe *ioError
	var be *budgetError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &ioe):
		return fmt.Errorf("%s: %w", what, ioe.err)
	case errors.As(err, &be):
		return fmt.Errorf("%s: %w", what, be.err)
	case errors.Is(err, scanner.ErrUnsupported), errors.Is(err, scanner.ErrCorrupt), errors.Is(err, scanner.ErrNotColumnar):
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %v: %w", what, err, scanner.ErrCorrupt)
}

// Open reads the tail of an ORC file: postscript, footer and stripe
// statistics. mem is accepted for symmetry with the Parquet reader;
// decoded arrays come from ReadOptions.Mem. name is used in errors.
func Open(ctx context.Context, name string, src scanner.Source, mem memory.Allocator) (f *File, err error) {
	defer func() {
		if err != nil {
			f = nil
		}
	}()
	defer scanner.Recover(&err, name+": reading ORC footer")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f = &File{name: name, src: src, size: src.Size()}
	cache, _ := src.(scanner.MetadataCache)
	if cache != nil {
		if m, ok := cache.CachedMetadata(metaCacheKind); ok {
			f.fileMeta = m.(*fileMeta)
			return f, nil
		}
	}
	f.fileMeta = &fileMeta{}
	if err := f.open(ctx); err != nil {
		return nil, classify(name, err)
	}
	if cache != nil {
		cache.CacheMetadata(metaCacheKind, f.fileMeta, f.metaSize())
	}
	return f, nil
}

// metaSize estimates the memory of a fileMeta with every stripe footer
// loaded: parsed protobufs take a few times their (decompressed) bytes.
func (f *File) metaSize() int64 {
	n := max(int64(f.ps.footerLength+f.ps.metadataLength), f.tailBytes)
	for _, s := range f.ft.stripes {
		n += int64(s.footerLength)
	}
	return 8*n + 4096
}

func (f *File) open(ctx context.Context) error {
	size := f.size
	if size == 0 {
		return fmt.Errorf("empty file (0 bytes): %w", scanner.ErrNotColumnar)
	}
	if size < 4 {
		return fmt.Errorf("%d-byte file is too short for ORC: %w", size, scanner.ErrNotColumnar)
	}
	tailLen := min(size, tailReadSize)
	tail, err := f.readAt(size-tailLen, tailLen)
	if err != nil {
		return err
	}
	// The header magic only decides between "not ORC" and "corrupt ORC"
	// (and vouches for postscripts without magic, before ORC 0.12), so it
	// costs a read only when the tail alone does not settle things.
	headerMagic := func() (bool, error) {
		if tailLen == size {
			return string(tail[:3]) == "ORC", nil
		}
		head, err := f.readAt(0, 3)
		return err == nil && string(head) == "ORC", err
	}
	psLen := int64(tail[len(tail)-1])
	if psLen == 0 || psLen+1 > size {
		if ok, err := headerMagic(); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("no ORC magic bytes: %w", scanner.ErrNotColumnar)
		}
		return fmt.Errorf("postscript length %d does not fit the %d-byte file", psLen, size)
	}
	ps, err := parsePostScript(tail[int64(len(tail))-1-psLen : len(tail)-1])
	if err != nil || ps.magic != "ORC" {
		if ok, herr := headerMagic(); herr != nil {
			return herr
		} else if !ok {
			return fmt.Errorf("no ORC magic bytes: %w", scanner.ErrNotColumnar)
		}
		if err != nil {
			return fmt.Errorf("postscript: %v", err)
		}
	}
	if err := f.usePostScript(ps); err != nil {
		return err
	}
	// Footer and metadata sit just before the postscript.
	avail := uint64(size - 1 - psLen)
	if ps.footerLength > avail || ps.metadataLength > avail-ps.footerLength {
		return fmt.Errorf("footer (%d bytes) and metadata (%d bytes) do not fit the %d-byte file", ps.footerLength, ps.metadataLength, size)
	}
	metaStart := int64(avail - ps.footerLength - ps.metadataLength)
	var section []byte
	if tailStart := size - tailLen; metaStart >= tailStart {
		section = tail[metaStart-tailStart : int64(len(tail))-1-psLen]
	} else if section, err = f.readAt(metaStart, int64(avail)-metaStart); err != nil {
		return err
	}
	// Reserve what the decoded tail will take (as metaSize estimates it,
	// from the compressed sections) from the caller's metadata budget
	// before decoding it (scanner.WithMetadataBudget).
	if r := scanner.MetadataBudget(ctx); r != nil {
		if err := r.Reserve(ctx, 8*int64(ps.footerLength+ps.metadataLength)+4096); err != nil {
			return &budgetError{fmt.Errorf("reading the footer: %w", err)}
		}
	}
	return f.useTail(section)
}

// useTail decodes the footer and metadata sections (section holds both,
// in file order) and derives the schema.
func (f *File) useTail(section []byte) error {
	c := f.newCodec()
	fb, err := readAll(c, section[f.ps.metadataLength:], maxMetadataSize)
	if err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	if f.ft, err = parseFooter(fb); err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	if err := checkTypes(f.ft.types); err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	f.tailBytes = int64(len(fb))
	f.readStripeStats(c, section[:f.ps.metadataLength])
	if err := checkStripes(f.ft, f.size); err != nil {
		return err
	}
	f.footers = make([]atomic.Pointer[stripeFooter], len(f.ft.stripes))
	f.tops = topNodes(f.ft.types)
	f.schema = schemaOf(f.tops)
	if err := scanner.CheckNesting("", f.schema); err != nil {
		return err
	}
	return checkClaims(f.ft, f.schema)
}

// usePostScript takes the reading rules from the postscript: format
// version, codec and compression block size.
func (f *File) usePostScript(ps *postScript) error {
	f.ps = ps
	var warning string
	if f.decimal64, warning = versionRules(ps.version); warning != "" {
		f.warnings = append(f.warnings, warning)
	}
	f.codec = ps.compression
	if f.codec > compZstd {
		return fmt.Errorf("unknown %v: %w", f.codec, scanner.ErrUnsupported)
	}
	switch bs := ps.compressionBlockSize; {
	case bs == 0:
		f.blockSize = defaultBlockSize
	case bs > maxBlockSize:
		return fmt.Errorf("compression block size %d exceeds %d", bs, maxBlockSize)
	default:
		f.blockSize = int(bs)
	}
	return nil
}

// checkStripes refuses stripes that run past the file or have no footer,
// before any of their lengths sizes a read.
func checkStripes(ft *footer, size int64) error {
	for i, s := range ft.stripes {
		end := s.offset
		for _, l := range []uint64{s.indexLength, s.dataLength, s.footerLength} {
			if l > uint64(size) || end > uint64(size)-l {
				return fmt.Errorf("stripe %d runs past the end of the file", i)
			}
			end += l
		}
		if s.footerLength == 0 {
			return fmt.Errorf("stripe %d has no footer", i)
		}
	}
	return nil
}

// versionRules decides how a file of the postscript's version is read.
// The version names the format the writer followed: 0.11 (RLE v1 only),
// 0.12, and 1.9999 (UNSTABLE-PRE-2.0, whose decimals of up to 18 digits
// are DECIMAL64). A version this reader does not know is, by itself, no
// reason to refuse the file: every stream and encoding says what it is,
// and a writer that used something unknown fails where it is met (an
// unknown encoding or codec). So, as ORC C++ (and pyarrow) do, such a
// file is read by the 0.12 rules with a warning; 1.9999 gets one too,
// since its format was never frozen.
func versionRules(version []uint64) (decimal64 bool, warning string) {
	// Files written before the postscript carried a version (ORC-368)
	// are format 0.11.
	major, minor := uint64(0), uint64(11)
	if len(version) >= 2 {
		major, minor = version[0], version[1]
	} else if len(version) == 1 {
		major, minor = version[0], 0
	}
	switch {
	case major == 0 && (minor == 11 || minor == 12):
		return false, ""
	case major == 1 && minor == 9999:
		return true, "written in the unstable pre-2.0 ORC format version 1.9999; read with its DECIMAL64 encoding, as ORC C++ does"
	}
	return false, fmt.Sprintf("written in ORC format version %d.%d, which this reader does not know; read as version 0.12, as ORC C++ does", major, minor)
}

// Warnings returns what the reader noticed about the file without
// failing: today a format version it does not know. Each names the file;
// the caller (the server) logs them. It never fails, and returns a new
// slice each call (nil when there is nothing to say).
func (f *File) Warnings() []string {
	var out []string
	for _, w := range f.warnings {
		out = append(out, f.name+": "+w)
	}
	return out
}

// readStripeStats splits the Metadata section into one StripeStatistics
// per stripe, kept undecoded: stats.go decodes a stripe's when asked, so a
// section of many tiny entries never becomes a large parsed structure.
// Stripe statistics only inform planning and pruning: a damaged section
// must not make the rows unreadable, so its errors are kept for
// diagnostics instead of failing Open, and its statistics are not used.
func (f *File) readStripeStats(c *codec, raw []byte) {
	if len(raw) == 0 {
		return
	}
	mb, err := readAll(c, raw, maxMetadataSize)
	if err == nil {
		f.tailBytes += int64(len(mb))
		f.stripeStats, err = rawEntries(mb, len(f.ft.stripes))
	}
	// Entries pair with stripes by position: a section with fewer says
	// nothing reliable about which stripe each describes.
	if err == nil && len(f.stripeStats) != len(f.ft.stripes) {
		err = fmt.Errorf("statistics for %d stripes, the footer lists %d", len(f.stripeStats), len(f.ft.stripes))
	}
	if err != nil {
		f.stripeStats, f.statsErr = nil, fmt.Errorf("metadata: %w", err)
	}
}

// checkClaims refuses footers whose claims no reader can honour: row
// counts beyond int64 (negative to every consumer), and field names that
// are not UTF-8 (Arrow requires UTF-8; the Flight schema would carry bytes
// a client cannot decode).
func checkClaims(ft *footer, sc *arrow.Schema) error {
	if ft.numberOfRows > math.MaxInt64 {
		return fmt.Errorf("the footer claims %d rows", ft.numberOfRows)
	}
	for i, s := range ft.stripes {
		if s.numberOfRows > math.MaxInt64 {
			return fmt.Errorf("stripe %d claims %d rows", i, s.numberOfRows)
		}
	}
	if bad, ok := nonUTF8Name(sc.Fields()); ok {
		return fmt.Errorf("field name %q is not valid UTF-8", bad)
	}
	return nil
}

// nonUTF8Name finds a field name, at any depth, that is not valid UTF-8.
func nonUTF8Name(fields []arrow.Field) (string, bool) {
	for _, f := range fields {
		if !utf8.ValidString(f.Name) {
			return f.Name, true
		}
		if nested, ok := f.Type.(arrow.NestedType); ok {
			if bad, ok := nonUTF8Name(nested.Fields()); ok {
				return bad, true
			}
		}
	}
	return "", false
}

// newCodec returns a decompressor for this file (nil: uncompressed).
func (f *File) newCodec() *codec {
	if f.codec == compNone {
		return nil
	}
	return newCodec(f.codec, f.blockSize)
}

// Close releases the reader. It holds no resources beyond memory.
func (f *File) Close() error { return nil }

// Format implements scanner.File.
func (f *File) Format() scanner.Format { return scanner.FormatORC }

// Schema implements scanner.File.
func (f *File) Schema() *arrow.Schema { return f.schema }

// NumRows implements scanner.File.
func (f *File) NumRows() int64 { return int64(f.ft.numberOfRows) }

// encryptedColumns names the roots of the file's encrypted subtrees.
func (f *File) encryptedColumns() []string {
	enc := f.ft.encryption
	if enc == nil {
		return nil
	}
	var out []string
	for _, v := range enc.variants {
		if int(v.root) < len(f.ft.types) {
			out = append(out, f.columnName(int(v.root)))
		}
	}
	return out
}

// columnName gives a column id's dotted name for messages.
func (f *File) columnName(id int) string {
	var find func(n *projNode, prefix string) string
	find = func(n *projNode, prefix string) string {
		name := prefix + n.name
		if n.id == id {
			return name
		}
		for _, c := range n.children {
			if s := find(c, name+"."); s != "" {
				return s
			}
		}
		return ""
	}
	for _, t := range f.tops {
		if s := find(t, ""); s != "" {
			return s
		}
	}
	return fmt.Sprintf("column %d", id)
}

// stripeFooterRange is the byte range of stripe i's footer.
func (f *File) stripeFooterRange(i int) scanner.Range {
	s := f.ft.stripes[i]
	return scanner.Range{Off: int64(s.offset + s.indexLength + s.dataLength), Len: int64(s.footerLength)}
}

// loadFooters reads the footers of the given stripes that are not cached,
// announcing them together first so the IO scheduler can merge them.
// Concurrent calls (through a shared fileMeta) may both read a footer;
// either result is kept.
func (f *File) loadFooters(stripes []int) error {
	var ranges []scanner.Range
	var todo []int
	for _, i := range stripes {
		if f.footers[i].Load() == nil {
			todo = append(todo, i)
			ranges = append(ranges, f.stripeFooterRange(i))
		}
	}
	scanner.Prefetch(f.src, ranges)
	c := f.newCodec()
	for j, i := range todo {
		r := ranges[j]
		raw, err := f.readAt(r.Off, r.Len)
		if err != nil {
			return fmt.Errorf("stripe %d footer: %w", i, err)
		}
		b, err := readAll(c, raw, maxMetadataSize)
		if err != nil {
			return fmt.Errorf("stripe %d footer: %w", i, err)
		}
		sf, err := parseStripeFooter(b)
		if err != nil {
			return fmt.Errorf("stripe %d footer: %w", i, err)
		}
		if len(sf.columns) != len(f.ft.types) {
			return fmt.Errorf("stripe %d footer: bad number of column encodings (%d for %d columns)", i, len(sf.columns), len(f.ft.types))
		}
		s := f.ft.stripes[i]
		var total uint64
		for _, st := range sf.streams {
			if st.column >= uint32(len(f.ft.types)) {
				return fmt.Errorf("stripe %d footer: stream for column %d of %d", i, st.column, len(f.ft.types))
			}
			if st.length > s.indexLength+s.dataLength-total {
				return fmt.Errorf("stripe %d footer: streams run past the stripe's data", i)
			}
			total += st.length
		}
		f.footers[i].CompareAndSwap(nil, sf)
	}
	return nil
}

// projection is the reader's private resolution of a column list.
type projection struct {
	nodes   []*projNode
	columns []bool // ORC column ids read
}

// Project implements scanner.File.
func (f *File) Project(columns []string) (p *scanner.Projection, err error) {
	defer scanner.Recover(&err, f.name+": resolving ORC columns")
	impl := &projection{columns: make([]bool, len(f.ft.types))}
	var missing []string
	if len(columns) == 0 {
		impl.nodes = f.tops
	} else {
		var order []int
		sels := map[int]*selection{}
		for _, col := range columns {
			top, path := resolvePath(f.tops, col)
			if path == nil {
				missing = append(missing, col)
				continue
			}
			if sels[top] == nil {
				sels[top] = &selection{}
				order = append(order, top)
			}
			sels[top].add(path)
		}
		for _, t := range order {
			impl.nodes = append(impl.nodes, prune(f.tops[t], sels[t]))
		}
	}
	for _, n := range impl.nodes {
		markColumns(n, impl.columns)
	}
	all := make([]int, len(f.ft.stripes))
	for i := range all {
		all[i] = i
	}
	if len(impl.nodes) > 0 {
		if err := f.loadFooters(all); err != nil {
			return nil, classify(f.name, err)
		}
	}
	groups := make([]scanner.Group, len(f.ft.stripes))
	for i, s := range f.ft.stripes {
		g := scanner.Group{Rows: int64(s.numberOfRows)}
		if len(impl.nodes) > 0 {
			perCol := make([]int64, len(f.ft.types))
			for _, st := range f.footers[i].Load().streams {
				if impl.columns[st.column] && !st.kind.isIndex() {
					g.Bytes += int64(st.length)
					perCol[st.column] += int64(st.length)
					// Each stream decompresses one block at a time.
					if f.codec != compNone {
						g.WorkBytes += min(int64(f.blockSize), 4*int64(st.length))
					}
				}
			}
			// readStripe holds the stripe's projected streams in one buffer.
			g.WorkBytes += g.Bytes
			stats := f.stripeColumnStats(i)
			for id, on := range impl.columns {
				if on {
					g.MemBytes += f.memEstimate(i, id, perCol[id], stats)
				}
			}
		}
		groups[i] = g
	}
	return &scanner.Projection{
		Schema:  schemaOf(impl.nodes),
		Missing: missing,
		Groups:  groups,
		Impl:    impl,
	}, nil
}

// memEstimate guesses the decoded Arrow size of column id in stripe i from
// the stripe's statistics (value counts, string lengths) when the writer
// stored them, and from the row count and compressed size otherwise.
func (f *File) memEstimate(i, id int, compressed int64, stats []columnStats) int64 {
	values := int64(f.ft.stripes[i].numberOfRows)
	var st *columnStats
	if id < len(stats) {
		st = &stats[id]
		if st.numberOfValues > 0 && int64(st.numberOfValues) < 1<<40 {
			values = int64(st.numberOfValues)
		}
	}
	bitmapBytes := values / 8
	switch f.ft.types[id].kind {
	case kindBoolean:
		return 2 * bitmapBytes
	case kindByte:
		return values + bitmapBytes
	case kindShort:
		return 2*values + bitmapBytes
	case kindInt, kindDate, kindFloat, kindList, kindMap:
		return 4*values + bitmapBytes
	case kindLong, kindDouble, kindTimestamp, kindTimestampInstant:
		return 8*values + bitmapBytes
	case kindDecimal:
		return 16*values + bitmapBytes
	case kindUnion:
		return values + bitmapBytes
	case kindString, kindVarchar, kindChar, kindBinary:
		data := 3 * compressed
		if st != nil && st.stringStats != nil && st.stringStats.hasSum && st.stringStats.sum >= 0 {
			data = st.stringStats.sum
		} else if st != nil && st.binarySum != nil && *st.binarySum >= 0 {
			data = *st.binarySum
		}
		return 4*values + data + bitmapBytes
	}
	return bitmapBytes
}

// Read implements scanner.File.
func (f *File) Read(ctx context.Context, p *scanner.Projection, opts scanner.ReadOptions, emit func(arrow.RecordBatch) error) (err error) {
	defer scanner.Recover(&err, f.name+": decoding ORC stripes")
	impl, ok := p.Impl.(*projection)
	if !ok {
		return fmt.Errorf("%s: projection was not made by this ORC reader", f.name)
	}
	batchRows := opts.BatchRows
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	batchRows = min(batchRows, maxBatchElements)
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	groups := opts.Groups
	if groups == nil {
		for i := range f.ft.stripes {
			groups = append(groups, i)
		}
	}
	for _, g := range groups {
		if g < 0 || g >= len(f.ft.stripes) {
			return fmt.Errorf("%s: stripe %d requested, the file has %d", f.name, g, len(f.ft.stripes))
		}
	}
	c := f.newCodec() // one decompressor (and its state and buffers) for every stripe
	var data []byte   // stripe data, reused from stripe to stripe
	sc := &scratch{}  // decoder buffers, likewise
	acct := &account{ctx: ctx, budget: opts.Budget}
	defer acct.releaseAll()
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows := int64(f.ft.stripes[g].numberOfRows)
		if len(impl.nodes) == 0 {
			for left := rows; left > 0; left -= batchRows {
				if err := emit(array.NewRecordBatch(p.Schema, nil, min(left, batchRows))); err != nil {
					return err
				}
			}
			continue
		}
		keep, none, ix, err := f.selectStrides(ctx, g, opts.Filter, impl.ids()) // rowindexread.go
		if err != nil {
			return classify(fmt.Sprintf("%s: stripe %d row index", f.name, g), err)
		}
		if none {
			continue
		}
		if keep != nil { // seek.go: fetch and decode only the kept strides, or say which rows are left
			if keep, err = f.readStripeSeeking(ctx, g, ix, impl, p.Schema, mem, c, sc, acct, batchRows, keep, emit); err != nil || keep == nil {
				if err != nil {
					return err
				}
				continue
			}
		}
		if err := f.readStripe(ctx, g, impl, p.Schema, mem, c, &data, sc, acct, batchRows, keep, emit); err != nil {
			return err
		}
	}
	return nil
}

// dataKinds are the streams decoders read.
func isDataKind(k streamKind) bool {
	switch k {
	case streamPresent, streamData, streamLength, streamDictionaryData, streamSecondary:
		return true
	}
	return false
}

func (f *File) readStripe(ctx context.Context, g int, impl *projection, sc *arrow.Schema, mem memory.Allocator,
	c *codec, data *[]byte, scr *scratch, acct *account, batchRows int64, keep []rowRange, emit func(arrow.RecordBatch) error) error {
	what := fmt.Sprintf("%s: stripe %d", f.name, g)
	if err := f.loadFooters([]int{g}); err != nil {
		return classify(f.name, err)
	}
	sf := f.footers[g].Load()
	si := f.ft.stripes[g]

	// Locate the projected columns' data streams: streams are stored
	// back to back from the stripe's start, in footer order (encrypted
	// variants, which we cannot read, come after all of them).
	type want struct {
		key      streamKey
		off, len int64
	}
	var wants []want
	seen := map[streamKey]bool{}
	pos := int64(si.offset)
	for _, st := range sf.streams {
		off := pos
		pos += int64(st.length)
		if !impl.columns[st.column] || !isDataKind(st.kind) {
			continue
		}
		k := streamKey{st.column, st.kind}
		if seen[k] {
			return classify(what, fmt.Errorf("two %v streams for column %d", st.kind, st.column))
		}
		seen[k] = true
		wants = append(wants, want{k, off, int64(st.length)})
	}
	// Merge touching streams into ranges; announce, then read them.
	var ranges []scanner.Range
	for _, w := range wants {
		if w.len == 0 {
			continue
		}
		if n := len(ranges); n > 0 && ranges[n-1].Off+ranges[n-1].Len == w.off {
			ranges[n-1].Len += w.len
			continue
		}
		ranges = append(ranges, scanner.Range{Off: w.off, Len: w.len})
	}
	scanner.Prefetch(f.src, ranges)
	// One buffer holds every range of the stripe. Decoded arrays never
	// point into it (values are copied out), so the next stripe reuses it.
	total := int64(0)
	for _, r := range ranges {
		total += r.Len
	}
	if err := f.chargeStripe(acct, what, total, len(wants)); err != nil {
		return err
	}
	if int64(cap(*data)) < total {
		*data = nil // let the old one go before allocating
		*data = make([]byte, total)
	}
	bufs := make([][]byte, len(ranges))
	at := int64(0)
	for i, r := range ranges {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := (*data)[at : at+r.Len : at+r.Len]
		at += r.Len
		if err := f.readInto(b, r.Off); err != nil {
			return classify(what, err)
		}
		bufs[i] = b
	}
	raw := make(map[streamKey][]byte, len(wants))
	for _, w := range wants {
		if w.len == 0 {
			raw[w.key] = nil
			continue
		}
		j := sort.Search(len(ranges), func(j int) bool { return ranges[j].Off+ranges[j].Len > w.off })
		start := w.off - ranges[j].Off
		raw[w.key] = bufs[j][start : start+w.len]
	}

	rows := int64(si.numberOfRows)
	if len(keep) > 0 {
		rows = keep[len(keep)-1].end // rows after the last kept stride are not decoded
	}
	run := stripeRun{raw: raw, from: 0, to: rows, keep: keep}
	return f.decodeRun(ctx, what, sf, impl, sc, mem, c, scr, acct, batchRows, run, emit)
}

// stripeRun is rows [from, to) of a stripe to decode from raw (streams
// by key, positioned by seeks when not at their start), of which only
// those in keep (nil: all) are emitted.
type stripeRun struct {
	raw      map[streamKey][]byte
	seeks    map[streamKey]seekAt
	from, to int64
	keep     []rowRange
}

// decodeRun decodes one run of a stripe and emits its batches.
func (f *File) decodeRun(ctx context.Context, what string, sf *stripeFooter, impl *projection, sc *arrow.Schema,
	mem memory.Allocator, c *codec, scr *scratch, acct *account, batchRows int64, run stripeRun, emit func(arrow.RecordBatch) error) error {
	scr.reset()
	ss := &stripeStreams{mem: mem, codec: c, raw: run.raw, encodings: sf.columns, decimal64: f.decimal64, scratch: scr, acct: acct, seeks: run.seeks}
	defer ss.release()
	if needsZone(impl.nodes) {
		loc, err := loadZone(sf.writerTimezone)
		if err != nil {
			return classify(what, err)
		}
		ss.tz = loc
	}
	readers := make([]colReader, len(impl.nodes))
	for i, n := range impl.nodes {
		r, err := newColReader(n, ss)
		if err != nil {
			return classify(fmt.Sprintf("%s: column %q", what, n.name), err)
		}
		readers[i] = r
	}
	if ss.seekErr != nil {
		return &seekFailed{fmt.Errorf("%s: seeking to row %d: %w", what, run.from, ss.seekErr)}
	}
	for done := run.from; done < run.to; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(batchRows, run.to-done)
		cols := make([]arrow.Array, 0, len(readers))
		release := func() {
			for _, c := range cols {
				c.Release()
			}
		}
		for i, r := range readers {
			d, err := r.next(int(n), nil)
			if err != nil {
				release()
				return classify(fmt.Sprintf("%s: column %q, rows %d..%d", what, impl.nodes[i].name, done, done+n), err)
			}
			cols = append(cols, array.MakeFromData(d))
			d.Release()
		}
		rec := array.NewRecordBatch(sc, cols, n)
		release()
		if err := emitKept(rec, done, run.keep, emit); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// chargeStripe reserves, before readStripe allocates them, the stripe
// buffer of total bytes (what the stripe footer declares for the projected
// streams, checked against the stripe's size by loadFooters) and a
// decompression buffer of the block size for each of its streams.
func (f *File) chargeStripe(acct *account, what string, total int64, streams int) error {
	if err := acct.atLeast(&acct.stripeData, total, what+": stripe data"); err != nil {
		return err
	}
	if f.codec == compNone {
		return nil
	}
	return acct.atLeast(&acct.decompression, int64(streams)*int64(f.blockSize+decompressSlack), what+": decompression buffers")
}

func needsZone(nodes []*projNode) bool {
	for _, n := range nodes {
		if n.t.kind == kindTimestamp || needsZone(n.children) {
			return true
		}
	}
	return false
}

var zones sync.Map // name -> *time.Location

// loadZone resolves a writer time zone. Files that name none (before ORC
// 0.12) are read as UTC.
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		// Java writes some zones by their short IDs.
		if alt, ok := javaZoneAliases[strings.ToUpper(name)]; ok {
			loc, err = time.LoadLocation(alt)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("unknown writer time zone %q: %w", name, scanner.ErrUnsupported)
	}
	zones.Store(name, loc)
	return loc, nil
}

// javaZoneAliases maps Java's legacy short zone IDs that tzdata lacks.
var javaZoneAliases = map[string]string{
	"PST": "America/Los_Angeles", "EST": "America/New_York", "CST": "America/Chicago",
	"MST": "America/Denver", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo",
	"CTT": "Asia/Shanghai", "UTC": "UTC", "GMT": "UTC", "Z": "UTC",
}
