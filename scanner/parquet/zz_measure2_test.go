package parquet

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

func live() uint64 { runtime.GC(); var m runtime.MemStats; runtime.ReadMemStats(&m); return m.HeapAlloc }

func TestZZLive(t *testing.T) {
	cols, _ := strconv.Atoi(os.Getenv("COLS"))
	rgs, _ := strconv.Atoi(os.Getenv("RGS"))
	b := bombFile{rows: 1, cols: cols, pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 8, numValues: 1, body: make([]byte, 8)}}}
	data := b.build()
	if rgs > 1 {
		data = manyGroups(cols, rgs)
	}
	t.Logf("file %d bytes", len(data))
	a := live()
	f, err := Open(context.Background(), "x", memSource{bytes.NewReader(data)}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	c := live()
	t.Logf("Open live: %d KB", (c-a)>>10)
	p, err := f.Project(nil)
	d := live()
	t.Logf("Project live: %d KB %v", (d-c)>>10, err)
	runtime.KeepAlive(f)
	runtime.KeepAlive(p)
}

// manyGroups: cols columns, rgs row groups, all chunks pointing at one page.
func manyGroups(cols, rgs int) []byte {
	one := bombFile{rows: 1, cols: cols, pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 8, numValues: 1, body: make([]byte, 8)}}}.build()
	_ = one
	page := bombPage{typ: pageTypeDataPage, uncompressed: 8, numValues: 1, body: make([]byte, 8)}.bytes()
	out := append([]byte("PAR1"), page...)
	w := &compactWriter{}
	w.begin()
	w.i32(1, 1)
	w.list(2, tcStruct, cols+1, func(i int) {
		if i == 0 {
			w.str(4, "schema")
			w.i32(5, int32(cols))
			return
		}
		w.i32(1, 2)
		w.i32(3, 0)
		w.str(4, "c"+strconv.Itoa(i-1))
	})
	w.i64(3, int64(rgs))
	w.list(4, tcStruct, rgs, func(int) {
		w.list(1, tcStruct, cols, func(i int) {
			w.i64(2, 4)
			w.structField(3, func() {
				w.i32(1, 2)
				w.list(2, tcI32, 1, func(int) { w.b = append(w.b, 0) })
				name := "c" + strconv.Itoa(i)
				w.list(3, tcBinary, 1, func(int) { w.b = append(append(w.b, uvarintBytes(uint64(len(name)))...), name...) })
				w.i32(4, 0)
				w.i64(5, 1)
				w.i64(6, int64(len(page)))
				w.i64(7, int64(len(page)))
				w.i64(9, 4)
			})
		})
		w.i64(2, int64(len(page)*cols))
		w.i64(3, 1)
	})
	w.end()
	out = append(out, w.b...)
	out = append(out, byte(len(w.b)), byte(len(w.b)>>8), byte(len(w.b)>>16), byte(len(w.b)>>24))
	return append(out, "PAR1"...)
}
