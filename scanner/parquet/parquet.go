// Package parquet reads Parquet files into Arrow: flat columns, and
// structs, lists and maps of them (native_nested.go, native_list.go), with
// its own reader (native*.go: numbers, strings, booleans, decimals, INT96,
// fixed-size binary; PLAIN, dictionary, DELTA and BYTE_STREAM_SPLIT
// pages), which builds arrays of PLAIN numbers that point into the IO
// scheduler's buffers instead of copying them; everything else through
// arrow-go's pqarrow, which supports every Parquet physical and logical
// type arrow-go knows, column by column beside the native reader
// (native_mixed.go) or for the whole read.
//
// scand adds three things around pqarrow: column selection by name and
// dotted path (a struct's fields may be chosen one by one), per-row-group
// size figures that the server uses to plan splits and batch sizes, and
// containment: pqarrow and the Thrift footer decoder panic on some corrupt
// files, so every call into them runs under scanner.Recover and its errors
// are classified as corrupt or unsupported.
//
// Bytes come from a scanner.Source (the IO scheduler): the footer from its
// speculative tail read, each column chunk with one ReadAt. What Open
// derives from a footer's schema alone is shared by the files of one
// schema (shapes.go).
//
// # Allocations the file must justify
//
// Nothing is allocated on a header's word alone. Open refuses footers that
// claim negative row counts or carry field names that are not UTF-8
// (checkFooter), as pyarrow does. The native reader checks every page
// header against its column chunk's declared sizes and row group
// (readHeaders: the pages' uncompressed sizes within the chunk's
// total_uncompressed_size, a value count within the row group's rows, a
// dictionary's entries within its size); a page that claims more is
// ErrCorrupt, naming the file, column and sizes. (A page running past the
// chunk's total_compressed_size goes to pqarrow: old parquet-mr wrote
// such sizes, PARQUET-816.) For pqarrow, the reader's page limits are set
// from the same footer sizes (pqlimits.go). Decompressors never write past the declared
// size (codecs.go). What a page, dictionary or index buffer declares is
// charged to scanner.ReadOptions.Budget before it is allocated and given
// back when it is freed (budget.go; for pqarrow, through the allocator of
// its ReaderProperties), so a file that declares huge but plausible pages
// waits for memory or fails with the budget's error. testdata/bombs holds
// crafted files that test each rule (bombs_test.go).
package parquet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/scand/scand/scanner"
)

// streamBufferSize is how much of a column chunk the Parquet reader holds
// at once (it grows to fit a page when a page is larger). It is arrow-go's
// page header peek (16 KiB): the reader reads a page's body straight into
// its page buffer when the body is at least this size, so a bigger buffer
// only copies the first part of each page twice and costs a fresh
// allocation per column chunk (arrow-go allocates it with make). The bytes
// come from the IO scheduler's prefetched buffers, so small reads here do
// not mean small storage requests.
const streamBufferSize = 16 << 10

// DefaultBatchRows caps rows per batch when the caller does not choose.
const DefaultBatchRows = 64 << 10

// File is an open Parquet file. It is not safe for concurrent use.
type File struct {
	name string
	src  *overlaySource
	pf   *file.Reader
	// fr is pqarrow's reader, nil until a read needs it when the footer
	// came from the cache (arrowReader).
	fr     *pqarrow.FileReader
	frOnce sync.Once
	frErr  error
	// entry is the footer and its description, shared through the
	// metadata cache with every File of the same object.
	entry *footerEntry
	// batchRows is the rows per batch of the current read.
	batchRows int64
	// manifest is the file's schema manifest; fr reads with a copy that
	// differs in the leaves pqarrow cannot read as they are (types.go).
	manifest *pqarrow.SchemaManifest
	schema   *arrow.Schema
	mem      memory.Allocator // for decoded columns
	props    *parquet.ReaderProperties
	pages    *chargingAllocator // props' allocator (pqlimits.go)
	// noNative turns the native path off (tests compare the two paths).
	noNative bool
	// nativeGroups counts the row groups the native path decoded.
	nativeGroups int
	// lateHeld are the pieces late materialization decoded first, lent
	// to the row group's second pass (latemat.go).
	lateHeld []latePiece
	// dictLeaves are the leaves the current read returns as dictionaries
	// where it can (native_dict.go).
	dictLeaves map[int]bool
	stats      *statsCache // column statistics, decoded on demand (stats.go)
}

