package orc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// seekFiles are testdata/seek's files (gen.py): pyarrow.orc, one stripe
// of 50,000 rows, row_index_stride 1000, nulls, four compressions.
var seekFiles = []string{"seek_uncompressed.orc", "seek_zlib.orc", "seek_zstd.orc", "seek_snappy.orc"}

var seekColumns = []string{"seq", "i32", "x", "f", "s", "d", "b", "t8", "i16", "ts", "dec", "day"}

// seekFilters are fixed filters plus generated ones: ranges on the sorted
// column (few kept strides, several runs) and predicates on the others.
func seekFilters() []string {
	out := []string{
		"seq >= 5500 AND seq < 5600",
		"seq < 1000",
		"seq >= 49000",
		"seq = 999 OR seq = 1000",
		"seq = 12345 OR seq = 33333 OR seq >= 49990",
		"(seq >= 1000 AND seq < 3000) OR (seq >= 7000 AND seq < 7001)",
		"seq > 100000",
		"d = 'k3'",
		"b = true AND seq < 20000",
		"i32 IS NULL AND seq >= 40000",
		"x < 0.001",
		"s = 's00000000'",
	}
	rng := rand.New(rand.NewPCG(15, 4))
	for range 24 {
		lo := rng.IntN(50000)
		out = append(out, fmt.Sprintf("seq >= %d AND seq < %d", lo, lo+rng.IntN(4000)))
	}
	for range 6 {
		a, b := rng.IntN(50000), rng.IntN(50000)
		out = append(out, fmt.Sprintf("seq = %d OR seq BETWEEN %d AND %d", a, b, b+rng.IntN(1500)))
	}
	return out
}

// readFiltered reads every seek column of file with filter, returning a
// table and the bytes the file's source read.
func readFiltered(t *testing.T, data []byte, name, text string, noSeek bool, mem memory.Allocator, batchRows int64) (arrow.Table, int64) {
	t.Helper()
	src := &memSource{data: data}
	f, err := Open(context.Background(), name, src, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	f.noSeek = noSeek
	p, err := f.Project(seekColumns)
	if err != nil {
		t.Fatal(err)
	}
	pred := bindSQL(t, f, text)
	before := len(src.reads)
	var recs []arrow.RecordBatch
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, Filter: pred, BatchRows: batchRows}, func(rec arrow.RecordBatch) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		t.Fatalf("%s, %q: %v", name, text, err)
	}
	var n int64
	for _, r := range src.reads[before:] {
		n += r.Len
	}
	tbl := array.NewTableFromRecords(p.Schema, recs)
	for _, r := range recs {
		r.Release()
	}
	return tbl, n
}

func readSeekFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "seek", name))
	if err != nil {
		t.Skip(err)
	}
	return data
}

// TestSeekMatchesWholeStripe: reading kept strides by seeking returns
// exactly what reading the stripe from its start returns, for every
// filter, compression and several batch sizes, and reads fewer bytes
// for the selective ones.
func TestSeekMatchesWholeStripe(t *testing.T) {
	for _, name := range seekFiles {
		data := readSeekFile(t, name)
		t.Run(name, func(t *testing.T) {
			for i, text := range seekFilters() {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				batch := []int64{1024, 333, 5000}[i%3]
				got, seekBytes := readFiltered(t, data, name, text, false, mem, batch)
				want, wholeBytes := readFiltered(t, data, name, text, true, mem, batch)
				if got.NumRows() != want.NumRows() {
					t.Errorf("%q: %d rows seeking, %d without", text, got.NumRows(), want.NumRows())
				}
				for c := range int(want.NumCols()) {
					if got.NumRows() == want.NumRows() && !array.ChunkedEqual(got.Column(c).Data(), want.Column(c).Data()) {
						t.Errorf("%q: column %s differs", text, want.Schema().Field(c).Name)
					}
				}
				if seekBytes > wholeBytes {
					t.Errorf("%q: %d bytes read seeking, %d without", text, seekBytes, wholeBytes)
				}
				got.Release()
				want.Release()
				mem.AssertSize(t, 0)
			}
		})
	}
}

// TestSeekFetchesLess: a selective filter on the sorted column (one
// stride of 50) reads a fraction of the stripe's bytes: a tenth
// uncompressed; compressed, whole 64 KiB chunks are the unit, and each
// stream of these files holds about 7, of which a stride needs 1 to 3
// (its own, and the one holding the RLE run that crosses into the next
// stride), so under a half.
func TestSeekFetchesLess(t *testing.T) {
	for _, name := range seekFiles {
		data := readSeekFile(t, name)
		got, seekBytes := readFiltered(t, data, name, "seq >= 25500 AND seq < 25600", false, memory.DefaultAllocator, 0)
		want, wholeBytes := readFiltered(t, data, name, "seq >= 25500 AND seq < 25600", true, memory.DefaultAllocator, 0)
		if got.NumRows() != 1000 || want.NumRows() != 1000 {
			t.Errorf("%s: %d and %d rows, want one stride", name, got.NumRows(), want.NumRows())
		}
		got.Release()
		want.Release()
		t.Logf("%s: %d bytes seeking, %d whole stripe", name, seekBytes, wholeBytes)
		limit := wholeBytes / 2
		if name == "seek_uncompressed.orc" {
			limit = wholeBytes / 10
		}
		if seekBytes > limit {
			t.Errorf("%s: %d bytes seeking, %d whole stripe: want at most %d", name, seekBytes, wholeBytes, limit)
		}
	}
}

