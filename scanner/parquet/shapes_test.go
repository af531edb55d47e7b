package parquet

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Files of one schema share their shape (shapes.go): the second Open
// takes the manifest and schemas from the first's, and reads its own
// rows; a file whose schema or key-value metadata differs in anything
// gets a shape of its own.
func TestShapes(t *testing.T) {
	nested := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil)
	renamed := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil)
	withMeta := arrow.NewSchema(nested.Fields(), func() *arrow.Metadata { m := arrow.NewMetadata([]string{"k"}, []string{"v"}); return &m }())
	rowsA := `[{"id": 1, "s": {"a": "x"}, "l": [1, 2]}, {"id": 2, "s": null, "l": null}]`
	rowsB := `[{"id": 7, "s": {"a": "y"}, "l": []}]`
	rowsRenamed := `[{"id": 7, "s": {"b": "y"}, "l": []}]`

	open := func(t *testing.T, src interface {
		ReadAt([]byte, int64) (int, error)
		Size() int64
	}) *File {
		t.Helper()
		f, err := Open(context.Background(), "t.parquet", src, memory.NewGoAllocator())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	first := open(t, writeJSON(t, nested, rowsA))
	for _, tc := range []struct {
		name   string
		schema *arrow.Schema
		rows   string
		same   bool
		want   string
	}{
		{"same schema, other rows", nested, rowsB, true, `{"id":7,"l":[],"s":{"a":"y"}}` + "\n"},
		{"a nested field renamed", renamed, rowsRenamed, false, `{"id":7,"l":[],"s":{"b":"y"}}` + "\n"},
		{"other key-value metadata", withMeta, rowsB, false, `{"id":7,"l":[],"s":{"a":"y"}}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := writeJSON(t, tc.schema, tc.rows)
			f := open(t, src)
			if got := f.entry.shape == first.entry.shape; got != tc.same {
				t.Fatalf("shares the first file's shape: %v, want %v", got, tc.same)
			}
			for _, cols := range [][]string{nil, {"s"}, {"l", "id"}} {
				if !tc.same && len(cols) > 0 && cols[0] == "s" {
					continue
				}
				// Project's schema of the shared shape's selection, and
				// the rows of this file.
				p1, err := first.Project(cols)
				if err != nil {
					t.Fatal(err)
				}
				p2, err := f.Project(cols)
				if err != nil {
					t.Fatal(err)
				}
				if tc.same && !p1.Schema.Equal(p2.Schema) {
					t.Errorf("Project(%v): %s, first file's %s", cols, p2.Schema, p1.Schema)
				}
			}
			_, got := readAll(t, memSource{bytes.NewReader(readBytes(t, src))}, nil)
			if got != tc.want {
				t.Errorf("rows %q, want %q", got, tc.want)
			}
		})
	}
}

func readBytes(t *testing.T, src interface {
	ReadAt([]byte, int64) (int, error)
	Size() int64
}) []byte {
	t.Helper()
	b := make([]byte, src.Size())
	if _, err := src.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

// Files of one shape opened, projected and read at once share its memo
// safely (run with -race).
func TestShapesConcurrent(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	data := readBytes(t, writeJSON(t, sc, `[{"id": 1, "name": "a"}, {"id": 2, "name": null}]`))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := Open(context.Background(), "c.parquet", memSource{bytes.NewReader(data)}, memory.NewGoAllocator())
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			cols := [][]string{nil, {"name"}, {"id"}, {"name", "id"}}[i%4]
			if _, err := f.Project(cols); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