// Open reads the footer of a Parquet file. mem allocates the decoded
// columns of later reads; when it is Go's allocator, a process-wide pool
// over it does (pool.go), so the buffers of released batches are reused.
// name is used in error messages.
func Open(ctx context.Context, name string, src scanner.Source, mem memory.Allocator) (f *File, err error) {
	// arrow-go panics on some footers, among them logical types newer
	// than it knows: its panics are classified like its errors.
	defer func() {
		if r := recover(); r != nil {
			err = classify(name+": reading Parquet footer", fmt.Errorf("decoder failed (%v)", r))
		}
	}()
	// Page buffers and decoder scratch come from a pool over Go's
	// garbage-collected allocator (pool.go): arrow-go does not free all of
	// them on every path (delta decoders, page readers after errors), which
	// costs nothing here, and the page buffers it does free are reused by
	// the next column chunk instead of being allocated and zeroed afresh.
	// Only the Arrow arrays handed to the caller come from mem.
	pages := &chargingAllocator{inner: pageAllocator}
	props := parquet.NewReaderProperties(pages)
	// Stream column chunks through a small buffer instead of copying each
	// whole chunk into a private allocation: the IO scheduler has already
	// fetched the chunk (coalesced, within its memory budget), and frees it
	// as these reads consume it, so a scan's memory stays bounded by the
	// budget rather than growing with row group size.
	props.BufferedStreamEnabled = true
	props.BufferSize = streamBufferSize
	opts := []file.ReadOption{file.WithReadProps(props)}
	cache, _ := src.(scanner.MetadataCache)
	if _, ok := mem.(*memory.GoAllocator); ok {
		// Go's allocator does nothing on Free; the pool reuses the
		// decoded columns' buffers once the caller releases the batches
		// (see pool.go). Other allocators (checked, C) are used as given.
		mem = arrayBuffers
	}
	if cache != nil {
		if v, ok := cache.CachedMetadata(footerCacheKind); ok {
			if entry, ok := v.(*footerEntry); ok {
				return openDescribed(ctx, name, src, mem, props, pages, opts, entry)
			}
		}
	}
	if encryptedFooter(src) { // read the tail's magic
		return nil, fmt.Errorf("%s: the footer is encrypted (encrypted Parquet needs keys, which this server does not have): %w", name, scanner.ErrUnsupported)
	}
	// Check the schema limits and reserve what decoding will take, before
	// decoding (footershape.go).
	footer, decoded, key, err := metadataShape(name, src, src.Size())
	if err != nil {
		return nil, err
	}
	if err := reserveMetadata(ctx, name, decoded); err != nil {
		return nil, err
	}
	md := decodeFooter(footer, src.Size())
	if md != nil {
		opts = append(opts, file.WithMetadata(md))
	}
	ov := &overlaySource{src: src}
	pf, err := newParquetReader(name, ov, src.Size(), opts)
	if err != nil {
		return nil, classify(name+": reading Parquet footer", err)
	}
	// A footer decoded here from the bytes its key was read from may take
	// its schemas from a file of the same shape (shapes.go); arrow-go's
	// own path (md nil) may have patched what it decoded.
	var sh *shape
	if md != nil {
		sh = shapes.get(key)
	}
	var fr *pqarrow.FileReader
	if sh == nil {
		if fr, sh, err = describeShape(name, pf, mem); err != nil {
			pf.Close()
			return nil, err
		}
		if md != nil {
			shapes.put(key, sh, pf.MetaData().Schema.NumColumns())
		}
	} else if err := checkFooter(name, pf.MetaData(), sh.schema); err != nil {
		pf.Close()
		return nil, err
	}
	manifest, sc := sh.manifest, sh.schema
	entry := &footerEntry{md: pf.MetaData(), manifest: manifest, readManifest: sh.readManifest, schema: sc, shape: sh}
	if cache != nil {
		// The parsed footer is a few times its encoded size, and grows
		// with its columns and chunks (footershape.go); the manifest and
		// schema add about as much again per column.
		size := max(decoded, 4*int64(pf.MetaData().Size())+1024) + footerEntryBytesPerColumn*int64(pf.MetaData().Schema.NumColumns())
		cache.CacheMetadata(footerCacheKind, entry, size)
	}
	return &File{name: name, src: ov, pf: pf, fr: fr, entry: entry, manifest: manifest, schema: sc, mem: mem, props: props, pages: pages, batchRows: DefaultBatchRows}, nil
}

// describeShape makes pqarrow's reader of a file and derives its shape:
// the schema manifest, the copy it reads with, and the Arrow schema Open
// reports, checked.
func describeShape(name string, pf *file.Reader, mem memory.Allocator) (*pqarrow.FileReader, *shape, error) {
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: DefaultBatchRows, PreAllocBinaryData: true}, mem)
	if err != nil {
		return nil, nil, classify(name+": mapping Parquet schema to Arrow", err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, nil, classify(name+": mapping Parquet schema to Arrow", err)
	}
	if err := checkFooter(name, pf.MetaData(), sc); err != nil {
		return nil, nil, err
	}
	if err := scanner.CheckNesting(name, sc); err != nil { // footershape.go
		return nil, nil, err
	}
	manifest := fr.Manifest
	fr.Manifest = readManifest(manifest, pf.MetaData().Schema)
	sc = readSchema(sc, manifest, pf.MetaData().Schema)
	sc = withFileMetadata(sc, pf.MetaData().KeyValueMetadata())
	return fr, &shape{manifest: manifest, readManifest: fr.Manifest, schema: sc}, nil
}

// openDescribed opens a file whose footer an earlier Open of the same
// object (name, size and version) decoded and described: nothing is
// decoded again, and pqarrow's reader, which would build the schema
// manifest once more (decoding the stored Arrow schema), is made only if
// a read needs pqarrow (arrowReader).
func openDescribed(ctx context.Context, name string, src scanner.Source, mem memory.Allocator, props *parquet.ReaderProperties,
	pages *chargingAllocator, opts []file.ReadOption, entry *footerEntry) (*File, error) {
	if err := reserveMetadata(ctx, name, cachedBytes(entry.md)); err != nil {
		return nil, err
	}
	ov := &overlaySource{src: src}
	pf, err := newParquetReader(name, ov, src.Size(), append(opts, file.WithMetadata(entry.md)))
	if err != nil {
		return nil, classify(name+": reading Parquet footer", err)
	}
	return &File{name: name, src: ov, pf: pf, entry: entry, manifest: entry.manifest, schema: entry.schema, mem: mem, props: props,
		pages: pages, batchRows: DefaultBatchRows}, nil
}

