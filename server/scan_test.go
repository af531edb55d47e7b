package server

import (
	"context"
	"fmt"
	"github.com/scand/scand/server/stream"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var sampleSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "s", Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true},
	), Nullable: true},
	{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
}, nil)

// sampleRecord builds rows [start, start+n) of the sample table.
func sampleRecord(start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sampleSchema)
	defer b.Release()
	sb := b.Field(2).(*array.StructBuilder)
	lb := b.Field(3).(*array.ListBuilder)
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%7 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", i))
		}
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i * 2))
		sb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprintf("y%d", i%5))
		lb.Append(true)
		for j := 0; j < i%4; j++ {
			lb.ValueBuilder().(*array.Int64Builder).Append(int64(i + j))
		}
	}
	return b.NewRecordBatch()
}

// writeParquet writes rec to dir/name in row groups of rowGroup rows.
func writeParquet(t *testing.T, dir, name string, rec arrow.RecordBatch, rowGroup int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroup))
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// table concatenates a scan's batches into one record for comparison.
func table(t *testing.T, res *scanResult) arrow.RecordBatch {
	t.Helper()
	if len(res.records) == 0 {
		t.Fatal("scan returned no batches")
	}
	tbl := array.NewTableFromRecords(res.records[0].Schema(), res.records)
	defer tbl.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		c, err := array.Concatenate(tbl.Column(i).Data().Chunks(), memory.NewGoAllocator())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		cols[i] = c
	}
	return array.NewRecordBatch(tbl.Schema(), cols, tbl.NumRows())
}

func checkedServer(t *testing.T, root string) (flight.Client, *memory.CheckedAllocator) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() {
		// DoGet handlers finish just after the client sees the stream end.
		assertReleased(t, mem)
	})
	return testServer(t, root, mem), mem
}

func TestScanColumnsAndNesting(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 1000)
	defer rec.Release()
	writeParquet(t, dir, "a.parquet", rec, 300)
	c, _ := checkedServer(t, dir)
	ctx := context.Background()

	tests := []struct {
		name    string
		columns []string
		want    []string // top-level field names in order
		check   func(t *testing.T, got arrow.RecordBatch)
	}{
		{name: "all", want: []string{"id", "name", "s", "l"}, check: func(t *testing.T, got arrow.RecordBatch) {
			if !array.RecordEqual(got, rec) {
				t.Errorf("whole file differs")
			}
		}},
		{name: "request order", columns: []string{"name", "id"}, want: []string{"name", "id"}, check: func(t *testing.T, got arrow.RecordBatch) {
			if !array.Equal(got.Column(0), rec.Column(1)) || !array.Equal(got.Column(1), rec.Column(0)) {
				t.Errorf("columns differ")
			}
		}},
		{name: "struct field", columns: []string{"s.y"}, want: []string{"s"}, check: func(t *testing.T, got arrow.RecordBatch) {
			st := got.Column(0).(*array.Struct)
			if st.NumField() != 1 || got.Schema().Field(0).Type.(*arrow.StructType).Field(0).Name != "y" {
				t.Fatalf("s.y gave %s", got.Schema())
			}
			if !array.Equal(st.Field(0), rec.Column(2).(*array.Struct).Field(1)) {
				t.Errorf("s.y values differ")
			}
		}},
		{name: "list", columns: []string{"l"}, want: []string{"l"}, check: func(t *testing.T, got arrow.RecordBatch) {
			if !array.Equal(got.Column(0), rec.Column(3)) {
				t.Errorf("list differs")
			}
		}},
		{name: "struct twice", columns: []string{"s.x", "id", "s.y"}, want: []string{"s", "id"}, check: func(t *testing.T, got arrow.RecordBatch) {
			if !array.Equal(got.Column(0), rec.Column(2)) {
				t.Errorf("s differs")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"a.parquet"}, "columns": tt.columns})
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			got := table(t, res)
			defer got.Release()
			var names []string
			for _, f := range got.Schema().Fields() {
				names = append(names, f.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("columns %v, want %v", names, tt.want)
			}
			if got.NumRows() != 1000 {
				t.Fatalf("%d rows, want 1000", got.NumRows())
			}
			tt.check(t, got)
		})
	}
}

