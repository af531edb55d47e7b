package server

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	ice "github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/source/iceberg/icebergtest"
)

// Iceberg tables written by iceberg-go's writer (merge-on-read deletes:
// position-delete files in v2, deletion vectors in v3; equality deletes;
// a renamed column), scanned through the server and compared with
// iceberg-go's own read of the same snapshot.

var (
	tableArrow  = icebergtest.IDNameArrow
	tableSchema = icebergtest.IDNameSchema
)

func tableRows(from, to int64) func(b *array.RecordBuilder) {
	return func(b *array.RecordBuilder) {
		for i := from; i < to; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
			if i%7 == 0 {
				b.Field(1).(*array.StringBuilder).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(string(rune('a' + i%5)))
			}
		}
	}
}

// ids are a result's first column (int64), sorted.
func ids(t *testing.T, recs []arrow.RecordBatch) []int64 {
	t.Helper()
	var out []int64
	for _, r := range recs {
		out = append(out, r.Column(0).(*array.Int64).Int64Values()...)
	}
	slices.Sort(out)
	return out
}

// icebergIDs is iceberg-go's own read of the table's current snapshot:
// the ids its filter keeps.
func icebergIDs(t *testing.T, tbl *icetable.Table, filter ice.BooleanExpression) []int64 {
	t.Helper()
	opts := []icetable.ScanOption{}
	if filter != nil {
		opts = append(opts, icetable.WithRowFilter(filter))
	}
	at, err := tbl.Scan(opts...).ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var out []int64
	col := at.Column(at.Schema().FieldIndices("id")[0])
	for _, c := range col.Data().Chunks() {
		out = append(out, c.(*array.Int64).Int64Values()...)
	}
	slices.Sort(out)
	return out
}