// footerCacheKind is the metadata cache's kind for a Parquet footer
// (a *footerEntry).
const footerCacheKind = "parquet"

// footerEntryBytesPerColumn is roughly what a leaf column adds to a
// footerEntry beside the decoded footer: its manifest node, twice (the
// read manifest's copy), and its Arrow field.
const footerEntryBytesPerColumn = 512

// footerEntry is what Open derives from a footer alone, kept in the
// metadata cache, keyed by the object's name, size and version (a changed
// file is another key), so that the next Open of the object (planning,
// then the DoGet that reads it, then every later scan) decodes and
// describes nothing again. Everything but selected is read-only once made,
// shared by the Files of every scan of the object.
type footerEntry struct {
	md *metadata.FileMetaData
	// manifest is pqarrow's schema manifest of the file, readManifest the
	// copy pqarrow reads with (readManifest), and schema the file's Arrow
	// schema as Open reports it.
	manifest, readManifest *pqarrow.SchemaManifest
	schema                 *arrow.Schema
	// shape is where the three came from, shared with files of the same
	// schema (shapes.go); nil when not known.
	shape *shape

	mu sync.Mutex
	// selected are what Project derived for selections of leaves, by
	// selectionKey: a few per file, as scans ask the same columns again.
	selected map[string]*selection
}

// selection is what Project derives from the footer for a set of leaves.
type selection struct {
	// schema is pqarrow's schema of the top-level fields holding the
	// leaves; nil until asked.
	schema *arrow.Schema
	// groups are the row groups' sizes, without and with the native
	// reader holding the chunks (groupSizes); nil until asked.
	groups [2][]scanner.Group
}

// remember runs f on the entry's selection for key under the entry's
// lock, making the selection when there is room.
func (e *footerEntry) remember(key string, f func(*selection)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.selected[key]
	if s == nil {
		if len(e.selected) >= maxSelections {
			return
		}
		if e.selected == nil {
			e.selected = map[string]*selection{}
		}
		s = &selection{}
		e.selected[key] = s
	}
	f(s)
}

