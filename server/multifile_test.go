package server

import (
	"context"
	"fmt"
	"github.com/scand/scand/server/stream"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// idRecord has rows [start, start+n) of an id column only: a file that
// lacks the sample's other columns.
func idRecord(start, n int) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.NewGoAllocator())
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
}

// writeSmallFiles writes n files of rows rows each (row groups of 4),
// ids counting on from file to file; every third file has only the id
// column, so that packed files differ in schema.
func writeSmallFiles(t *testing.T, dir string, n, rows int) {
	t.Helper()
	for i := 0; i < n; i++ {
		rec := sampleRecord(i*rows, rows)
		if i%3 == 2 {
			rec.Release()
			rec = idRecord(i*rows, rows)
		}
		writeParquet(t, dir, fmt.Sprintf("f/%03d.parquet", i), rec, 4)
		rec.Release()
	}
}

// An endpoint of several files streams exactly the files' rows in order,
// in one schema, with every file's figures summed; no buffer is leaked.
func TestMultiFileStreamIsTheConcatenation(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 12, 10)
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	for _, req := range []map[string]any{
		{"paths": []string{"f/"}},
		{"paths": []string{"f/"}, "columns": []string{"name", "id"}, "batch_rows": 3},
		{"paths": []string{"f/"}, "limit": 57},
	} {
		t.Run(fmt.Sprint(req), func(t *testing.T) {
			res, err := scanJSON(ctx, c, req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			if len(res.info.Endpoint) != 1 {
				t.Fatalf("%d endpoints, want 1", len(res.info.Endpoint))
			}
			got := table(t, res)
			defer got.Release()
			want := seq(0, 120)
			if l, ok := req["limit"].(int); ok {
				want = want[:l]
			}
			if ids := int64Column(t, got, "id"); !slices.Equal(ids, want) {
				t.Fatalf("ids %v, want %v", ids, want)
			}
			if len(res.stats) != 1 || res.stats[0].Rows != int64(len(want)) || res.stats[0].Reads < 2 {
				t.Errorf("figures %+v: want one stream's, of %d rows and every file's reads", res.stats, len(want))
			}
		})
	}
}

// A file replaced between planning and reading fails its endpoint with
// FailedPrecondition naming that file, even when it is not the first.
func TestMultiFileChangedAfterPlanning(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 4, 10)
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"f/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) != 1 {
		t.Fatalf("%d endpoints, want 1", len(info.Endpoint))
	}
	time.Sleep(10 * time.Millisecond)
	rec := sampleRecord(0, 30)
	writeParquet(t, dir, "f/002.parquet", rec, 4)
	rec.Release()
	stream, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err == nil {
		for err == nil {
			_, err = stream.Recv()
		}
	}
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "002.parquet") {
		t.Errorf("got %v, want FailedPrecondition naming f/002.parquet", err)
	}
}

// Resuming an endpoint of several files at every offset gives exactly the
// rest of its rows, across file boundaries, with and without a filter and
// a limit; an offset past the endpoint's rows is refused.
func TestMultiFileResumeAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 4, 10)
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	tests := []struct {
		name  string
		req   map[string]any
		bound int64 // the endpoint's rows, capped by its limit
	}{
		{"all rows", map[string]any{}, 40},
		{"limit", map[string]any{"limit": 25}, 25},
		// Statistics keep groups 0-3, 16-19, 32-35 and 36-39.
		{"filter", map[string]any{"filter": "id < 3 OR id = 17 OR id > 33"}, 14},
		{"filter and limit", map[string]any{"filter": "id >= 5", "limit": 22}, 22},
		{"filter, limit past its rows", map[string]any{"filter": "id >= 5 AND id < 22", "limit": 30}, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := map[string]any{"paths": []string{"f/"}, "columns": []string{"id"}, "batch_rows": 3}
			for k, v := range tt.req {
				req[k] = v
			}
			ticket := planTicket(ctx, t, c, req)
			task := decodeForTest(t, ticket)
			if n := len(task.More); n < 2 {
				t.Fatalf("ticket has %d further files, want 2 or 3", n)
			}
			if b := resumeBound(task); b != tt.bound {
				t.Fatalf("the endpoint returns at most %d rows, want %d", b, tt.bound)
			}
			want, _ := streamIDs(ctx, t, c, ticket)
			for off := int64(0); off <= tt.bound; off++ {
				resumed, err := resumeAction(ctx, c, ticket, off)
				if err != nil {
					t.Fatalf("resume at %d: %v", off, err)
				}
				got, _ := streamIDs(ctx, t, c, resumed)
				if rest := want[min(int(off), len(want)):]; !slices.Equal(got, rest) {
					t.Fatalf("resumed at %d: got %v, want %v", off, got, rest)
				}
			}
			if _, err := resumeAction(ctx, c, ticket, tt.bound+1); status.Code(err) != codes.InvalidArgument {
				t.Fatalf("resume past the end: %v, want InvalidArgument", err)
			}
		})
	}
}