func TestScanGlobsLimitsAndSplits(t *testing.T) {
	dir := t.TempDir()
	var all []arrow.RecordBatch
	for i := 0; i < 5; i++ {
		rec := sampleRecord(i*1000, 1000)
		defer rec.Release()
		all = append(all, rec)
		writeParquet(t, dir, fmt.Sprintf("d/2026-0%d/part-0.parquet", i+1), rec, 250)
	}
	writeParquet(t, dir, "d/_SUCCESS", all[0], 1000) // hidden: skipped by listings
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	ids := func(rec arrow.RecordBatch) []int64 { return rec.Column(0).(*array.Int64).Int64Values() }

	for _, tc := range []struct {
		name      string
		req       map[string]any
		rows      int64
		endpoints int
	}{
		{"glob", map[string]any{"paths": []string{"d/2026-*/part-*.parquet"}}, 5000, 1},
		{"double star", map[string]any{"paths": []string{"**/*.parquet"}}, 5000, 1},
		{"directory", map[string]any{"paths": []string{"d/"}}, 5000, 1},
		// Whole small files share endpoints up to split_bytes (multifile.go).
		{"a file per endpoint", map[string]any{"paths": []string{"d/"}, "split_bytes": 40000}, 5000, 5},
		{"limit inside a row group", map[string]any{"paths": []string{"d/"}, "limit": 1234}, 1234, 1},
		{"limit at a file edge", map[string]any{"paths": []string{"d/"}, "limit": 2000}, 2000, 1},
		{"small splits", map[string]any{"paths": []string{"d/"}, "split_bytes": 1}, 5000, 20},
		{"small batches", map[string]any{"paths": []string{"d/2026-01/part-0.parquet"}, "batch_rows": 100}, 1000, 1},
		{"lz4 bodies", map[string]any{"paths": []string{"d/"}, "compression": "lz4"}, 5000, 1},
		{"zstd bodies", map[string]any{"paths": []string{"d/"}, "compression": "zstd"}, 5000, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := scanJSON(ctx, c, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			if got := len(res.info.Endpoint); got != tc.endpoints {
				t.Errorf("%d endpoints, want %d", got, tc.endpoints)
			}
			if res.info.TotalRecords != tc.rows {
				t.Errorf("total_records %d, want %d", res.info.TotalRecords, tc.rows)
			}
			got := table(t, res)
			defer got.Release()
			if got.NumRows() != tc.rows {
				t.Fatalf("%d rows, want %d", got.NumRows(), tc.rows)
			}
			for i, id := range ids(got) {
				if id != int64(i) {
					t.Fatalf("row %d has id %d: rows out of order", i, id)
				}
			}
			if len(res.stats) != tc.endpoints {
				t.Fatalf("%d streams carried figures, want %d", len(res.stats), tc.endpoints)
			}
			var rows int64
			for _, st := range res.stats {
				rows += st.Rows
				if st.Reads == 0 || st.BytesFetched == 0 {
					t.Errorf("figures without IO: %+v", st)
				}
			}
			if rows != tc.rows {
				t.Errorf("figures count %d rows, want %d", rows, tc.rows)
			}
			if bs, ok := tc.req["batch_rows"]; ok {
				for _, r := range res.records {
					if r.NumRows() > int64(bs.(int)) {
						t.Errorf("batch of %d rows, asked for %v", r.NumRows(), bs)
					}
				}
			}
		})
	}
}