// recall returns what get finds in the entry's selection for key.
func recall[T any](e *footerEntry, key string, get func(*selection) T) (v T) {
	if e == nil {
		return v
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.selected[key]; s != nil {
		v = get(s)
	}
	return v
}

// maxSelections bounds footerEntry.selected.
const maxSelections = 16

// selectionKey is a map key for a list of leaf columns.
func selectionKey(leaves []int) string {
	b := make([]byte, 0, 2*len(leaves))
	for _, l := range leaves {
		b = binary.AppendUvarint(b, uint64(l))
	}
	return string(b)
}

// arrowReader is pqarrow's reader of the file, made on first use when
// Open took the footer from the cache.
func (f *File) arrowReader() (*pqarrow.FileReader, error) {
	f.frOnce.Do(func() {
		if f.fr != nil {
			return
		}
		fr, err := pqarrow.NewFileReader(f.pf, pqarrow.ArrowReadProperties{BatchSize: f.batchRows, PreAllocBinaryData: true}, f.mem)
		if err != nil {
			f.frErr = classify(f.name+": mapping Parquet schema to Arrow", err)
			return
		}
		fr.Manifest = f.entry.readManifest
		f.fr = fr
	})
	return f.fr, f.frErr
}

// selectedSchema is the schema of the top-level fields holding leaves, in
// file order, as pqarrow reads them; from the footer's entry when an
// earlier Project of the object asked the same leaves.
func (f *File) selectedSchema(leaves []int) (*arrow.Schema, error) {
	key := selectionKey(leaves)
	if sc := recall(f.entry, key, func(s *selection) *arrow.Schema { return s.schema }); sc != nil {
		return sc, nil
	}
	var sh *shape
	if f.entry != nil {
		sh = f.entry.shape
	}
	if sc := sh.selectedSchema(key); sc != nil {
		f.entry.remember(key, func(s *selection) { s.schema = sc })
		return sc, nil
	}
	fr, err := f.arrowReader()
	if err != nil {
		return nil, err
	}
	_, sc, err := fr.GetFieldReaders(context.Background(), leaves, []int{})
	if err != nil {
		return nil, classify(f.name+": resolving columns", err)
	}
	if f.entry != nil {
		f.entry.remember(key, func(s *selection) { s.schema = sc })
	}
	sh.rememberSelected(key, sc)
	return sc, nil
}

// groupSizes are the sizes of every row group's chunks of leaves (the
// Projection's Groups), a copy of the footer entry's when an earlier
// Project of the object asked the same leaves.
func (f *File) groupSizes(leaves []int, holdsChunks bool) ([]scanner.Group, error) {
	h := 0
	if holdsChunks {
		h = 1
	}
	key := selectionKey(leaves)
	if g := recall(f.entry, key, func(s *selection) []scanner.Group { return slices.Clone(s.groups[h]) }); g != nil {
		return g, nil
	}
	md := f.pf.MetaData()
	groups := make([]scanner.Group, md.NumRowGroups())
	for i := range groups {
		rg := md.RowGroup(i)
		g := scanner.Group{Rows: rg.NumRows()}
		for _, leaf := range leaves {
			cc, err := rg.ColumnChunk(leaf)
			if err != nil {
				return nil, f.chunkMetaError(i, leaf, err)
			}
			g.Bytes += cc.TotalCompressedSize()
			g.MemBytes += cc.TotalUncompressedSize()
			g.WorkBytes += chunkWorkBytes(cc.TotalCompressedSize(), cc.TotalUncompressedSize(), cc.HasDictionaryPage())
			if holdsChunks {
				g.WorkBytes += cc.TotalCompressedSize()
			}
		}
		groups[i] = g
	}
	if f.entry != nil {
		kept := slices.Clone(groups)
		f.entry.remember(key, func(s *selection) { s.groups[h] = kept })
	}
	return groups, nil
}

// withFileMetadata gives sc the file's key-value metadata, as pyarrow
// shows it: all of it but ARROW:schema. pqarrow keeps only the stored Arrow
// schema's metadata, and none at all for files without one (parquet-mr's,
// Spark's, old pyarrow's), whose writer keys pyarrow shows.
func withFileMetadata(sc *arrow.Schema, kv metadata.KeyValueMetadata) *arrow.Schema {
	if kv.Len() == 0 {
		return sc
	}
	m := scanner.CleanSchemaMetadata(arrow.NewMetadata(kv.Keys(), kv.Values()))
	return arrow.NewSchema(sc.Fields(), &m)
}

// Close releases the reader.
func (f *File) Close() error { return f.pf.Close() }

func (f *File) Format() scanner.Format { return scanner.FormatParquet }

func (f *File) Schema() *arrow.Schema { return f.schema }

func (f *File) NumRows() int64 { return f.pf.NumRows() }

type projection struct {
	leaves []int // sorted leaf column indices
	// types are the output columns' types, in request order; batches from
	// pqarrow are re-labelled to them (see retype).
	types []arrow.DataType
	// order maps each output field (request order) to its position among
	// the top-level fields pqarrow returns (file order).
	topLevel []int
	// outLeaves is the leaf column of each output column that is a
	// top-level leaf field, -1 for the others (see native.go).
	outLeaves []int
	// tops is each output column's index among the manifest's top-level
	// fields (native_mixed.go reads some through pqarrow by it).
	tops []int
	// native is the native reader's plan for the output columns, nil when
	// pqarrow reads them (see native.go).
	native   []nativeColumn
	rowsOnly bool // no column of the file is read (all missing, or none asked)
}

// Project implements scanner.File.
func (f *File) Project(columns []string) (p *scanner.Projection, err error) {
	defer scanner.Recover(&err, f.name+": resolving columns")
	manifest := f.manifest
	var leaves []int
	var missing []string
	var tops []int // top-level field index per requested column, first mention order
	seenTop := map[int]bool{}
	if len(columns) == 0 {
		for i := range manifest.Fields {
			tops = append(tops, i)
			leaves = appendLeaves(leaves, &manifest.Fields[i])
		}
	} else {
		for _, col := range columns {
			top, node := resolve(manifest.Fields, col)
			if node == nil {
				missing = append(missing, col)
				continue
			}
			if !seenTop[top] {
				seenTop[top] = true
				tops = append(tops, top)
			}
			leaves = appendLeaves(leaves, node)
		}
	}
	leaves = uniqueSorted(leaves)

	impl := &projection{leaves: leaves, rowsOnly: len(leaves) == 0}
	var fields []arrow.Field
	if !impl.rowsOnly {
		sc, err := f.selectedSchema(leaves)
		if err != nil {
			return nil, err
		}
		// sc has the selected top-level fields in file order; map each to its
		// position so Read can put them in request order.
		pos := map[string]int{}
		for i := range sc.NumFields() { // Fields() would copy them
			pos[sc.Field(i).Name] = i
		}
		selected := map[int]bool{}
		for _, l := range leaves {
			selected[l] = true
		}
		descr := f.pf.MetaData().Schema
		// Sized once: Project runs twice per file and scan (plan, DoGet).
		impl.topLevel, impl.outLeaves, impl.tops = make([]int, 0, len(tops)), make([]int, 0, len(tops)), make([]int, 0, len(tops))
		impl.types, fields = make([]arrow.DataType, 0, len(tops)), make([]arrow.Field, 0, len(tops))
		for _, t := range tops {
			i, ok := pos[manifest.Fields[t].Field.Name]
			if !ok {
				continue
			}
			impl.topLevel = append(impl.topLevel, i)
			outLeaf := -1
			if manifest.Fields[t].IsLeaf() {
				outLeaf = manifest.Fields[t].ColIndex
			}
			impl.outLeaves = append(impl.outLeaves, outLeaf)
			impl.tops = append(impl.tops, t)
			fld := sc.Field(i)
			typ := storedZone(prunedType(&manifest.Fields[t], selected, descr), manifest, t)
			impl.types = append(impl.types, typ)
			fields = append(fields, arrow.Field{Name: fld.Name, Type: typ, Nullable: fld.Nullable, Metadata: fld.Metadata})
		}
	}

	// The native reader holds a row group's chunks while it decodes it.
	// Lent chunks are in the IO scheduler's budget already; a mapped
	// file's are copied out, and count here.
	impl.native = f.nativeColumns(impl)
	holdsChunks := isMapped(f.src.src) && impl.native != nil
	groups, err := f.groupSizes(leaves, holdsChunks)
	if err != nil {
		return nil, err
	}
	// The file's schema and field metadata ride along: the scan's come
	// from its first file (scanner.Unify).
	meta := f.schema.Metadata()
	return &scanner.Projection{
		Schema:  arrow.NewSchema(fields, &meta),
		Missing: missing,
		Groups:  groups,
		Impl:    impl,
	}, nil
}

// typicalPageSize is the data page size most writers aim at (parquet-mr,
// Arrow C++ and arrow-go all default to 1 MiB); the footer does not say.
const typicalPageSize = 1 << 20

// chunkWorkBytes estimates what the reader holds while it decodes a column
// chunk: its stream buffer (grown to a page when pages are larger), the
// compressed page, the decompressed page, the dictionary when there is one,
// and decoder state.
func chunkWorkBytes(compressed, uncompressed int64, dictionary bool) int64 {
	cpage := min(compressed, typicalPageSize)
	page := min(uncompressed, typicalPageSize)
	buf := min(compressed, max(streamBufferSize, cpage))
	n := buf + cpage + page + 16<<10
	if dictionary {
		n += page
	}
	return n
}

// resolve finds the schema node a column name denotes: a top-level field
// name, or a dotted path through nested fields. Field names that contain
// dots are matched whole first.
func resolve(fields []pqarrow.SchemaField, name string) (top int, node *pqarrow.SchemaField) {
	for i := range fields {
		if fields[i].Field.Name == name {
			return i, &fields[i]
		}
	}
	for i := range fields {
		if fn := fields[i].Field.Name; strings.HasPrefix(name, fn+".") {
			if n := descend(&fields[i], name[len(fn)+1:]); n != nil {
				return i, n
			}
		}
	}
	return -1, nil
}

func descend(parent *pqarrow.SchemaField, rest string) *pqarrow.SchemaField {
	for i := range parent.Children {
		c := &parent.Children[i]
		cn := c.Field.Name
		if cn == rest {
			return c
		}
		if strings.HasPrefix(rest, cn+".") {
			if n := descend(c, rest[len(cn)+1:]); n != nil {
				return n
			}
		}
	}
	// Lists and maps have one child (element, or the key-value struct)
	// whose name users rarely know; let paths look through it.
	if len(parent.Children) == 1 {
		switch parent.Field.Type.ID() {
		case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
			return descend(&parent.Children[0], rest)
		}
	}
	return nil
}

func appendLeaves(dst []int, n *pqarrow.SchemaField) []int {
	if n.IsLeaf() {
		return append(dst, n.ColIndex)
	}
	for i := range n.Children {
		dst = appendLeaves(dst, &n.Children[i])
	}
	return dst
}

func uniqueSorted(s []int) []int {
	if len(s) == 0 {
		return s
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// Read implements scanner.File.
func (f *File) Read(ctx context.Context, p *scanner.Projection, opts scanner.ReadOptions, emit func(arrow.RecordBatch) error) (err error) {
	impl := p.Impl.(*projection)
	what := f.name + ": decoding row groups"
	defer scanner.Recover(&err, what)
	batchRows := opts.BatchRows
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	if impl.rowsOnly {
		return f.emitRowsOnly(p, opts, batchRows, emit)
	}
	f.batchRows = batchRows
	if f.fr != nil {
		f.fr.Props.BatchSize = batchRows
	}
	// The page index decides first (pageprune.go), then the data it
	// selects is announced and read.
	acct := newAccount(ctx, opts.Budget)
	plans, err := f.planRows(opts.Groups, impl, opts, acct)
	if err != nil {
		return err
	}
	if len(plans) == 0 {
		return nil // no row can match
	}
	f.dictLeaves = filterDictLeaves(p, impl, opts)
	defer func() { f.dictLeaves = nil }()
	if lr := f.lateRead(p, impl, plans, opts); lr != nil {
		return lr.read(ctx, plans, batchRows, acct, emit)
	}
	ranges, err := f.planRanges(plans, impl)
	if err != nil {
		return err
	}
	if selective(plans) {
		scanner.PrefetchSelective(f.src.src, ranges)
	} else {
		scanner.Prefetch(f.src.src, ranges)
	}
	if impl.native != nil && !f.noNative {
		return f.readNative(ctx, p, impl, impl.native, plans, batchRows, acct, emit)
	}
	groups := make([]int, len(plans))
	for i, pl := range plans {
		groups[i] = pl.g
	}
	return f.readPQ(ctx, p, impl, groups, acct, emit)
}

// planRanges lists the byte ranges the plans read, in reading order: the
// selected pieces of a chunk where the plan has them, else the chunk.
func (f *File) planRanges(plans []groupPlan, impl *projection) ([]scanner.Range, error) {
	var out []scanner.Range
	for _, pl := range plans {
		native := impl.native != nil && pl.pieces != nil && f.nativeGroup(pl.g, impl.native)
		for _, leaf := range impl.leaves {
			if pieces, ok := pl.pieces[leaf]; ok && native {
				for _, pc := range pieces {
					out = append(out, scanner.Range{Off: pc.off, Len: pc.n})
				}
				continue
			}
			rs, err := f.chunkRanges([]int{pl.g}, []int{leaf})
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
		}
	}
	return out, nil
}

// readPQ reads the chosen row groups (nil: all) with pqarrow, within the
// page limits of the footer and charging acct (pqlimits.go).
func (f *File) readPQ(ctx context.Context, p *scanner.Projection, impl *projection, groups []int, acct *account, emit func(arrow.RecordBatch) error) (err error) {
	what := f.name + ": decoding row groups"
	all := groups
	if all == nil {
		all = make([]int, f.pf.NumRowGroups())
		for i := range all {
			all[i] = i
		}
	}
	if err := f.checkCodecs(all, impl.leaves); err != nil {
		return err
	}
	limits := f.limitsFor(all, impl.leaves)
	f.props.MaxCompressedPageSize, f.props.MaxUncompressedPageSize = limits.compressed, limits.uncompressed
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.pages.begin(acct, cancel)
	defer func() {
		if berr := f.pages.end(); berr != nil {
			err = fmt.Errorf("%s: %w", what, berr)
		}
	}()
	fr, err := f.arrowReader()
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(rctx, impl.leaves, groups)
	if err != nil {
		return classify(what, err)
	}
	defer rr.Release()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := rr.Read()
		if berr := f.pages.err(); berr != nil {
			return berr // reported by the deferred end
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return classify(what, err)
		}
		out, err := reorder(rec, impl, p.Schema, f.mem)
		if err != nil {
			return classify(what, err)
		}
		if err := emit(out); err != nil {
			return err
		}
	}
}

// chunkRanges lists the byte ranges of the chosen column chunks, in the
// order pqarrow reads them (row group by row group), computed exactly as
// arrow-go's row group reader does, so that each of its reads falls inside
// one announced range.
func (f *File) chunkRanges(groups, leaves []int) ([]scanner.Range, error) {
	md := f.pf.MetaData()
	if len(groups) == 0 {
		groups = make([]int, md.NumRowGroups())
		for i := range groups {
			groups[i] = i
		}
	}
	padOld := md.WriterVersion().LessThan(metadata.Parquet816FixedVersion)
	var out []scanner.Range
	for _, g := range groups {
		rg := md.RowGroup(g)
		for _, leaf := range leaves {
			cc, err := rg.ColumnChunk(leaf)
			if err != nil {
				return nil, f.chunkMetaError(g, leaf, err)
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
				start = cc.DictionaryPageOffset()
			}
			n := cc.TotalCompressedSize()
			if start < 0 || n <= 0 || start+n > f.src.Size() {
				continue // arrow-go reports the bad metadata when it reads
			}
			if padOld {
				// PARQUET-816: old parquet-mr left the dictionary page
				// header out of the chunk size; arrow-go reads 100 bytes more.
				n += min(100, f.src.Size()-(start+n))
			}
			out = append(out, scanner.Range{Off: start, Len: n})
		}
	}
	return out, nil
}

// reorder builds a batch with the projection's schema from a batch in file
// order. The returned batch is the caller's; rec stays owned by pqarrow.
func reorder(rec arrow.RecordBatch, impl *projection, sc *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(impl.topLevel))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, j := range impl.topLevel {
		d, err := retype(rec.Column(j).Data(), impl.types[i], mem)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", sc.Field(i).Name, err)
		}
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	return array.NewRecordBatch(sc, cols, rec.NumRows()), nil
}

// prunedType is the Arrow type of a schema node restricted to the selected
// leaves: a struct keeps only the children that hold selected leaves. It is
// computed here because pqarrow v18.8.0 reports the unpruned type of a
// struct nested in a struct while its arrays hold only the selected
// children. INT96 timestamps lose pqarrow's UTC zone: pyarrow and Spark
// read them as zone-less timestamps.
func prunedType(n *pqarrow.SchemaField, selected map[int]bool, descr *schema.Schema) arrow.DataType {
	if n.IsLeaf() {
		if ts, ok := n.Field.Type.(*arrow.TimestampType); ok && descr.Column(n.ColIndex).PhysicalType() == parquet.Types.Int96 {
			return &arrow.TimestampType{Unit: ts.Unit}
		}
		return n.Field.Type
	}
	switch t := n.Field.Type.(type) {
	case *arrow.StructType:
		var fields []arrow.Field
		for i := range n.Children {
			c := &n.Children[i]
			if hasSelected(c, selected) {
				fields = append(fields, arrow.Field{Name: c.Field.Name, Type: prunedType(c, selected, descr), Nullable: c.Field.Nullable, Metadata: c.Field.Metadata})
			}
		}
		return arrow.StructOf(fields...)
	case *arrow.ListType:
		if e, ok := legacyListOfLists(n, descr); ok {
			return arrow.ListOfField(e)
		}
		if len(n.Children) == 1 {
			e := unannotatedElement(n, t.ElemField(), descr)
			e.Type = prunedType(&n.Children[0], selected, descr)
			return arrow.ListOfField(e)
		}
	case *arrow.LargeListType:
		if len(n.Children) == 1 {
			e := t.ElemField()
			e.Type = prunedType(&n.Children[0], selected, descr)
			return arrow.LargeListOfField(e)
		}
	case *arrow.FixedSizeListType:
		if len(n.Children) == 1 {
			e := t.ElemField()
			e.Type = prunedType(&n.Children[0], selected, descr)
			return arrow.FixedSizeListOfField(t.Len(), e)
		}
	case *arrow.MapType:
		// pqarrow reads both key and value whatever is selected.
		if len(n.Children) != 1 {
			break
		}
		if kv, ok := prunedType(&n.Children[0], nil, descr).(*arrow.StructType); ok && kv.NumFields() == 2 {
			m := arrow.MapOfFields(kv.Field(0), kv.Field(1))
			m.KeysSorted = t.KeysSorted
			return m
		}
	}
	return n.Field.Type
}

// readSchema is sc with each field's type as Read returns it (prunedType
// with every leaf selected): the schema pqarrow maps and the batches
// scand sends differ where prunedType corrects pqarrow.
func readSchema(sc *arrow.Schema, m *pqarrow.SchemaManifest, descr *schema.Schema) *arrow.Schema {
	if len(m.Fields) != sc.NumFields() {
		return sc
	}
	fields := sc.Fields()
	for i := range fields {
		fields[i].Type = storedZone(prunedType(&m.Fields[i], nil, descr), m, i)
	}
	md := sc.Metadata()
	return arrow.NewSchema(fields, &md)
}

func hasSelected(n *pqarrow.SchemaField, selected map[int]bool) bool {
	if selected == nil {
		return true // every leaf
	}
	if n.IsLeaf() {
		return selected[n.ColIndex]
	}
	for i := range n.Children {
		if hasSelected(&n.Children[i], selected) {
			return true
		}
	}
	return false
}

// retype returns d as type t. t has d's layout, differing only in field
// lists pqarrow got wrong, a timestamp's zone, or list element names and
// nullability, except for the leaves readManifest changed (converted by
// retypeLeaf) and a one-field struct pqarrow puts where pyarrow reads a
// list of lists (unwrapped). Nothing else is copied.
func retype(d arrow.ArrayData, t arrow.DataType, mem memory.Allocator) (arrow.ArrayData, error) {
	if d.DataType().ID() == arrow.STRUCT && t.ID() != arrow.STRUCT {
		return unwrapStruct(d, t, mem)
	}
	children := d.Children()
	if len(children) == 0 {
		return retypeLeaf(d, t, mem)
	}
	if d.DataType().ID() != t.ID() {
		return nil, fmt.Errorf("decoded %s where the schema says %s", d.DataType(), t)
	}
	var childTypes []arrow.DataType
	switch t := t.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			childTypes = append(childTypes, f.Type)
		}
	case arrow.ListLikeType:
		childTypes = []arrow.DataType{t.Elem()}
	}
	if len(childTypes) != len(children) {
		return nil, fmt.Errorf("decoded %s with %d children where the schema says %s", d.DataType(), len(children), t)
	}
	newChildren := make([]arrow.ArrayData, len(children))
	defer func() {
		for _, c := range newChildren {
			if c != nil {
				c.Release()
			}
		}
	}()
	same := arrow.TypeEqual(d.DataType(), t)
	for i, c := range children {
		nc, err := retype(c, childTypes[i], mem)
		if err != nil {
			return nil, err
		}
		newChildren[i] = nc
		same = same && nc == c
	}
	if same {
		d.Retain()
		return d, nil
	}
	return array.NewData(t, d.Len(), d.Buffers(), newChildren, d.NullN(), d.Offset()), nil
}

