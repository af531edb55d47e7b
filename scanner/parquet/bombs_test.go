package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// Decompression and allocation bombs: tiny files whose headers claim, or
// whose pages expand to, gigabytes. Each must fail fast (DATA_LOSS when a
// claim contradicts the footer, the budget's error when the claim is
// plausible but over budget) without the memory it claims.
//
// The files are built here with a hand-made Thrift compact writer (no
// writer produces them) and kept in testdata/bombs for the e2e tests;
// SCAND_UPDATE_BOMBS=1 rewrites them.

// compactWriter writes Thrift compact protocol: structs, lists and the
// scalar fields a Parquet footer and page header need.
type compactWriter struct {
	b    []byte
	last []int16 // the previous field id of each open struct
}

func (w *compactWriter) field(id int16, typ byte) {
	top := &w.last[len(w.last)-1]
	if d := id - *top; d > 0 && d <= 15 {
		w.b = append(w.b, byte(d)<<4|typ)
	} else {
		w.b = append(w.b, typ)
		w.b = append(w.b, zigzagBytes(int64(id))...)
	}
	*top = id
}

func (w *compactWriter) begin() { w.last = append(w.last, 0) }
func (w *compactWriter) end()   { w.b = append(w.b, tcStop); w.last = w.last[:len(w.last)-1] }
func (w *compactWriter) i32(id int16, v int32) {
	w.field(id, tcI32)
	w.b = append(w.b, zigzagBytes(int64(v))...)
}
func (w *compactWriter) i64(id int16, v int64) {
	w.field(id, tcI64)
	w.b = append(w.b, zigzagBytes(v)...)
}
func (w *compactWriter) str(id int16, s string) {
	w.field(id, tcBinary)
	w.b = append(w.b, uvarintBytes(uint64(len(s)))...)
	w.b = append(w.b, s...)
}
func (w *compactWriter) structField(id int16, body func()) {
	w.field(id, tcStruct)
	w.begin()
	body()
	w.end()
}

// list writes a list field of n elements of type elem; each calls
// element(i), which writes a struct's fields or a scalar value.
func (w *compactWriter) list(id int16, elem byte, n int, element func(i int)) {
	w.field(id, tcList)
	if n < 15 {
		w.b = append(w.b, byte(n)<<4|elem)
	} else {
		w.b = append(w.b, 0xf0|elem)
		w.b = append(w.b, uvarintBytes(uint64(n))...)
	}
	for i := range n {
		if elem == tcStruct {
			w.begin()
			element(i)
			w.end()
		} else {
			element(i)
		}
	}
}

// bombPage is a page of a hand-made column chunk.
type bombPage struct {
	typ          int32 // pageTypeDataPage or pageTypeDictionaryPage
	uncompressed int32 // declared
	numValues    int32
	encoding     int32 // 0 PLAIN, 8 RLE_DICTIONARY
	body         []byte
}

func (p bombPage) bytes() []byte {
	w := &compactWriter{}
	w.begin()
	w.i32(1, p.typ)
	w.i32(2, p.uncompressed)
	w.i32(3, int32(len(p.body)))
	if p.typ == pageTypeDictionaryPage {
		w.structField(7, func() { w.i32(1, p.numValues); w.i32(2, p.encoding) })
	} else {
		w.structField(5, func() { w.i32(1, p.numValues); w.i32(2, p.encoding); w.i32(3, 3); w.i32(4, 3) })
	}
	w.end()
	return append(w.b, p.body...)
}

// bombFile describes a file of required INT64 columns, one row group,
// every column the same chunk.
type bombFile struct {
	rows  int64
	codec int32 // 0 UNCOMPRESSED, 1 SNAPPY, 6 ZSTD
	cols  int
	pages []bombPage
	// declared overrides the chunk's total_uncompressed_size (0: the
	// headers and the pages' declared uncompressed sizes, as writers
	// compute it).
	declared int64
	// stored makes total_uncompressed_size the bytes stored (as if
	// nothing were compressed), which contradicts a lying header.
	stored bool
	// phys is the columns' physical type (0: INT64); schema, when set,
	// replaces the schema's elements (each writes one SchemaElement's
	// fields).
	phys   int32
	schema []func(w *compactWriter)
}