func TestScanIcebergDeletes(t *testing.T) {
	for _, c := range []struct {
		name, version string
		equality      bool
	}{
		{"position deletes (v2)", "2", false},
		{"deletion vectors (v3)", "3", false},
		{"equality deletes (v2)", "2", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			schema := tableSchema
			if c.equality {
				schema = ice.NewSchemaWithIdentifiers(0, []int{1},
					ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
					ice.NestedField{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String})
			}
			arrowSchema := tableArrow
			if c.equality {
				arrowSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, tableArrow.Field(1)}, nil)
			}
			tbl, _ := icebergtest.NewTable(t, root, "wh/t", schema, nil, ice.Properties{
				icetable.PropertyFormatVersion: c.version,
				icetable.WriteDeleteModeKey:    icetable.WriteModeMergeOnRead,
				// Row groups of 700 rows: positions must stay exact across
				// them, and when filters skip some.
				icetable.ParquetRowGroupLimitKey: "700",
			})
			tbl = icebergtest.Append(t, tbl, arrowSchema, tableRows(0, 3000))
			tbl = icebergtest.Append(t, tbl, arrowSchema, tableRows(3000, 5000))
			if c.equality {
				keys := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
				kb := array.NewRecordBuilder(memory.DefaultAllocator, keys)
				for i := int64(0); i < 5000; i += 3 {
					kb.Field(0).(*array.Int64Builder).Append(i)
				}
				krec := kb.NewRecordBatch()
				tx := tbl.NewTransaction()
				err := tx.CommitEqualityDeletes(context.Background(), []int{1}, func(yield func(arrow.RecordBatch, error) bool) { yield(krec, nil) }, nil)
				if err != nil {
					t.Fatal(err)
				}
				var cerr error
				if tbl, cerr = tx.Commit(context.Background()); cerr != nil {
					t.Fatal(cerr)
				}
			} else {
				tx := tbl.NewTransaction()
				del := ice.NewOr(ice.LessThan(ice.Reference("id"), int64(100)),
					ice.NewAnd(ice.GreaterThanEqual(ice.Reference("id"), int64(2500)), ice.LessThan(ice.Reference("id"), int64(3500))))
				if err := tx.Delete(context.Background(), del, nil); err != nil {
					t.Fatal(err)
				}
				var err error
				if tbl, err = tx.Commit(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if n := maxRowGroups(t, root); n < 3 {
				t.Fatalf("data files have at most %d row groups; the test wants several", n)
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer assertReleased(t, mem)
			client := testServerWith(t, onRoot(t, root, iosched.Options{}, Config{Mem: mem}))
			ctx := context.Background()

			want := icebergIDs(t, tbl, nil)
			if len(want) == 5000 || len(want) == 0 {
				t.Fatalf("the writer deleted %d of 5000 rows", 5000-len(want))
			}
			res, err := scanJSON(ctx, client, map[string]any{"table": "wh/t"})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(t, res.records); !slices.Equal(got, want) {
				t.Fatalf("%d rows, iceberg-go reads %d", len(got), len(want))
			}
			checkFileOrder(t, res.records, 2)
			res.release()

			// A filter, the deleted rows among the candidates.
			res, err = scanJSON(ctx, client, map[string]any{"table": "wh/t", "filter": "id >= 2000 AND id < 4000", "columns": []string{"id"}})
			if err != nil {
				t.Fatal(err)
			}
			wantF := icebergIDs(t, tbl, ice.NewAnd(ice.GreaterThanEqual(ice.Reference("id"), int64(2000)), ice.LessThan(ice.Reference("id"), int64(4000))))
			if got := ids(t, res.records); !slices.Equal(got, wantF) {
				t.Fatalf("filtered: %d rows, iceberg-go reads %d", len(got), len(wantF))
			}
			if res.info.TotalRecords == 0 {
				t.Fatal("no rows planned")
			}
			res.release()

			// Batches as decoded (batch_rows: each batch's deletes applied
			// as it comes, not held back with the others), and 333-row
			// batches that end inside row groups of 700 rows.
			for _, batchRows := range []int{700, 333} {
				res, err = scanJSON(ctx, client, map[string]any{"table": "wh/t", "batch_rows": batchRows})
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(t, res.records); !slices.Equal(got, want) {
					t.Fatalf("batch_rows %d: %d rows, iceberg-go reads %d", batchRows, len(got), len(want))
				}
				checkFileOrder(t, res.records, 2)
				res.release()
			}

			// Resuming counts the rows after deletes: a row group skipped
			// whole is skipped by its live rows.
			all, err := scanJSON(ctx, client, map[string]any{"table": "wh/t", "columns": []string{"id"}})
			if err != nil {
				t.Fatal(err)
			}
			all.release()
			for _, ep := range all.info.Endpoint {
				full, _ := streamIDs(ctx, t, client, ep.Ticket.Ticket)
				for _, off := range []int64{1, 599, 600, 701, 1300, 1401, int64(len(full)) - 1} {
					if off >= int64(len(full)) {
						continue
					}
					tk, err := resumeAction(ctx, client, ep.Ticket.Ticket, off)
					if err != nil {
						t.Fatal(err)
					}
					rest, _ := streamIDs(ctx, t, client, tk)
					if !slices.Equal(rest, full[off:]) {
						t.Fatalf("resumed at %d of %d: %d rows from %v, want %d from %d", off, len(full), len(rest), rest[:min(3, len(rest))], len(full)-int(off), full[off])
					}
				}
			}

			// A count reads the deletes too.
			res, err = scanJSON(ctx, client, map[string]any{"table": "wh/t", "no_columns": true})
			if err != nil {
				t.Fatal(err)
			}
			var counted int64
			for _, r := range res.records {
				counted += r.NumRows()
			}
			if counted != int64(len(want)) {
				t.Fatalf("no_columns: %d rows, iceberg-go reads %d", counted, len(want))
			}
			res.release()

			// A limit counts live rows only.
			res, err = scanJSON(ctx, client, map[string]any{"table": "wh/t", "limit": 150, "columns": []string{"id"}})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(t, res.records)
			if len(got) != 150 {
				t.Fatalf("limit 150: %d rows", len(got))
			}
			for _, id := range got {
				if _, live := slices.BinarySearch(want, id); !live {
					t.Fatalf("limit: deleted row %d returned", id)
				}
			}
			res.release()
		})
	}
}

// checkFileOrder checks that the ids of recs, in the order sent, come in
// at most files ascending runs: each data file's rows in file order.
func checkFileOrder(t *testing.T, recs []arrow.RecordBatch, files int) {
	t.Helper()
	var prev int64 = -1
	runs := 1
	for _, r := range recs {
		for _, id := range r.Column(0).(*array.Int64).Int64Values() {
			if id < prev {
				runs++
			}
			prev = id
		}
	}
	if runs > files {
		t.Fatalf("ids in %d ascending runs: the %d files' rows are out of order", runs, files)
	}
}

// maxRowGroups is the most row groups of a data file under root.
func maxRowGroups(t *testing.T, root string) int {
	t.Helper()
	most := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".parquet") || !strings.Contains(p, "/data/") {
			return err
		}
		r, err := pqfile.OpenParquetFile(p, false)
		if err != nil {
			return err
		}
		defer r.Close()
		most = max(most, r.NumRowGroups())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return most
}