// retypeLeaf returns a childless array as type t: itself when its type
// is t, converted from the types readManifest reads (types.go), or
// relabelled when only names or a timestamp's zone differ.
func retypeLeaf(d arrow.ArrayData, t arrow.DataType, mem memory.Allocator) (arrow.ArrayData, error) {
	dt := d.DataType()
	switch {
	case arrow.TypeEqual(dt, t):
		d.Retain()
		return d, nil
	case dt.ID() == arrow.EXTENSION && t.ID() == arrow.TIMESTAMP:
		if _, ok := dt.(*int96Raw); ok {
			return toTimestamp(d, t.(*arrow.TimestampType), mem)
		}
	case dt.ID() == arrow.INT64 && t.ID() == arrow.DURATION, dt.ID() == t.ID():
		return array.NewData(t, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset()), nil
	}
	return nil, fmt.Errorf("decoded %s where the schema says %s", dt, t)
}

// unwrapStruct reads a one-field struct without nulls as its field: pqarrow
// reads a legacy two-level list whose repeated group is itself a LIST
// (old_list_structure.parquet) as list<struct<list<T>>>, pyarrow as
// list<list<T>>; the struct level holds nothing of its own.
func unwrapStruct(d arrow.ArrayData, t arrow.DataType, mem memory.Allocator) (arrow.ArrayData, error) {
	if len(d.Children()) != 1 || d.NullN() != 0 {
		return nil, fmt.Errorf("decoded %s where the schema says %s", d.DataType(), t)
	}
	c := array.NewSliceData(d.Children()[0], int64(d.Offset()), int64(d.Offset()+d.Len()))
	defer c.Release()
	return retype(c, t, mem)
}

