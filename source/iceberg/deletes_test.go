package iceberg

import (
	"bytes"
	"context"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/deletes"
	"github.com/scand/scand/scanner/parquet"
	"github.com/scand/scand/source"
)

type memSource struct{ *bytes.Reader }

func (m memSource) Size() int64 { return m.Reader.Size() }

// readFile reads a whole Parquet file of the table's root.
func readFile(t *testing.T, root, name string, columns []string) []arrow.RecordBatch {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.Open(context.Background(), name, memSource{bytes.NewReader(data)}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Project(columns)
	if err != nil {
		t.Fatal(err)
	}
	var groups []int
	for i := range p.Groups {
		groups = append(groups, i)
	}
	var out []arrow.RecordBatch
	err = f.Read(context.Background(), p, scanner.ReadOptions{Groups: groups, Mem: memory.DefaultAllocator}, func(r arrow.RecordBatch) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveIDs reads a listing the way a stream does: each data file whole,
// its deletes applied by row position and key, and returns the ids left.
func liveIDs(t *testing.T, root string, l *source.Listing) []int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	for _, f := range l.Files {
		var rows *deletes.Rows
		var eq []*deletes.EqualitySet
		for _, d := range f.Deletes {
			switch d.Kind {
			case source.DeletionVector:
				data, err := os.ReadFile(filepath.Join(root, d.Object.Name))
				if err != nil {
					t.Fatal(err)
				}
				r, err := deletes.LoadDeletionVector(ctx, nil, data[d.Offset:d.Offset+d.Length], d.Cardinality)
				if err != nil {
					t.Fatal(err)
				}
				if rows == nil {
					rows = r
				} else if err := rows.Union(ctx, r); err != nil {
					t.Fatal(err)
				}
			case source.PositionDeletes:
				p := deletes.NewPositions(f.TablePath, nil)
				for _, rec := range readFile(t, root, d.Object.Name, []string{"file_path", "pos"}) {
					if err := p.Add(ctx, rec); err != nil {
						t.Fatal(err)
					}
					rec.Release()
				}
				r := p.Rows()
				if rows == nil {
					rows = r
				} else if err := rows.Union(ctx, r); err != nil {
					t.Fatal(err)
				}
			case source.EqualityDeletes:
				if !slices.Equal(d.EqualityFieldIDs, []int{1}) {
					t.Fatalf("equality ids %v", d.EqualityFieldIDs)
				}
				s := deletes.NewEqualitySet(1, nil)
				for _, rec := range readFile(t, root, d.Object.Name, []string{"id"}) {
					if err := s.Add(ctx, rec, []int{0}); err != nil {
						t.Fatal(err)
					}
					rec.Release()
				}
				eq = append(eq, s)
			}
		}
		first := int64(0)
		for _, rec := range readFile(t, root, f.Object.Name, []string{"id"}) {
			n := rec.NumRows()
			out, err := deletes.Apply(ctx, rec, first, rows, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range eq {
				next, err := s.Apply(ctx, out, []int{0}, memory.DefaultAllocator)
				if err != nil {
					t.Fatal(err)
				}
				out.Release()
				out = next
			}
			ids = append(ids, out.Column(0).(*array.Int64).Int64Values()...)
			out.Release()
			rec.Release()
			first += n
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func seqIDs(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestListDeletes(t *testing.T) {
	for _, c := range []struct {
		version string
		kind    source.DeleteKind
	}{{"2", source.PositionDeletes}, {"3", source.DeletionVector}} {
		t.Run("v"+c.version, func(t *testing.T) {
			root := t.TempDir()
			tbl, _ := newTestTable(t, root, "wh/t", idNameSchema, nil, ice.Properties{
				table.PropertyFormatVersion: c.version,
				table.WriteDeleteModeKey:    table.WriteModeMergeOnRead,
			})
			tbl = appendRows(t, tbl, idName, rows(seqIDs(0, 100)...))
			before := tbl.Metadata().CurrentSnapshot().SnapshotID
			tx := tbl.NewTransaction()
			if err := tx.Delete(context.Background(), ice.NewOr(ice.LessThan(ice.Reference("id"), int64(10)), ice.EqualTo(ice.Reference("id"), int64(50))), nil); err != nil {
				t.Fatal(err)
			}
			tbl, err := tx.Commit(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			b := testBucket(t, root)
			l, err := New(b, Request{Table: "wh/t"}, Options{}).List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Files) != 1 || len(l.Files[0].Deletes) != 1 || l.Files[0].Deletes[0].Kind != c.kind {
				t.Fatalf("files %+v", l.Files)
			}
			if p := l.Table; p == nil || p.DeleteFiles != 1 || p.ManifestsRead != 2 || p.ManifestsSkipped != 0 || p.DataFilesPruned != 0 {
				t.Fatalf("plan counts %+v, want 2 manifests read (data, deletes), 1 delete file", p)
			}
			want := slices.DeleteFunc(seqIDs(0, 100), func(v int64) bool { return v < 10 || v == 50 })
			if got := liveIDs(t, root, l); !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
			// The snapshot before the delete reads every row.
			l, err = New(b, Request{Table: "wh/t", SnapshotID: before}, Options{}).List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := liveIDs(t, root, l); !slices.Equal(got, seqIDs(0, 100)) {
				t.Fatalf("before the delete: ids %v", got)
			}
			_ = tbl
		})
	}
}

func TestListEqualityDeletes(t *testing.T) {
	root := t.TempDir()
	schema := ice.NewSchemaWithIdentifiers(0, []int{1},
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
		ice.NestedField{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
	)
	arrowSchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	tbl, _ := newTestTable(t, root, "wh/t", schema, nil, ice.Properties{table.PropertyFormatVersion: "2"})
	tbl = appendRows(t, tbl, arrowSchema, rows(seqIDs(0, 20)...))
	keys := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	kb := array.NewRecordBuilder(memory.DefaultAllocator, keys)
	kb.Field(0).(*array.Int64Builder).AppendValues([]int64{3, 4, 19, 1000}, nil)
	krec := kb.NewRecordBatch()
	var records iter.Seq2[arrow.RecordBatch, error] = func(yield func(arrow.RecordBatch, error) bool) { yield(krec, nil) }
	tx := tbl.NewTransaction()
	if err := tx.CommitEqualityDeletes(context.Background(), []int{1}, records, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Rows appended after the delete are not deleted by it.
	appendRows(t, tbl, arrowSchema, rows(3))
	tbl2, err := New(testBucket(t, root), Request{Table: "wh/t"}, Options{}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(seqIDs(0, 20), func(v int64) bool { return v == 4 || v == 19 })
	if got := liveIDs(t, root, tbl2); !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
}
