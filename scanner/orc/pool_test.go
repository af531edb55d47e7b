package orc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// poisonValueBuffers fills the value pool with buffers of garbage, as a
// busy server's pool holds other scans' bytes.
func poisonValueBuffers() {
	var held [][]byte
	for size := valuePoolMin; size <= 4<<20; size *= 2 {
		for range 4 {
			b := valueBuffers.Allocate(size)
			for i := range b {
				b[i] = 0xa5
			}
			held = append(held, b)
		}
	}
	for _, b := range held {
		valueBuffers.Free(b)
	}
}

// TestValueBuffersOverwritten: columns whose value buffers come from the
// uncleared pool decode to the same arrays, byte for byte under null
// slots too, as with an allocator that clears (a checked allocator is not
// Go's, so it bypasses the pool), whatever the pool held before.
func TestValueBuffersOverwritten(t *testing.T) {
	dir := orcExamples(t)
	for _, name := range []string{"nulls-at-end-snappy.orc", "TestOrcFile.test1.orc", "demo-12-zlib.orc", "over1k_bloom.orc", "orc_index_int_string.orc"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		read := func(mem memory.Allocator) []arrow.RecordBatch {
			var out []arrow.RecordBatch
			if _, err := readFile(t, name, data, nil, 1000, mem, func(rec arrow.RecordBatch) {
				rec.Retain()
				out = append(out, rec)
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
		want := read(checked)
		poisonValueBuffers()
		got := read(memory.DefaultAllocator)
		if len(got) != len(want) {
			t.Fatalf("%s: %d batches, want %d", name, len(got), len(want))
		}
		fixed, nulls := 0, 0
		for i := range want {
			if !array.RecordEqual(got[i], want[i]) {
				t.Fatalf("%s: batch %d differs", name, i)
			}
			for c := range int(want[i].NumCols()) {
				w, g := want[i].Column(c).Data(), got[i].Column(c).Data()
				fw, ok := w.DataType().(arrow.FixedWidthDataType)
				if !ok || w.DataType().ID() == arrow.BOOL || len(w.Buffers()) < 2 {
					continue
				}
				n := fw.BitWidth() / 8
				wb := w.Buffers()[1].Bytes()[w.Offset()*n : (w.Offset()+w.Len())*n]
				gb := g.Buffers()[1].Bytes()[g.Offset()*n : (g.Offset()+g.Len())*n]
				if !bytes.Equal(wb, gb) {
					t.Fatalf("%s: batch %d column %d (%v): value bytes differ", name, i, c, w.DataType())
				}
				col := got[i].Column(c)
				for r := range col.Len() {
					if col.IsNull(r) && !bytes.Equal(gb[r*n:(r+1)*n], make([]byte, n)) {
						t.Fatalf("%s: batch %d column %d row %d is null, and its value bytes are %x, not zeros", name, i, c, r, gb[r*n:(r+1)*n])
					}
				}
				fixed++
				nulls += col.NullN()
			}
			want[i].Release()
			got[i].Release()
		}
		if fixed == 0 {
			t.Errorf("%s: no fixed-width column compared", name)
		}
		t.Logf("%s: %d fixed-width columns of batches compared, %d null slots", name, fixed, nulls)
		checked.AssertSize(t, 0)
	}
}