// emitRowsOnly answers a projection that reads no column of this file
// (every requested column is missing here): it emits batches of zero
// columns with the row counts of the chosen row groups, so the server can
// fill them with nulls.
func (f *File) emitRowsOnly(p *scanner.Projection, opts scanner.ReadOptions, batchRows int64, emit func(arrow.RecordBatch) error) error {
	groups := opts.Groups
	if groups == nil {
		for i := range p.Groups {
			groups = append(groups, i)
		}
	}
	for _, g := range groups {
		for left := p.Groups[g].Rows; left > 0; {
			n := min(left, batchRows)
			if err := emit(array.NewRecordBatch(p.Schema, nil, n)); err != nil {
				return err
			}
			left -= n
		}
	}
	return nil
}

// classify wraps an arrow-go error as unsupported or corrupt. Errors that
// are classified already (scand's own checks, the budget's) and
// cancellation keep their identity. arrow-go's sentinel
// arrow.ErrNotImplemented means unsupported; the few arrow-go errors that
// have neither type nor sentinel are told by their messages, in one table
// (arrowGoMessages), each entry pinned by a test that produces the real
// error (classify_test.go); everything else is corruption.
func classify(what string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, scanner.ErrCorrupt), errors.Is(err, scanner.ErrUnsupported):
		return fmt.Errorf("%s: %w", what, err)
	case errors.Is(err, arrow.ErrNotImplemented):
		return fmt.Errorf("%s: %v: %w", what, err, scanner.ErrUnsupported)
	}
	msg := err.Error()
	for _, m := range arrowGoMessages {
		if strings.Contains(msg, m.fragment) {
			return fmt.Errorf("%s: %s%s: %w", what, msg, m.hint, m.class)
		}
	}
	return fmt.Errorf("%s: %v: %w", what, msg, scanner.ErrCorrupt)
}

