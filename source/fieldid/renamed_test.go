package fieldid

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/parquet"
)

type memSource struct{ *bytes.Reader }

func (m memSource) Size() int64 { return m.Reader.Size() }

// writtenFile is a Parquet file with field ids: a (1), b (2), c (3).
func writtenFile(t *testing.T) scanner.File {
	t.Helper()
	sc := schema(field("a", 1, i64), field("b", 2, i64), field("c", 3, i64))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := int64(0); i < 10; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.Int64Builder).Append(100 + i)
		b.Field(2).(*array.Int64Builder).Append(200 + i)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return parquetFile(t, rec, memory.DefaultAllocator)
}

// parquetFile writes rec as a Parquet file in memory and opens it with
// scand's reader, decoding into mem.
func parquetFile(t *testing.T, rec arrow.RecordBatch, mem memory.Allocator) scanner.File {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.Open(context.Background(), "t.parquet", memSource{bytes.NewReader(buf.Bytes())}, mem)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRenamed(t *testing.T) {
	f := writtenFile(t)
	// The table: x is a (id 1) renamed; b was dropped (id 2) and c (id 3)
	// renamed to b since; y (id 4) was added.
	table := schema(field("x", 1, i64), field("b", 3, i64), field("y", 4, i64))
	matched, err := Match(table, f.Schema(), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	names := ColumnNames(f.Schema(), matched)
	if want := []string{"x", "", "b"}; !slices.Equal(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	r, err := Rename(f, names, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := scanner.ColumnNames(r.Schema()); !slices.Equal(got, []string{"x", "b"}) {
		t.Fatalf("schema %v", got)
	}
	p, err := r.Project([]string{"b", "x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Missing, []string{"y"}) || p.Schema.NumFields() != 2 || p.Schema.Field(0).Name != "b" {
		t.Fatalf("projection %v missing %v", p.Schema, p.Missing)
	}
	var got [][]int64
	err = r.Read(context.Background(), p, scanner.ReadOptions{Groups: []int{0}, Mem: memory.DefaultAllocator}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		if rec.ColumnName(0) != "b" || rec.ColumnName(1) != "x" {
			t.Errorf("batch columns %v", rec.Schema())
		}
		got = append(got, slices.Clone(rec.Column(0).(*array.Int64).Int64Values()), slices.Clone(rec.Column(1).(*array.Int64).Int64Values()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0][0] != 200 || got[1][0] != 0 {
		t.Fatalf("read b=%v x=%v: b must be the file's c, x its a", got[0], got[1])
	}
	// All columns: the visible ones, renamed.
	all, err := r.Project(nil)
	if err != nil {
		t.Fatal(err)
	}
	if all.Schema.NumFields() != 2 || all.Schema.Field(0).Name != "x" {
		t.Fatalf("all columns: %v", all.Schema)
	}
	// Statistics answer under scan names, and never for the hidden b.
	st := r.(scanner.Statistics).GroupStats(0)
	if s, ok := st.ColumnStats("b"); !ok || s.Min == nil || s.Min.String() != "200" {
		t.Fatalf("stats of b: %+v %v", s, ok)
	}
	if _, ok := st.ColumnStats("a"); ok {
		t.Fatal("stats under the file's own name of a renamed column")
	}
	// Unchanged names need no wrapper.
	same, _ := Match(schema(field("a", 1, i64), field("b", 2, i64), field("c", 3, i64)), f.Schema(), nil, false)
	if ColumnNames(f.Schema(), same) != nil {
		t.Fatal("names for an unchanged file")
	}
}
