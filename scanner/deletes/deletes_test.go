package deletes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icebergdv "github.com/apache/iceberg-go/table/dv"

	"github.com/scand/scand/scanner"
)

// budget is a scanner.Reserver with a limit that records what is held.
type budget struct {
	limit, held int64
}

var errOverBudget = errors.New("over budget")

func (b *budget) Reserve(_ context.Context, n int64) error {
	if b.held+n > b.limit {
		return errOverBudget
	}
	b.held += n
	return nil
}

func (b *budget) Release(n int64) { b.held -= n }

func TestDecodeDeletionVectorRoundTrip(t *testing.T) {
	cases := map[string][]uint64{
		"empty":     nil,
		"one":       {7},
		"dense":     seq(0, 5000),
		"high keys": {1, 1 << 32, 3<<32 + 5, 1<<40 + 9},
		"run":       seq(1<<20, 1<<20+70000),
		"scattered": {0, 65535, 65536, 1 << 31, 1<<32 - 1},
	}
	for name, positions := range cases {
		t.Run(name, func(t *testing.T) {
			bm := roaring64.BitmapOf(positions...)
			bm.RunOptimize()
			blob, err := EncodeDeletionVector(bm)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeDeletionVector(blob, int64(len(positions)))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(bm) {
				t.Fatalf("decoded %v, want %v", got.ToArray(), positions)
			}
		})
	}
}

func seq(from, to uint64) []uint64 {
	var out []uint64
	for v := from; v < to; v++ {
		out = append(out, v)
	}
	return out
}

// TestDecodeJavaDeletionVectors decodes vectors written by Iceberg's Java
// implementation and checks the positions against iceberg-go's own
// decoder, an independent reading of the same spec.
func TestDecodeJavaDeletionVectors(t *testing.T) {
	files, _ := filepath.Glob("testdata/iceberg-java/*.bin")
	if len(files) == 0 {
		t.Fatal("no Java deletion vectors in testdata/iceberg-java")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			blob, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := icebergdv.DeserializeDV(blob, -1)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeDeletionVector(blob, want.Cardinality())
			if err != nil {
				t.Fatal(err)
			}
			var wantPos []uint64
			for p := range want.Positions() {
				wantPos = append(wantPos, p)
			}
			if g := got.ToArray(); !slices.Equal(g, wantPos) {
				t.Fatalf("positions %v, iceberg-go reads %v", g, wantPos)
			}
		})
	}
}