// arrowGoMessages are the arrow-go v18 errors scand tells apart that have
// no type or sentinel, by a fragment of their message. An upgrade that
// rewords one fails TestClassifyArrowGoMessages.
var arrowGoMessages = []struct {
	fragment string
	class    error
	hint     string // appended to the message
}{
	// pqarrow's schema mapping of a MAP with optional keys.
	{"MAP keys must be required", scanner.ErrUnsupported, ""},
}

// checkCodecs refuses, before pqarrow reads them, chunks whose codec is
// not one this reader decodes: LZO and the like are unsupported, an id
// outside the format's enum is a damaged footer.
func (f *File) checkCodecs(groups, leaves []int) error {
	md := f.pf.MetaData()
	for _, g := range groups {
		rg := md.RowGroup(g)
		for _, leaf := range leaves {
			cc, err := rg.ColumnChunk(leaf)
			if err != nil {
				return f.chunkMetaError(g, leaf, err)
			}
			c := cc.Compression()
			if _, err := compress.GetCodec(c); err != nil {
				if c < compress.Codecs.Uncompressed || c > compress.Codecs.Lz4Raw {
					return fmt.Errorf("%s: row group %d column %q: unknown compression codec id %d: %w", f.name, g, cc.PathInSchema().String(), int(c), scanner.ErrCorrupt)
				}
				return fmt.Errorf("%s: row group %d column %q: %s compression is not supported: %w", f.name, g, cc.PathInSchema().String(), c, scanner.ErrUnsupported)
			}
		}
	}
	return nil
}