func (b bombFile) build() []byte {
	out := []byte("PAR1")
	type chunk struct{ off, dictOff, dataOff, size, usize int64 }
	var chunks []chunk
	for range b.cols {
		c := chunk{off: int64(len(out)), dictOff: -1}
		for _, p := range b.pages {
			pb := p.bytes()
			if p.typ == pageTypeDictionaryPage {
				c.dictOff = int64(len(out))
			} else if c.dataOff == 0 {
				c.dataOff = int64(len(out))
			}
			c.usize += int64(len(pb)-len(p.body)) + int64(p.uncompressed)
			out = append(out, pb...)
		}
		c.size = int64(len(out)) - c.off
		switch {
		case b.declared != 0:
			c.usize = b.declared
		case b.stored:
			c.usize = c.size
		}
		chunks = append(chunks, c)
	}
	w := &compactWriter{}
	w.begin()
	w.i32(1, 1)
	phys := b.phys
	if phys == 0 {
		phys = 2 // INT64
	}
	schema := b.schema
	if schema == nil {
		schema = make([]func(*compactWriter), b.cols+1)
	}
	w.list(2, tcStruct, len(schema), func(i int) {
		if schema[i] != nil {
			schema[i](w)
			return
		}
		if i == 0 {
			w.str(4, "schema")
			w.i32(5, int32(b.cols))
			return
		}
		w.i32(1, phys)
		w.i32(3, 0) // REQUIRED
		w.str(4, fmt.Sprintf("c%d", i-1))
	})
	w.i64(3, b.rows)
	w.list(4, tcStruct, 1, func(int) {
		w.list(1, tcStruct, b.cols, func(i int) {
			c := chunks[i]
			w.i64(2, c.off)
			w.structField(3, func() {
				w.i32(1, phys)
				encodings := []int32{0}
				if c.dictOff >= 0 {
					encodings = append(encodings, 8)
				}
				w.list(2, tcI32, len(encodings), func(j int) { w.b = append(w.b, zigzagBytes(int64(encodings[j]))...) })
				name := fmt.Sprintf("c%d", i)
				w.list(3, tcBinary, 1, func(int) { w.b = append(append(w.b, uvarintBytes(uint64(len(name)))...), name...) })
				w.i32(4, b.codec)
				w.i64(5, b.rows)
				w.i64(6, c.usize)
				w.i64(7, c.size)
				w.i64(9, c.dataOff)
				if c.dictOff >= 0 {
					w.i64(11, c.dictOff)
				}
			})
		})
		var total int64
		for _, c := range chunks {
			total += c.usize
		}
		w.i64(2, total)
		w.i64(3, b.rows)
	})
	w.end()
	out = append(out, w.b...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(w.b)))
	return append(out, "PAR1"...)
}

// zstdZeros is a ZSTD frame of n zero bytes made of RLE blocks (4 bytes
// per 128 KiB), declaring its content size fcs.
func zstdZeros(n, fcs int64) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // magic; single segment, 8-byte content size
	b = binary.LittleEndian.AppendUint64(b, uint64(fcs))
	for left := n; left > 0; {
		k := min(left, 128<<10)
		h := uint32(k)<<3 | 1<<1 // RLE block
		if k == left {
			h |= 1 // last
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
		left -= k
	}
	return b
}