func TestScanIcebergRenamedColumn(t *testing.T) {
	root := t.TempDir()
	tbl, _ := icebergtest.NewTable(t, root, "wh/t", tableSchema, nil, nil)
	tbl = icebergtest.Append(t, tbl, tableArrow, tableRows(0, 50))
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).RenameColumn([]string{"name"}, "label").Commit(); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	renamed := arrow.NewSchema([]arrow.Field{tableArrow.Field(0), {Name: "label", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	icebergtest.Append(t, tbl, renamed, tableRows(50, 60))
	client := testServer(t, root, memory.NewGoAllocator())
	ctx := context.Background()
	res, err := scanJSON(ctx, client, map[string]any{"table": "wh/t", "columns": []string{"label", "id"}, "filter": "label = 'b'"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	var got []int64
	for _, r := range res.records {
		if r.ColumnName(0) != "label" {
			t.Fatalf("columns %v", r.Schema())
		}
		for i := 0; i < int(r.NumRows()); i++ {
			if r.Column(0).(*array.String).Value(i) != "b" {
				t.Fatalf("row with label %q", r.Column(0).(*array.String).Value(i))
			}
			got = append(got, r.Column(1).(*array.Int64).Value(i))
		}
	}
	slices.Sort(got)
	var want []int64
	for i := int64(0); i < 60; i++ {
		if i%7 != 0 && i%5 == 1 {
			want = append(want, i)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v (rows written before the rename must read under the new name)", got, want)
	}

	// The old name is no column of the table.
	_, err = scanJSON(ctx, client, map[string]any{"table": "wh/t", "columns": []string{"name"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "label") {
		t.Fatalf("old name: got %v", err)
	}
}

func TestScanIcebergRefusals(t *testing.T) {
	root := t.TempDir()
	tbl, _ := icebergtest.NewTable(t, root, "wh/t", tableSchema, nil, nil)
	icebergtest.Append(t, tbl, tableArrow, tableRows(0, 5))
	client := testServer(t, root, memory.NewGoAllocator())
	ctx := context.Background()
	for _, c := range []struct {
		req  map[string]any
		code codes.Code
	}{
		{map[string]any{"table": "wh/none"}, codes.NotFound},
		{map[string]any{"table": "wh/t", "snapshot_id": 42}, codes.NotFound},
		{map[string]any{"table": "wh/t", "paths": []string{"x"}}, codes.InvalidArgument},
		{map[string]any{"table": "wh/t", "as_of": "yesterday"}, codes.InvalidArgument},
		{map[string]any{"table": "wh/t", "version": 3}, codes.InvalidArgument},
		{map[string]any{"table": "wh/t", "snapshot_id": 1, "ref": "main"}, codes.InvalidArgument},
		{map[string]any{"paths": []string{"x"}, "snapshot_id": 3}, codes.InvalidArgument},
		{map[string]any{"table": "../t"}, codes.PermissionDenied},
		{map[string]any{"table": "file:///etc"}, codes.PermissionDenied},
	} {
		_, err := scanJSON(ctx, client, c.req)
		if status.Code(err) != c.code {
			t.Errorf("%v: got %v, want %v", c.req, err, c.code)
		}
	}
}

// TestScanIcebergDeletesOverBudget: deletes that need more than the
// decode share fail the stream with RESOURCE_EXHAUSTED, never by being
// skipped.
func TestScanIcebergDeletesOverBudget(t *testing.T) {
	root := t.TempDir()
	tbl, _ := icebergtest.NewTable(t, root, "wh/t", tableSchema, nil, ice.Properties{
		icetable.PropertyFormatVersion: "3",
		icetable.WriteDeleteModeKey:    icetable.WriteModeMergeOnRead,
	})
	tbl = icebergtest.Append(t, tbl, tableArrow, tableRows(0, 20000))
	tx := tbl.NewTransaction()
	var odd []int64
	for i := int64(1); i < 20000; i += 2 {
		odd = append(odd, i)
	}
	if err := tx.Delete(context.Background(), ice.IsIn(ice.Reference("id"), odd...), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, addr := serveForTest(t, onRoot(t, root, iosched.Options{}, Config{Mem: memory.NewGoAllocator(),
		Admission: admission.New(4<<10, 200*time.Millisecond)}))
	_, err := scanJSON(context.Background(), dialForTest(t, addr), map[string]any{"table": "wh/t"})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "deletes") {
		t.Fatalf("got %v, want RESOURCE_EXHAUSTED naming the deletes", err)
	}
}