// TestDecodeIcebergGoDeletionVector decodes what iceberg-go serializes
// (which, as Java, writes an empty bitmap for each unused key below the
// largest).
func TestDecodeIcebergGoDeletionVector(t *testing.T) {
	src := icebergdv.NewRoaringPositionBitmap()
	want := []uint64{3, 9, 2<<32 + 1, 2<<32 + 70000}
	for _, p := range want {
		src.Set(p)
	}
	blob, err := icebergdv.SerializeDV(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDeletionVector(blob, int64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	if g := got.ToArray(); !slices.Equal(g, want) {
		t.Fatalf("positions %v, want %v", g, want)
	}
}

func TestDecodeDeletionVectorCorrupt(t *testing.T) {
	good, err := EncodeDeletionVector(roaring64.BitmapOf(1, 2, 3, 1<<33))
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	cases := map[string]struct {
		blob        []byte
		cardinality int64
	}{
		"empty":             {nil, -1},
		"short":             {good[:7], -1},
		"truncated":         {good[:len(good)-1], -1},
		"length too large":  {mutate(func(b []byte) []byte { b[3]++; return b }), -1},
		"bad magic":         {mutate(func(b []byte) []byte { b[4] ^= 1; return b }), -1},
		"bad crc":           {mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), -1},
		"wrong cardinality": {good, 5},
		"huge count":        {reframe(mutate(func(b []byte) []byte { b[15] = 0x7f; return b })), -1},
		"keys out of order": {reframe(outOfOrder(t)), -1},
		"trailing bytes":    {reframe(append(slices.Clone(good[4:len(good)-4]), 0)), -1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeDeletionVector(c.blob, c.cardinality)
			if !errors.Is(err, scanner.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

// reframe gives b (a blob, or magic and bitmap when it has no frame yet)
// a fresh, valid frame around its magic and bitmap.
func reframe(b []byte) []byte {
	body := b
	if len(b) >= 8 && b[4] == bitmapMagic[0] && b[5] == bitmapMagic[1] {
		body = b[4 : len(b)-4]
	}
	return frame(body)
}

func frame(body []byte) []byte {
	out := make([]byte, 4, len(body)+8)
	out[0], out[1], out[2], out[3] = byte(len(body)>>24), byte(len(body)>>16), byte(len(body)>>8), byte(len(body))
	out = append(out, body...)
	c := crc(body)
	return append(out, byte(c>>24), byte(c>>16), byte(c>>8), byte(c))
}

// outOfOrder is a magic and portable bitmap whose two keys descend.
func outOfOrder(t *testing.T) []byte {
	a, _ := roaring64.BitmapOf(1<<32 + 1).ToBytes() // key 1
	b, _ := roaring64.BitmapOf(2).ToBytes()         // key 0
	// Both are count 1, key, bitmap: splice into count 2, key 1 first.
	out := append(slices.Clone(bitmapMagic[:]), 2, 0, 0, 0, 0, 0, 0, 0)
	out = append(out, a[8:]...)
	return append(out, b[8:]...)
}

func TestLoadDeletionVectorBudget(t *testing.T) {
	blob, err := EncodeDeletionVector(roaring64.BitmapOf(seq(0, 3000)...))
	if err != nil {
		t.Fatal(err)
	}
	small := &budget{limit: int64(len(blob))}
	if _, err := LoadDeletionVector(context.Background(), small, blob, -1); !errors.Is(err, errOverBudget) {
		t.Fatalf("got %v, want the budget's error", err)
	}
	if small.held != 0 {
		t.Fatalf("a refused load holds %d bytes", small.held)
	}
	b := &budget{limit: 1 << 20}
	rows, err := LoadDeletionVector(context.Background(), b, blob, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if b.held <= 0 || b.held > 2*int64(len(blob))+bitmapOverhead {
		t.Fatalf("holds %d bytes for a blob of %d", b.held, len(blob))
	}
	rows.Release()
	if b.held != 0 {
		t.Fatalf("holds %d bytes after Release", b.held)
	}
}

func int64Batch(mem memory.Allocator, from, n int64) arrow.RecordBatch {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Append(i)
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "row", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, n)
}

func values(rec arrow.RecordBatch) []int64 {
	return slices.Clone(rec.Column(0).(*array.Int64).Int64Values())
}

func TestApply(t *testing.T) {
	rows := &Rows{Bitmap: roaring64.BitmapOf(0, 5, 99, 100, 101, 150, 1<<33)}
	cases := []struct {
		first, n int64
		want     []int64 // rows kept
	}{
		{0, 10, []int64{1, 2, 3, 4, 6, 7, 8, 9}},
		{10, 5, []int64{10, 11, 12, 13, 14}},
		{97, 6, []int64{97, 98, 102}},
		{100, 2, nil},
		{149, 1, []int64{149}},
		{150, 1, nil},
	}
	for _, c := range cases {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rec := int64Batch(mem, c.first, c.n)
		out, err := Apply(context.Background(), rec, c.first, rows, mem)
		if err != nil {
			t.Fatal(err)
		}
		if got := values(out); !slices.Equal(got, c.want) && (len(got) != 0 || len(c.want) != 0) {
			t.Errorf("rows [%d, %d): kept %v, want %v", c.first, c.first+c.n, got, c.want)
		}
		out.Release()
		rec.Release()
		mem.AssertSize(t, 0)
	}
}

// TestApplyAcrossBatches checks that splitting a file's rows into batches
// anywhere keeps exactly the rows not deleted.
func TestApplyAcrossBatches(t *testing.T) {
	deleted := roaring64.BitmapOf(3, 4, 17, 64, 65, 66, 127, 128, 999)
	rows := &Rows{Bitmap: deleted}
	for _, size := range []int64{1, 2, 7, 64, 100, 1000} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var kept []int64
		for first := int64(0); first < 1000; first += size {
			n := min(size, 1000-first)
			rec := int64Batch(mem, first, n)
			out, err := Apply(context.Background(), rec, first, rows, mem)
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, values(out)...)
			out.Release()
			rec.Release()
		}
		mem.AssertSize(t, 0)
		if len(kept) != 1000-int(deleted.GetCardinality()) {
			t.Fatalf("batches of %d: kept %d rows", size, len(kept))
		}
		for _, v := range kept {
			if deleted.Contains(uint64(v)) {
				t.Fatalf("batches of %d: kept deleted row %d", size, v)
			}
		}
	}
}

func TestPositions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "file_path", Type: arrow.BinaryTypes.String}, {Name: "pos", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"s3://b/a.parquet", "s3://b/a.parquet", "s3://b/other.parquet", "s3://b/a.parquet"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{4, 2, 3, 1 << 35}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	bud := &budget{limit: 1 << 20}
	p := NewPositions("s3://b/a.parquet", bud)
	if err := p.Add(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	rows := p.Rows()
	if got := rows.Bitmap.ToArray(); !slices.Equal(got, []uint64{2, 4, 1 << 35}) {
		t.Fatalf("positions %v", got)
	}
	if bud.held == 0 {
		t.Fatal("positions charged nothing")
	}
	rows.Release()
	if bud.held != 0 {
		t.Fatalf("holds %d after Release", bud.held)
	}

	b.Field(0).(*array.StringBuilder).Append("s3://b/a.parquet")
	b.Field(1).(*array.Int64Builder).Append(-1)
	bad := b.NewRecordBatch()
	defer bad.Release()
	if err := NewPositions("s3://b/a.parquet", nil).Add(context.Background(), bad); !errors.Is(err, scanner.ErrCorrupt) {
		t.Fatalf("negative position: got %v, want ErrCorrupt", err)
	}
}

func TestEqualitySet(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()

	// The delete file's key columns: id int32 (before a promotion to
	// int64), name string; a null name deletes rows whose name is null.
	delSchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	db := array.NewRecordBuilder(mem, delSchema)
	defer db.Release()
	db.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2, 3}, nil)
	db.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "", "c"}, []bool{true, false, true})
	del := db.NewRecordBatch()
	defer del.Release()
	bud := &budget{limit: 1 << 20}
	set := NewEqualitySet(2, bud)
	if err := set.Add(ctx, del, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	if err := set.Add(ctx, del, []int{0, 1}); err != nil { // duplicates cost nothing more
		t.Fatal(err)
	}
	if set.Len() != 3 {
		t.Fatalf("%d keys, want 3", set.Len())
	}

	dataSchema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(mem, dataSchema)
	defer rb.Release()
	rb.Field(0).(*array.Float64Builder).AppendValues([]float64{0, 1, 2, 3, 4, 5}, nil)
	rb.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "a", "", "", "c", "c"}, []bool{true, true, false, true, true, true})
	rb.Field(2).(*array.Int64Builder).AppendValues([]int64{1, 2, 2, 2, 3, 0}, []bool{true, true, true, true, true, false})
	rec := rb.NewRecordBatch()
	defer rec.Release()
	out, err := set.Apply(ctx, rec, []int{2, 1}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	got := out.Column(0).(*array.Float64).Float64Values()
	// Row 0 (1, a), row 2 (2, NULL) and row 4 (3, c) are deleted; row 3
	// has name "" (not NULL) and row 5 a NULL id.
	if want := []float64{1, 3, 5}; !slices.Equal(got, want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	set.Release()
	if bud.held != 0 {
		t.Fatalf("holds %d after Release", bud.held)
	}
}