// chunkMetaError classifies a column chunk's unreadable metadata: in a
// file whose footer declares encryption, it is an encrypted column (this
// server has no keys); otherwise the footer is damaged.
func (f *File) chunkMetaError(g, leaf int, err error) error {
	what := fmt.Sprintf("%s: row group %d column %d metadata", f.name, g, leaf)
	if f.pf.MetaData().IsSetEncryptionAlgorithm() {
		return fmt.Errorf("%s: %v (encrypted Parquet needs keys, which this server does not have): %w", what, err, scanner.ErrUnsupported)
	}
	return classify(what, err)
}

// checkFooter refuses footers whose claims no reader can honour: negative
// row counts (for the file or a row group), and field names that are not
// UTF-8 (Arrow requires UTF-8 names; the Flight schema would carry bytes a
// client cannot decode). pyarrow refuses both too.
func checkFooter(name string, md *metadata.FileMetaData, sc *arrow.Schema) error {
	if n := md.NumRows; n < 0 {
		return fmt.Errorf("%s: the footer claims %d rows: %w", name, n, scanner.ErrCorrupt)
	}
	for i := range md.NumRowGroups() {
		if n := md.RowGroup(i).NumRows(); n < 0 {
			return fmt.Errorf("%s: row group %d claims %d rows: %w", name, i, n, scanner.ErrCorrupt)
		}
	}
	if bad, ok := nonUTF8Name(sc.Fields()); ok {
		return fmt.Errorf("%s: field name %q is not valid UTF-8: %w", name, bad, scanner.ErrCorrupt)
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

// encryptedFooter reports whether src ends with the magic of a Parquet
// file whose footer is encrypted ("PARE").
func encryptedFooter(src scanner.Source) bool {
	var tail [4]byte
	n := src.Size()
	if n < 8 {
		return false
	}
	_, err := src.ReadAt(tail[:], n-4)
	return err == nil && string(tail[:]) == "PARE"
}