// decodeForTest reads the ScanTask of a signed ticket.
func decodeForTest(t *testing.T, ticket []byte) *scandv1.ScanTask {
	t.Helper()
	task := &scandv1.ScanTask{}
	if err := proto.Unmarshal(ticketPayloadForTest(t, ticket), task); err != nil {
		t.Fatal(err)
	}
	return task
}

// A ticket whose further files are malformed is refused (decodeTicket).
func TestCheckMore(t *testing.T) {
	for _, tc := range []struct {
		name string
		task *scandv1.ScanTask
		ok   bool
	}{
		{"one file", &scandv1.ScanTask{Path: "a"}, true},
		{"two files", &scandv1.ScanTask{Path: "a", More: []*scandv1.ScanTask{{Path: "b"}}}, true},
		{"a file without a path", &scandv1.ScanTask{Path: "a", More: []*scandv1.ScanTask{{}}}, false},
		{"nested", &scandv1.ScanTask{Path: "a", More: []*scandv1.ScanTask{{Path: "b", More: []*scandv1.ScanTask{{Path: "c"}}}}}, false},
	} {
		b, _ := proto.Marshal(tc.task)
		if _, _, err := decodeTicket(b); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// Whatever a ticket holds, decoding it and splitting it into its files'
// tasks fails cleanly or yields one task per file, each with the
// endpoint-wide fields of the first; it never panics.
func FuzzMultiFileTicket(f *testing.F) {
	for _, task := range []*scandv1.ScanTask{
		{Path: "a"},
		{Path: "a", Rows: 3, Limit: 5, SkipRows: 1, BatchRows: 2, More: []*scandv1.ScanTask{{Path: "b", Rows: 4, RowGroups: []int32{0, 2}}}},
		{Path: "a", More: []*scandv1.ScanTask{{Path: "b", More: []*scandv1.ScanTask{{Path: "c"}}}}},
	} {
		b, _ := proto.Marshal(task)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		task, _, err := decodeTicket(b)
		if err != nil {
			return
		}
		files := stream.FileTasks(task)
		if len(files) != 1+len(task.More) || len(stream.TaskPaths(task)) != len(files) {
			t.Fatalf("%d file tasks of a ticket with %d further files", len(files), len(task.More))
		}
		for _, ft := range files {
			if len(ft.More) > 0 || ft.BatchRows != task.BatchRows || ft.Compression != task.Compression || ft.Path == "" ||
				ft.SchemaFingerprint != task.SchemaFingerprint {
				t.Fatalf("file task %v of %v", ft, task)
			}
		}
		_ = resumeBound(task) // sums every file's rows without panicking
	})
}

// A signed ticket whose further file is missing, or names a row group the
// file lacks, fails that stream with a clear status; the server serves on.
func TestMultiFileBadFurtherFile(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 2, 10)
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	ticket := planTicket(ctx, t, c, map[string]any{"paths": []string{"f/"}})
	task := decodeForTest(t, ticket)
	for _, tc := range []struct {
		name string
		edit func(m *scandv1.ScanTask)
		code codes.Code
		says string
	}{
		{"missing file", func(m *scandv1.ScanTask) { m.Path = "f/gone.parquet" }, codes.NotFound, "gone.parquet"},
		{"row group out of range", func(m *scandv1.ScanTask) { m.RowGroups = []int32{9} }, codes.InvalidArgument, "row group 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged := proto.CloneOf(task)
			tc.edit(forged.More[0])
			payload, _ := proto.Marshal(forged)
			stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: signTestTicket(t, payload)})
			for err == nil {
				_, err = stream.Recv()
			}
			if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want %v saying %q", err, tc.code, tc.says)
			}
		})
	}
	if ids, _ := streamIDs(ctx, t, c, ticket); len(ids) != 20 {
		t.Errorf("the real ticket then gives %d rows, want 20", len(ids))
	}
}
