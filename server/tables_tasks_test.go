package server

import (
	"context"
	"encoding/base64"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/codec"
	icetable "github.com/apache/iceberg-go/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/source/iceberg/icebergtest"
)

// An engine that plans an Iceberg table itself hands scand its tasks
// (iceberg-go's codec): scand reads those files, with the deletes each
// task carries, and nothing else of the snapshot.
func TestScanIcebergEngineTasks(t *testing.T) {
	root := t.TempDir()
	tbl, _ := icebergtest.NewTable(t, root, "wh/tasks", tableSchema, nil, ice.Properties{
		icetable.PropertyFormatVersion:   "2",
		icetable.WriteDeleteModeKey:      icetable.WriteModeMergeOnRead,
		icetable.ParquetRowGroupLimitKey: "500",
	})
	tbl = icebergtest.Append(t, tbl, tableArrow, tableRows(0, 2000))
	tbl = icebergtest.Append(t, tbl, tableArrow, tableRows(2000, 3000))
	tx := tbl.NewTransaction()
	if err := tx.Delete(context.Background(), ice.LessThan(ice.Reference("id"), int64(100)), nil); err != nil {
		t.Fatal(err)
	}
	var err error
	if tbl, err = tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	planned, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	meta := tbl.Metadata()
	spec := meta.PartitionSpec()
	encode := func(task icetable.FileScanTask) map[string]any {
		b, err := codec.EncodeFileScanTask(task, spec, tbl.Schema(), meta.Version())
		if err != nil {
			t.Fatal(err)
		}
		return map[string]any{"task": base64.StdEncoding.EncodeToString(b), "spec_id": spec.ID()}
	}
	var all []any
	var first icetable.FileScanTask
	for _, task := range planned {
		all = append(all, encode(task))
		if len(task.DeleteFiles) > 0 {
			first = task // the file with deletes: ids 0-1999
		}
	}
	if first.File == nil {
		t.Fatal("no planned task carries the position deletes")
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer assertReleased(t, mem)
	client := testServerWith(t, onRoot(t, root, iosched.Options{}, Config{Mem: mem}))
	want := icebergIDs(t, tbl, nil)

	// Every task: the snapshot's rows, deletes applied.
	res, err := scanJSON(ctx, client, map[string]any{"table": "wh/tasks", "iceberg_tasks": all})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, res.records); !slices.Equal(got, want) {
		t.Fatalf("all tasks: %d rows, iceberg-go reads %d", len(got), len(want))
	}
	res.release()

	// One task: that file's rows only, its deletes applied, with the
	// request's filter.
	res, err = scanJSON(ctx, client, map[string]any{"table": "wh/tasks", "iceberg_tasks": []any{encode(first)}, "filter": "id < 1000"})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(t, res.records)
	if len(got) != 900 || got[0] != 100 || got[len(got)-1] != 999 {
		t.Fatalf("one task, id < 1000: %d rows (%v..), want ids 100-999", len(got), got[:min(3, len(got))])
	}
	res.release()

	// Part of a file: the row groups whose first byte lies in the range.
	offsets := first.File.SplitOffsets()
	if len(offsets) < 3 {
		t.Fatalf("split offsets %v: the writer should record 4 row groups", offsets)
	}
	part := first
	part.Start, part.Length = offsets[1], offsets[2]-offsets[1]
	res, err = scanJSON(ctx, client, map[string]any{"table": "wh/tasks", "iceberg_tasks": []any{encode(part)}})
	if err != nil {
		t.Fatal(err)
	}
	got = ids(t, res.records)
	if len(got) != 500 || got[0] != 500 || got[len(got)-1] != 999 {
		t.Fatalf("row group 1's bytes: %d rows, want ids 500-999", len(got))
	}
	res.release()

	// Bad tasks are the caller's mistake, named.
	for name, req := range map[string]map[string]any{
		"garbage":      {"table": "wh/tasks", "iceberg_tasks": []any{map[string]any{"task": base64.StdEncoding.EncodeToString([]byte("not a task")), "spec_id": 0}}},
		"unknown spec": {"table": "wh/tasks", "iceberg_tasks": []any{map[string]any{"task": all[0].(map[string]any)["task"], "spec_id": 7}}},
		"no table":     {"paths": []string{"wh/tasks/data"}, "iceberg_tasks": all},
	} {
		_, err := scanJSON(ctx, client, req)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
}