// The bombs, by file name.
func bombs() map[string]bombFile {
	const gib = 1 << 30
	dict := bombPage{typ: pageTypeDictionaryPage, uncompressed: 8, numValues: 1, encoding: 0, body: make([]byte, 8)}
	// RLE_DICTIONARY indices: bit width 1, one run of 2^29 zeros.
	indices := slices.Concat([]byte{1}, uvarintBytes(1<<29<<1), []byte{0})
	dictData := bombPage{typ: pageTypeDataPage, uncompressed: int32(len(indices)), numValues: 1 << 29, encoding: 8, body: indices}
	zeros := zstdZeros(gib, gib)
	zstdPage := bombPage{typ: pageTypeDataPage, uncompressed: gib, numValues: gib / 8, body: zeros}
	return map[string]bombFile{
		// 137 bytes: a dictionary page and 2^29 indices in 7 bytes. The
		// row group does claim 2^29 rows, so this is plausible; decoded
		// at once, the indices alone would take 2 GiB.
		"dict-2p29-values.parquet": {rows: 1 << 29, cols: 1, pages: []bombPage{dict, dictData}},
		// The same page in a row group of one row.
		"dict-2p29-values-1-row.parquet": {rows: 1, cols: 1, pages: []bombPage{dict, dictData}},
		// 33 KB of ZSTD that expand to 1 GiB of zeros, declared by header
		// and footer alike.
		"zstd-1gib-zeros.parquet": {rows: gib / 8, codec: 6, cols: 1, pages: []bombPage{zstdPage}},
		// Eight such columns.
		"zstd-1gib-zeros-8-columns.parquet": {rows: gib / 8, codec: 6, cols: 8, pages: []bombPage{zstdPage}},
		// The same frame behind a header (and footer) that declare 8 KiB.
		"zstd-1gib-zeros-declared-8kib.parquet": {rows: 1024, codec: 6, cols: 1,
			pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 8 << 10, numValues: 1024, body: zeros}}},
		// A header that claims 2 GiB for 8 bytes of Snappy, in a chunk
		// that declares its real size.
		"header-2gib-over-8-bytes.parquet": {rows: 1, codec: 1, cols: 1, stored: true,
			pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 1<<31 - 1, numValues: 1, body: []byte{6, 0x14, 0, 0, 0, 0, 0, 0}}}},
		// The same with a footer that claims 2 GiB too.
		"header-2gib-over-8-bytes-footer-too.parquet": {rows: 1, codec: 1, cols: 1, declared: 1 << 31,
			pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 1<<31 - 1, numValues: 1, body: []byte{6, 0x14, 0, 0, 0, 0, 0, 0}}}},
	}
}

// capReserver is a test budget of cap bytes that fails a reservation that
// does not fit, and counts what is held.
type capReserver struct {
	mu        sync.Mutex
	cap, held int64
	peak      int64
}

var errTestBudget = errors.New("test budget exceeded")

func (r *capReserver) Reserve(ctx context.Context, n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held+n > r.cap {
		return fmt.Errorf("%d bytes more than the %d held of %d: %w", n, r.held, r.cap, errTestBudget)
	}
	r.held += n
	r.peak = max(r.peak, r.held)
	return ctx.Err()
}

func (r *capReserver) Release(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held -= n
	if r.held < 0 {
		panic(fmt.Sprintf("released %d bytes more than reserved", -r.held))
	}
}

func (r *capReserver) Held() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

var errStop = errors.New("stop after the first batch")

// readFirstBatch opens data and reads its first batch (as a scan with
// limit 1 does), returning the error and the bytes allocated meanwhile.
func readFirstBatch(t *testing.T, data []byte, native bool, budget scanner.Reserver) (err error, allocated uint64) {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = func() error {
		f, err := Open(context.Background(), "bomb.parquet", newLendingSource(data), memory.DefaultAllocator)
		if err != nil {
			return err
		}
		defer f.Close()
		f.noNative = !native
		p, err := f.Project(nil)
		if err != nil {
			return err
		}
		err = f.Read(context.Background(), p, scanner.ReadOptions{BatchRows: 1024, Mem: memory.DefaultAllocator, Budget: budget},
			func(rec arrow.RecordBatch) error { rec.Release(); return errStop })
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	}()
	runtime.ReadMemStats(&after)
	return err, after.TotalAlloc - before.TotalAlloc
}

