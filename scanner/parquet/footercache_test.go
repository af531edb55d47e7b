package parquet

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
)

// smallFile is a Parquet file of one int64 column named name holding
// first, first+1, ...: files of names of one length and the same rows
// have the same size whatever first is (uncompressed, no dictionary).
func smallFile(t *testing.T, name string, first int64) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range int64(100) {
		b.Field(0).(*array.Int64Builder).Append(first + i)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDictionaryDefault(false))
	w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// scanThrough opens name through the IO scheduler as the server does (the
// object's own Info, so its version) and returns its column name, its
// values, and whether the footer came from the metadata cache.
func scanThrough(t *testing.T, s *iosched.Scheduler, name string) (column string, values []int64, cached bool) {
	t.Helper()
	ctx := context.Background()
	f, err := s.Open(ctx, storage.Info{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hits, _ := s.MetaCacheLookups()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	pf, err := Open(ctx, name, f, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	now, _ := s.MetaCacheLookups()
	p, err := pf.Project(nil)
	if err != nil {
		t.Fatal(err)
	}
	err = pf.Read(ctx, p, scanner.ReadOptions{}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		values = append(values, rec.Column(0).(*array.Int64).Int64Values()...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pf.Schema().Field(0).Name, values, now > hits
}

// TestFooterCacheNotStale: a second Open of an unchanged file takes its
// footer and description from the metadata cache; a file changed under
// the same name and size (replaced by rename, or rewritten in place with
// another modification time) is a new key, and its new footer is read.
func TestFooterCacheNotStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.parquet")
	v1, v2, v3 := smallFile(t, "a", 0), smallFile(t, "b", 1000), smallFile(t, "c", 2000)
	if len(v1) != len(v2) || len(v2) != len(v3) {
		t.Fatalf("sizes %d, %d, %d: the test wants equal sizes", len(v1), len(v2), len(v3))
	}
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := iosched.New(b, iosched.Options{})
	check := func(step, wantCol string, wantFirst int64, wantCached bool) {
		t.Helper()
		col, vals, cached := scanThrough(t, s, "f.parquet")
		if col != wantCol || len(vals) != 100 || vals[0] != wantFirst || vals[99] != wantFirst+99 || cached != wantCached {
			t.Fatalf("%s: column %q, %d values from %v, cached %v; want %q from %d, cached %v", step, col, len(vals), vals[:min(1, len(vals))], cached, wantCol, wantFirst, wantCached)
		}
	}
	check("first open", "a", 0, false)
	check("second open", "a", 0, true)

	// Replaced by rename: a new inode, same size.
	tmp := filepath.Join(dir, "f.tmp")
	if err := os.WriteFile(tmp, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	check("replaced by rename", "b", 1000, false)
	check("replaced, again", "b", 1000, true)

	// Rewritten in place, same size and inode, another modification time.
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, v3, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, st.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	check("rewritten in place", "c", 2000, false)
	check("rewritten, again", "c", 2000, true)
}

// TestFooterCacheProjections: Files opened from one cached footer project
// and read as the first did, for the selections asked before and for new
// ones, and share the footer's description.
func TestFooterCacheProjections(t *testing.T) {
	rec := mixedRecord(t, 3000)
	defer rec.Release()
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	cache := &sync.Map{}
	ctx := context.Background()
	open := func() *File {
		f, err := Open(ctx, "mixed", &recordingSource{data: data, cache: cache}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	names := scanner.ColumnNames(rec.Schema())
	selections := [][]string{nil, names[:1], {names[len(names)-1], names[0]}}
	read := func(f *File, cols []string) (string, int64) {
		p, err := f.Project(cols)
		if err != nil {
			t.Error(err)
			return "", 0
		}
		var rows int64
		var out bytes.Buffer
		err = f.Read(ctx, p, scanner.ReadOptions{}, func(b arrow.RecordBatch) error {
			defer b.Release()
			rows += b.NumRows()
			for i := range int(b.NumCols()) {
				out.WriteString(b.Column(i).String())
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		return p.Schema.String() + out.String(), rows
	}
	first := open()
	defer first.Close()
	var want []string
	for _, cols := range selections[:2] {
		s, _ := read(first, cols)
		want = append(want, s)
	}
	s, _ := read(open(), selections[2])
	want = append(want, s)
	// Files of one object share the entry, in parallel as a server's
	// streams do (-race checks the sharing).
	var wg sync.WaitGroup
	for range 3 {
		f := open()
		if f.entry != first.entry || f.fr != nil {
			t.Fatalf("a later Open did not take the cached footer (entry shared %v, pqarrow reader made %v)", f.entry == first.entry, f.fr != nil)
		}
		wg.Go(func() {
			defer f.Close()
			for i, cols := range selections {
				got, rows := read(f, cols)
				if got != want[i] || rows != rec.NumRows() {
					t.Errorf("selection %v from the cached footer differs (%d rows)", cols, rows)
				}
			}
		})
	}
	wg.Wait()
}