// TestSeekRefusesMalformedPositions: positions no writer produces make
// planSeek decline (the stripe is then read whole), for each check. The
// column is x (PRESENT and DATA streams, several chunks each).
func TestSeekRefusesMalformedPositions(t *testing.T) {
	cases := []struct {
		name   string
		file   string
		mutate func(pos [][]uint64)
	}{
		{"none", "seek_zstd.orc", func([][]uint64) {}},
		{"missing entry", "seek_zstd.orc", func(pos [][]uint64) { pos[7] = pos[7][:len(pos[7])-1] }},
		{"extra entry", "seek_uncompressed.orc", func(pos [][]uint64) { pos[7] = append(pos[7], 0) }},
		{"first stride not at start", "seek_zstd.orc", func(pos [][]uint64) { pos[0][0] = 3 }},
		{"offset goes back", "seek_uncompressed.orc", func(pos [][]uint64) { pos[20][0] = pos[19][0] - 1 }},
		{"offset past stream", "seek_uncompressed.orc", func(pos [][]uint64) { pos[49][0] = 1 << 40 }},
		{"chunk offset past block", "seek_zstd.orc", func(pos [][]uint64) { pos[25][1] = 1 << 20 }},
		{"RLE skip too long", "seek_uncompressed.orc", func(pos [][]uint64) { pos[25][1] = 4096 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := readSeekFile(t, tc.file)
			ctx := context.Background()
			f, err := Open(ctx, tc.file, &memSource{data: data}, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			p, err := f.Project([]string{"x"})
			if err != nil {
				t.Fatal(err)
			}
			impl := p.Impl.(*projection)
			keep, _, ix, err := f.selectStrides(ctx, 0, bindSQL(t, f, "seq >= 25500 AND seq < 25600"), impl.ids())
			if err != nil || keep == nil {
				t.Fatalf("kept %v: %v", keep, err)
			}
			tc.mutate(ix.positions[impl.nodes[0].id])
			if plan := f.planSeek(0, ix, impl, keep); (plan != nil) != (tc.name == "none") {
				t.Errorf("planned %v", plan != nil)
			}
		})
	}
}

// TestSeekDecodeFailureFallsBack: positions that look sane but do not
// decode (x's DATA of strides 25 on moved to the stream's end) make the
// seek give the rows back to the ordinary path, which returns the same
// rows as a read without seeking.
func TestSeekDecodeFailureFallsBack(t *testing.T) {
	const name, text = "seek_uncompressed.orc", "seq >= 25500 AND seq < 25600"
	data := readSeekFile(t, name)
	ctx := context.Background()
	f, err := Open(ctx, name, &memSource{data: data}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Project([]string{"seq", "x"})
	if err != nil {
		t.Fatal(err)
	}
	impl := p.Impl.(*projection)
	keep, _, ix, err := f.selectStrides(ctx, 0, bindSQL(t, f, text), impl.ids())
	if err != nil || keep == nil {
		t.Fatalf("kept %v: %v", keep, err)
	}
	xID := impl.nodes[1].id
	var dataLen uint64
	for _, st := range f.footers[0].Load().streams {
		if st.column == uint32(xID) && st.kind == streamData {
			dataLen = st.length
		}
	}
	for s := 25; s < len(ix.positions[xID]); s++ {
		ix.positions[xID][s][3] = dataLen // PRESENT: offset, bytes, bits; then DATA: offset
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var recs []arrow.RecordBatch
	emit := func(rec arrow.RecordBatch) error { recs = append(recs, rec); return nil }
	c, sc, acct := f.newCodec(), &scratch{}, &account{ctx: ctx}
	defer acct.releaseAll()
	rest, err := f.readStripeSeeking(ctx, 0, ix, impl, p.Schema, mem, c, sc, acct, 1024, keep, emit)
	if err != nil || rest == nil {
		t.Fatalf("rest %v, %v: want the kept rows back", rest, err)
	}
	var buf []byte
	if err := f.readStripe(ctx, 0, impl, p.Schema, mem, c, &buf, sc, acct, 1024, rest, emit); err != nil {
		t.Fatal(err)
	}
	got := array.NewTableFromRecords(p.Schema, recs)
	defer got.Release()
	for _, r := range recs {
		r.Release()
	}
	want, _ := readFiltered(t, data, name, text, true, mem, 1024) // every seek column: x is column 2
	defer want.Release()
	if got.NumRows() != want.NumRows() || !array.ChunkedEqual(got.Column(1).Data(), want.Column(2).Data()) {
		t.Errorf("%d rows, want %d equal to a read without seeking", got.NumRows(), want.NumRows())
	}
}