func TestBombsFailFastWithinMemory(t *testing.T) {
	const budget = 64 << 20
	const maxAlloc = 8 << 20
	// want is the outcome per path: "corrupt", "budget" or "ok" (the
	// first batch reads within memory: the file is what it says).
	cases := []struct {
		name            string
		native, pqarrow string
	}{
		// Plausible (the row group claims the rows): both readers decode
		// the indices a batch at a time.
		{"dict-2p29-values.parquet", "ok", "ok"},
		// pqarrow reads the row group's one row and ignores the rest of
		// the page, as pyarrow does; the native reader checks the page
		// against the row group first.
		{"dict-2p29-values-1-row.parquet", "corrupt", "ok"},
		{"zstd-1gib-zeros.parquet", "budget", "corrupt"},
		{"zstd-1gib-zeros-8-columns.parquet", "budget", "corrupt"},
		{"zstd-1gib-zeros-declared-8kib.parquet", "corrupt", "corrupt"},
		{"header-2gib-over-8-bytes.parquet", "corrupt", "corrupt"},
		{"header-2gib-over-8-bytes-footer-too.parquet", "budget", "corrupt"},
	}
	all := bombs()
	for _, c := range cases {
		data := all[c.name].build()
		for _, native := range []bool{true, false} {
			want := c.pqarrow
			if native {
				want = c.native
			}
			t.Run(fmt.Sprintf("%s/native=%v", c.name, native), func(t *testing.T) {
				r := &capReserver{cap: budget}
				err, allocated := readFirstBatch(t, data, native, r)
				var got string
				switch {
				case err == nil:
					got = "ok"
				case errors.Is(err, errTestBudget):
					got = "budget"
				case errors.Is(err, scanner.ErrCorrupt):
					got = "corrupt"
				default:
					got = "other"
				}
				if got != want {
					t.Errorf("got %s (%v), want %s", got, err, want)
				}
				if allocated > maxAlloc {
					t.Errorf("allocated %d MiB (%v), want at most %d MiB", allocated>>20, err, maxAlloc>>20)
				}
				if h := r.Held(); h != 0 {
					t.Errorf("%d bytes of budget still held after the read", h)
				}
				t.Logf("%s: %d KiB allocated, %d KiB budget at peak: %v", got, allocated>>10, r.peak>>10, err)
			})
		}
	}
}

// TestBombFiles keeps testdata/bombs equal to what bombs() builds.
func TestBombFiles(t *testing.T) {
	update := os.Getenv("SCAND_UPDATE_BOMBS") != ""
	for name, b := range bombs() {
		path := filepath.Join("testdata", "bombs", name)
		data := b.build()
		if update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		saved, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(saved, data) {
			t.Errorf("%s differs from what bombs() builds (%v): run with SCAND_UPDATE_BOMBS=1", path, err)
		}
	}
}

// TestBudgetChargedAndGivenBack reads real compressed files through both
// paths with a budget: something is charged, everything is given back once
// the batches are released, and a budget too small for one page fails
// with the budget's error.
func TestBudgetChargedAndGivenBack(t *testing.T) {
	rec := nativeTestRecord(5000)
	defer rec.Release()
	for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy} {
		props := parquet.NewWriterProperties(parquet.WithCompression(codec), parquet.WithDataPageSize(8<<10))
		data := writeParquetBytes(t, rec, props, pqarrow.DefaultWriterProps())
		for _, native := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/native=%v", codec, native), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				src := newLendingSource(data)
				r := &capReserver{cap: 1 << 30}
				f, err := Open(context.Background(), "t.parquet", src, mem)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				f.noNative = !native
				cols := []string{"req", "i64", "s"} // native-readable
				if !native {
					cols = nil
				}
				p, err := f.Project(cols)
				if err != nil {
					t.Fatal(err)
				}
				var recs []arrow.RecordBatch
				err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, BatchRows: 1000, Budget: r},
					func(b arrow.RecordBatch) error { recs = append(recs, b); return nil })
				if err != nil {
					t.Fatal(err)
				}
				if native != (f.nativeGroups > 0) {
					t.Fatalf("native groups %d", f.nativeGroups)
				}
				for _, b := range recs {
					b.Release()
				}
				if r.peak == 0 {
					t.Error("nothing was charged")
				}
				if h := r.Held(); h != 0 {
					t.Errorf("%d bytes still held after the batches were released", h)
				}
				small := &capReserver{cap: 1 << 10}
				err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, BatchRows: 1000, Budget: small},
					func(b arrow.RecordBatch) error { b.Release(); return nil })
				if !errors.Is(err, errTestBudget) {
					t.Errorf("with a 1 KiB budget: %v, want the budget's error", err)
				}
				if h := small.Held(); h != 0 {
					t.Errorf("%d bytes still held after the failed read", h)
				}
			})
		}
	}
}