func TestSchemaUnification(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, fields []arrow.Field, fill func(b *array.RecordBuilder)) {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), arrow.NewSchema(fields, nil))
		defer b.Release()
		fill(b)
		rec := b.NewRecordBatch()
		defer rec.Release()
		writeParquet(t, dir, name, rec, 100)
	}
	i64 := arrow.PrimitiveTypes.Int64
	mk("u/1.parquet", []arrow.Field{{Name: "a", Type: i64}, {Name: "b", Type: i64}}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
		b.Field(1).(*array.Int64Builder).AppendValues([]int64{10, 20}, nil)
	})
	mk("u/2.parquet", []arrow.Field{{Name: "a", Type: i64}, {Name: "c", Type: arrow.BinaryTypes.String}}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{3}, nil)
		b.Field(1).(*array.StringBuilder).AppendValues([]string{"x"}, nil)
	})
	mk("bad/a-string.parquet", []arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"nope"}, nil)
	})
	c, _ := checkedServer(t, dir)
	ctx := context.Background()

	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"u/"}})
	if err != nil {
		t.Fatal(err)
	}
	got := table(t, res)
	res.release()
	defer got.Release()
	want := `{"a":1,"b":10,"c":null}` + "\n" + `{"a":2,"b":20,"c":null}` + "\n" + `{"a":3,"b":null,"c":"x"}` + "\n"
	var sb strings.Builder
	if err := array.RecordToJSON(got, &sb); err != nil {
		t.Fatal(err)
	}
	if sb.String() != want {
		t.Errorf("unified rows:\n%s\nwant:\n%s", sb.String(), want)
	}

	// A column only one file has may be requested; the others give nulls.
	res, err = scanJSON(ctx, c, map[string]any{"paths": []string{"u/"}, "columns": []string{"c"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := res.rows(); n != 3 {
		t.Errorf("column c: %d rows, want 3", n)
	}
	res.release()

	_, err = scanJSON(ctx, c, map[string]any{"paths": []string{"u/1.parquet", "bad/a-string.parquet"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "u/1.parquet") || !strings.Contains(err.Error(), "bad/a-string.parquet") {
		t.Errorf("incompatible types: got %v, want InvalidArgument naming both files", err)
	}
}

// Bad requests get a clear status, and the next good scan still works.
func TestBadInputKeepsServing(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	defer rec.Release()
	good := writeParquet(t, dir, "good.parquet", rec, 100)
	data, _ := os.ReadFile(good)
	os.WriteFile(filepath.Join(dir, "truncated.parquet"), data[:len(data)/2], 0o644)
	os.WriteFile(filepath.Join(dir, "footer-garbage.parquet"), append(append([]byte("PAR1"), make([]byte, 64)...), []byte{0xff, 0xff, 0, 0, 'P', 'A', 'R', '1'}...), 0o644)
	os.WriteFile(filepath.Join(dir, "text.parquet"), []byte("hello, not parquet"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.parquet"), nil, 0o644)
	outside := t.TempDir()
	writeParquet(t, outside, "secret.parquet", rec, 100)
	os.Symlink(filepath.Join(outside, "secret.parquet"), filepath.Join(dir, "link.parquet"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)

	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		req  any
		code codes.Code
		msg  string
	}{
		{"unknown column", map[string]any{"paths": []string{"good.parquet"}, "columns": []string{"id", "nope"}}, codes.InvalidArgument, `unknown column "nope"; available columns: id, name, s, s.x, s.y, l`},
		{"missing file", map[string]any{"paths": []string{"missing.parquet"}}, codes.NotFound, "missing.parquet"},
		{"glob without match", map[string]any{"paths": []string{"nothing-*.parquet"}}, codes.NotFound, "no files match"},
		{"dot dot", map[string]any{"paths": []string{"../x.parquet"}}, codes.PermissionDenied, "root"},
		{"absolute outside", map[string]any{"paths": []string{"/etc/passwd"}}, codes.PermissionDenied, "outside"},
		{"symlink leaving root", map[string]any{"paths": []string{"link.parquet"}}, codes.PermissionDenied, "outside"},
		{"directory without slash", map[string]any{"paths": []string{"sub"}}, codes.InvalidArgument, "directory"},
		{"truncated", map[string]any{"paths": []string{"truncated.parquet"}}, codes.DataLoss, "truncated.parquet"},
		{"garbage footer", map[string]any{"paths": []string{"footer-garbage.parquet"}}, codes.DataLoss, "footer-garbage.parquet"},
		{"not parquet", map[string]any{"paths": []string{"text.parquet"}}, codes.InvalidArgument, "not a Parquet or ORC file"},
		{"empty file", map[string]any{"paths": []string{"empty.parquet"}}, codes.InvalidArgument, "empty file"},
		{"no paths", map[string]any{"columns": []string{"a"}}, codes.InvalidArgument, "no paths"},
		{"negative limit", map[string]any{"paths": []string{"good.parquet"}, "limit": -1}, codes.InvalidArgument, "limit"},
		{"unknown compression", map[string]any{"paths": []string{"good.parquet"}, "compression": "gzip"}, codes.InvalidArgument, "compression"},
		{"unknown field", map[string]any{"paths": []string{"good.parquet"}, "where": "x > 1"}, codes.InvalidArgument, "where"},
		{"s3 not configured", map[string]any{"paths": []string{"s3://bucket/key.parquet"}}, codes.Unimplemented, "s3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scanJSON(ctx, c, tc.req)
			if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.msg) {
				t.Errorf("got %v, want %v containing %q", err, tc.code, tc.msg)
			}
			if strings.Contains(status.Convert(err).Message(), dir) {
				t.Errorf("message reveals the server's root: %v", err)
			}
			res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"good.parquet"}})
			if err != nil {
				t.Fatalf("good scan after bad request: %v", err)
			}
			res.release()
		})
	}

	_, err := c.DoGet(ctx, &flight.Ticket{Ticket: []byte("not a ticket")})
	if err == nil {
		stream, _ := c.DoGet(ctx, &flight.Ticket{Ticket: []byte("not a ticket")})
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unauthenticated { // an unsigned ticket (server/ticketsign)
		t.Errorf("bad ticket: got %v, want Unauthenticated", err)
	}
}

// A file replaced between planning and reading fails instead of mixing
// two versions.
func TestFileChangedAfterPlanning(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	defer rec.Release()
	writeParquet(t, dir, "f.parquet", rec, 100)
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"f.parquet"}})
	if err != nil {
		t.Fatal(err)
	}
	rec2 := sampleRecord(0, 200)
	defer rec2.Release()
	time.Sleep(10 * time.Millisecond)
	writeParquet(t, dir, "f.parquet", rec2, 100)
	stream, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("got %v, want FailedPrecondition", err)
	}
}

// With default client settings (4 MiB receive limit), a table of wide
// rows still streams: the server keeps each message under the limit.
func TestBatchesFitDefaultMessageLimit(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	long := strings.Repeat("x", 1000)
	for i := 0; i < 30000; i++ {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("%d%s", i, long))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	writeParquet(t, dir, "wide.parquet", rec, 30000)
	c, _ := checkedServer(t, dir)
	res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"wide.parquet"}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	if res.rows() != 30000 {
		t.Errorf("%d rows, want 30000", res.rows())
	}
	for _, r := range res.records {
		if n := stream.BatchBytes(r); n > 3<<20 { // the cut at the default 4 MiB message
			t.Errorf("batch of %d bytes over the %d cut", n, 3<<20)
		}
	}
}

// A client that cancels mid-stream frees the server's batches.
func TestCancelReleasesEverything(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 200000)
	defer rec.Release()
	writeParquet(t, dir, "big.parquet", rec, 20000)
	c, _ := checkedServer(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths":["big.parquet"],"batch_rows":1000}`)})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() {
		t.Fatal("no first batch")
	}
	cancel()
	for rdr.Next() {
	}
	rdr.Release()
	// checkedServer's cleanup asserts that every byte was released.
}
