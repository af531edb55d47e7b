package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestParseAddr(t *testing.T) {
	tests := []struct {
		in, want, err string
		tls           bool
	}{
		{in: "grpc://127.0.0.1:8815", want: "127.0.0.1:8815"},
		{in: "grpc+tcp://localhost:9000", want: "localhost:9000"},
		{in: "127.0.0.1:1234", want: "127.0.0.1:1234"},
		{in: "grpc://example.com", want: "example.com:8815"},
		{in: "grpc://example.com/", want: "example.com:8815"},
		{in: "[::1]:8815", want: "[::1]:8815"},
		{in: "grpc://[::1]", want: "[::1]:8815"},
		{in: "grpc+tls://host:443", want: "host:443", tls: true},
		{in: "http://host:80", err: `unknown scheme "http"`},
		{in: "", err: "want grpc://host:port"},
		{in: "grpc://", err: "want grpc://host:port"},
		{in: "grpc://host:1/x", err: "want grpc://host:port"},
		{in: ":8815", err: "missing host"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, useTLS, err := parseAddr(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseAddr(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want || useTLS != tt.tls {
				t.Fatalf("parseAddr(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// readIDs reads the whole scan and returns the id column, checking each
// batch has the scan's schema.
func readIDs(t *testing.T, s *Scan) []int64 {
	t.Helper()
	var ids []int64
	for s.Next() {
		rec := s.RecordBatch()
		if !rec.Schema().Equal(s.Schema()) {
			t.Fatalf("batch schema %v, scan schema %v", rec.Schema(), s.Schema())
		}
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return ids
}

func TestScanKeepsEndpointOrder(t *testing.T) {
	// Later endpoints answer sooner, so a client that forwarded batches in
	// arrival order would scramble them.
	var eps []fakeEndpoint
	var want []int64
	for i := range 7 {
		batches := []int{3, 1, 2}
		if i == 3 {
			batches = nil // an endpoint with no rows
		}
		eps = append(eps, fakeEndpoint{batches: batches, delay: time.Duration(7-i) * 3 * time.Millisecond})
		row := 0
		for _, n := range batches {
			for range n {
				want = append(want, int64(i*1000+row))
				row++
			}
		}
	}
	c := startFake(t, &fakeServer{endpoints: eps})

	tests := []struct {
		concurrency, buffer int
	}{
		{1, 0}, {1, 2}, {2, 0}, {4, 2}, {16, 1}, {0, -1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("concurrency=%d,buffer=%d", tt.concurrency, tt.buffer), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"x"}},
				WithAllocator(mem), WithConcurrency(tt.concurrency), WithBufferBatches(tt.buffer))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			got := readIDs(t, s)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("ids\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestScanStats(t *testing.T) {
	st := func(path string, rows int64) *scandv1.StreamStats {
		return &scandv1.StreamStats{Path: path, Rows: rows, Batches: 1, Reads: 2, BytesFetched: 100, BytesUsed: 90, IoSeconds: 0.25, ElapsedSeconds: 0.5}
	}
	packed := func(rows int64, paths ...string) *scandv1.StreamStats {
		s := st(paths[0], rows)
		s.Paths, s.Files = paths, int64(len(paths))
		return s
	}
	tests := []struct {
		name      string
		endpoints []fakeEndpoint
		want      Stats
	}{
		{
			name: "metadata on last batch",
			endpoints: []fakeEndpoint{
				{batches: []int{5}, stats: st("a.parquet", 5)},
				{batches: []int{3}, stats: st("a.parquet", 3)},
				{batches: []int{2}, stats: st("b.parquet", 2)},
			},
			want: Stats{Paths: []string{"a.parquet", "b.parquet"}, Files: 2, Endpoints: 3, Rows: 10, Batches: 3, Reads: 6, BytesFetched: 300, BytesUsed: 270, IOSeconds: 0.75, ElapsedSeconds: 1.5},
		},
		{
			name: "metadata-only last message",
			endpoints: []fakeEndpoint{
				{batches: []int{5}, stats: st("a.parquet", 5), metaOnly: true},
				{batches: nil, stats: st("b.parquet", 0), metaOnly: true},
			},
			want: Stats{Paths: []string{"a.parquet", "b.parquet"}, Files: 2, Endpoints: 2, Rows: 5, Batches: 2, Reads: 4, BytesFetched: 200, BytesUsed: 180, IOSeconds: 0.5, ElapsedSeconds: 1},
		},
		{
			name: "packed endpoints count every file they read, once",
			endpoints: []fakeEndpoint{
				{batches: []int{5}, stats: packed(5, "a.parquet", "b.parquet", "c.parquet")},
				{batches: []int{3}, stats: packed(3, "c.parquet", "d.parquet")},
			},
			want: Stats{Paths: []string{"a.parquet", "b.parquet", "c.parquet", "d.parquet"}, Files: 4, Endpoints: 2, Rows: 8, Batches: 2, Reads: 4, BytesFetched: 200, BytesUsed: 180, IOSeconds: 0.5, ElapsedSeconds: 1},
		},
		{
			name: "no metadata: client counts rows",
			endpoints: []fakeEndpoint{
				{batches: []int{5, 2}},
				{batches: []int{1}},
			},
			want: Stats{Endpoints: 2, Rows: 8, Batches: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startFake(t, &fakeServer{endpoints: tt.endpoints})
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"x"}}, WithAllocator(mem))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			readIDs(t, s)
			if got := s.Stats(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("stats\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestStatsAdd(t *testing.T) {
	tests := []struct {
		name string
		a, b Stats
		want Stats
	}{
		{"zero", Stats{}, Stats{}, Stats{}},
		{
			"drops path, keeps paths",
			Stats{Path: "a", Paths: []string{"a"}, Rows: 1},
			Stats{Path: "b", Paths: []string{"b"}, Rows: 2, Files: 1, Endpoints: 1},
			Stats{Paths: []string{"a", "b"}, Rows: 3, Files: 1, Endpoints: 1},
		},
		{
			"sums every figure",
			Stats{Files: 1, Endpoints: 2, Rows: 3, RowsRead: 30, RowsFiltered: 27, Batches: 4, Reads: 5, BytesFetched: 6, BytesUsed: 7, BytesPlanned: 8, BytesWasted: 9, CacheHits: 10, IOSeconds: 0.5, ElapsedSeconds: 1},
			Stats{Files: 1, Endpoints: 1, Rows: 1, RowsRead: 1, RowsFiltered: 1, Batches: 1, Reads: 1, BytesFetched: 1, BytesUsed: 1, BytesPlanned: 1, BytesWasted: 1, CacheHits: 1, IOSeconds: 0.25, ElapsedSeconds: 1},
			Stats{Files: 2, Endpoints: 3, Rows: 4, RowsRead: 31, RowsFiltered: 28, Batches: 5, Reads: 6, BytesFetched: 7, BytesUsed: 8, BytesPlanned: 9, BytesWasted: 10, CacheHits: 11, IOSeconds: 0.75, ElapsedSeconds: 2},
		},
		{"hole keeps the largest", Stats{Hole: 10}, Stats{Hole: 4}, Stats{Hole: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a
			got.Add(tt.b)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A stream's metadata decodes whether its int64 figures are JSON numbers
// (what scand sends) or strings (protojson's encoding); unknown keys are
// ignored.
func TestParseStatsJSON(t *testing.T) {
	want := Stats{Path: "a.parquet", Paths: []string{"a.parquet"}, Files: 1, Rows: 10, RowsRead: 40, RowsFiltered: 30, Batches: 1, Reads: 3, BytesFetched: 1234, BytesUsed: 1200,
		BytesPlanned: 1100, BytesWasted: 34, CacheHits: 2, Hole: 4096, IOSeconds: 0.001, ElapsedSeconds: 0.01}
	for name, meta := range map[string]string{
		"numbers": `{"path":"a.parquet","rows":10,"batches":1,"reads":3,"bytes_fetched":1234,"bytes_used":1200,` +
			`"bytes_planned":1100,"bytes_wasted":34,"cache_hits":2,"hole":4096,"io_seconds":0.001,"elapsed_seconds":0.01,"rows_read":40,"rows_filtered":30,"future_field":1}`,
		"strings": `{"path":"a.parquet","rows":"10","batches":"1","reads":"3","bytes_fetched":"1234","bytes_used":"1200",` +
			`"bytes_planned":"1100","bytes_wasted":"34","cache_hits":"2","hole":"4096","io_seconds":0.001,"elapsed_seconds":0.01,"rows_read":"40","rows_filtered":"30"}`,
		"camel case": `{"path":"a.parquet","rows":10,"batches":1,"reads":3,"bytesFetched":1234,"bytesUsed":1200,` +
			`"bytesPlanned":1100,"bytesWasted":34,"cacheHits":2,"hole":4096,"ioSeconds":0.001,"elapsedSeconds":0.01,"rowsRead":40,"rowsFiltered":30}`,
	} {
		got, err := parseStats([]byte(meta))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", name, got, want)
		}
	}
	if _, err := parseStats([]byte("not json")); err == nil {
		t.Fatal("want an error for bad metadata")
	}
}

// StatsOf of what the server encodes gives the figures back.
func TestStatsOfWireRoundTrip(t *testing.T) {
	st := &scandv1.StreamStats{Path: "p", Rows: 1 << 40, Batches: 2, Reads: 3, BytesFetched: 4, BytesUsed: 5,
		BytesPlanned: 6, BytesWasted: 7, CacheHits: 8, Hole: 9, IoSeconds: 0.5, ElapsedSeconds: 1.5, RowsRead: 10, RowsFiltered: 11,
		Files: 2, Paths: []string{"p", "q"}, BytesUnused: 12}
	got, err := parseStats(wire.MarshalStats(st))
	want := Stats{Path: "p", Paths: []string{"p", "q"}, Files: 2, Rows: 1 << 40, Batches: 2, Reads: 3, BytesFetched: 4, BytesUsed: 5,
		BytesPlanned: 6, BytesWasted: 7, BytesUnused: 12, CacheHits: 8, Hole: 9, IOSeconds: 0.5, ElapsedSeconds: 1.5, RowsRead: 10, RowsFiltered: 11}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
}

// TestScanStops checks both ways of stopping a scan mid-stream: cancelling
// its ctx and releasing it early. Streams never end on their own here, so
// only the stop can end them; goleak (TestMain and below) proves every
// goroutine exits and the checked allocator proves every batch is released.
func TestScanStops(t *testing.T) {
	tests := []struct {
		name   string
		cancel bool // cancel the ctx, else just Release
	}{
		{"cancel ctx", true},
		{"release early", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps := make([]fakeEndpoint, 6)
			for i := range eps {
				eps[i] = fakeEndpoint{endless: true}
			}
			c := startFake(t, &fakeServer{endpoints: eps, version: "x"})
			if _, err := c.Version(context.Background()); err != nil { // connect first
				t.Fatal(err)
			}
			ignore := goleak.IgnoreCurrent()

			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := c.Scan(ctx, &scandv1.ScanRequest{Paths: []string{"x"}}, WithAllocator(mem), WithConcurrency(3))
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if !s.Next() {
					t.Fatalf("scan ended early: %v", s.Err())
				}
			}
			// Let the other streams fill their buffers.
			time.Sleep(20 * time.Millisecond)
			if tt.cancel {
				cancel()
				for s.Next() {
					// At most the batches already buffered.
				}
				if !errors.Is(s.Err(), context.Canceled) {
					t.Fatalf("Err() = %v, want context.Canceled", s.Err())
				}
			}
			s.Release()
			mem.AssertSize(t, 0)
			goleak.VerifyNone(t, ignore)
		})
	}
}

func TestScanStreamError(t *testing.T) {
	eps := []fakeEndpoint{
		{batches: []int{2}},
		{batches: []int{1, 1, 1}, failAfter: 1, failErr: status.Error(codes.DataLoss, "corrupt page in b.parquet")},
		{endless: true},
	}
	c := startFake(t, &fakeServer{endpoints: eps})
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"x"}}, WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var rows int64
	for s.Next() {
		rows += s.RecordBatch().NumRows()
	}
	if rows != 3 {
		t.Errorf("got %d rows before the error, want 3", rows)
	}
	err = s.Err()
	if status.Code(err) != codes.DataLoss {
		t.Fatalf("status.Code(%v) = %v, want DataLoss", err, status.Code(err))
	}
	if want := "DATA_LOSS: corrupt page in b.parquet"; err.Error() != want {
		t.Fatalf("Err() = %q, want %q", err, want)
	}
}

func TestServerErrors(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		code    codes.Code
		message string
	}{
		{"unknown column", status.Error(codes.InvalidArgument, `unknown column "x"; available columns: id, name`),
			codes.InvalidArgument, `INVALID_ARGUMENT: unknown column "x"; available columns: id, name`},
		{"not found", status.Error(codes.NotFound, `no file matches "a/*.parquet"`),
			codes.NotFound, `NOT_FOUND: no file matches "a/*.parquet"`},
		{"server-side unavailable is not unreachable", status.Error(codes.Unavailable, "s3: slow down"),
			codes.Unavailable, "UNAVAILABLE: s3: slow down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startFake(t, &fakeServer{infoErr: tt.err})
			_, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"x"}})
			if err == nil {
				t.Fatal("want an error")
			}
			if err.Error() != tt.message {
				t.Errorf("Error() = %q, want %q", err, tt.message)
			}
			wrapped := fmt.Errorf("outer: %w", err)
			if got := status.Code(wrapped); got != tt.code {
				t.Errorf("status.Code = %v, want %v", got, tt.code)
			}
			var e *Error
			if !errors.As(wrapped, &e) || e.Code != tt.code || e.Message != status.Convert(tt.err).Message() {
				t.Errorf("errors.As = %+v, want code %v and the server's message", e, tt.code)
			}
			if st, _ := status.FromError(err); st.Message() != status.Convert(tt.err).Message() {
				t.Errorf("status.FromError message = %q, want the server's", st.Message())
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now

	c, err := Dial(context.Background(), "grpc://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	calls := map[string]func() error{
		"version": func() error { _, err := c.Version(ctx); return err },
		"scan": func() error {
			_, err := c.Scan(ctx, &scandv1.ScanRequest{Paths: []string{"x"}})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			var e *Error
			if !errors.As(err, &e) || !e.Unreachable() {
				t.Fatalf("err = %v, want an unreachable *Error", err)
			}
			if status.Code(err) != codes.Unavailable {
				t.Errorf("status.Code = %v, want Unavailable", status.Code(err))
			}
			want := "UNAVAILABLE: scand at " + addr + " is not reachable: "
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Error() = %q, want prefix %q", err, want)
			}
		})
	}
}

func TestCancelledCallReturnsContextError(t *testing.T) {
	c := startFake(t, &fakeServer{endpoints: []fakeEndpoint{{batches: []int{1}}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Scan(ctx, &scandv1.ScanRequest{Paths: []string{"x"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestInfoSchemaVersionList(t *testing.T) {
	f := &fakeServer{
		version: "1.2.3",
		endpoints: []fakeEndpoint{
			{path: "trips/a.parquet", batches: []int{4}},
			{path: "trips/b.parquet", batches: []int{6}},
			{path: "other/c.parquet", batches: []int{1}},
		},
	}
	c := startFake(t, f)
	ctx := context.Background()
	req := &scandv1.ScanRequest{Paths: []string{"trips/*.parquet"}, Columns: []string{"id"}, Limit: 7, BatchRows: 3, SplitBytes: 99}

	info, err := c.Info(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := withMaxMessage(req)
	if got := <-f.lastReq; got.String() != want.String() {
		t.Errorf("server decoded %v, want %v", got, want)
	}
	if info.TotalRecords != 11 || len(info.Endpoint) != 3 {
		t.Errorf("info: %d records, %d endpoints; want 11, 3", info.TotalRecords, len(info.Endpoint))
	}

	schema, err := c.Schema(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !schema.Equal(fakeSchema) {
		t.Errorf("schema %v, want %v", schema, fakeSchema)
	}

	v, err := c.Version(ctx)
	if err != nil || v != "1.2.3" {
		t.Errorf("Version() = %q, %v; want 1.2.3", v, err)
	}

	files, err := c.List(ctx, "trips/")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, strings.Join(f.GetFlightDescriptor().GetPath(), "/"))
	}
	if got := strings.Join(paths, ","); got != "trips/a.parquet,trips/b.parquet" {
		t.Errorf("List = %s", got)
	}
}

func TestCodeName(t *testing.T) {
	tests := map[codes.Code]string{
		codes.InvalidArgument:   "INVALID_ARGUMENT",
		codes.Canceled:          "CANCELLED",
		codes.DeadlineExceeded:  "DEADLINE_EXCEEDED",
		codes.Unavailable:       "UNAVAILABLE",
		codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
	}
	for code, want := range tests {
		if got := CodeName(code); got != want {
			t.Errorf("CodeName(%v) = %q, want %q", code, got, want)
		}
	}
}

func TestCodeWords(t *testing.T) {
	tests := map[codes.Code]string{
		codes.OK:                 "ok",
		codes.InvalidArgument:    "invalid argument",
		codes.DataLoss:           "data loss",
		codes.FailedPrecondition: "failed precondition",
		codes.NotFound:           "not found",
		codes.ResourceExhausted:  "resource exhausted",
	}
	for code, want := range tests {
		if got := CodeWords(code); got != want {
			t.Errorf("CodeWords(%v) = %q, want %q", code, got, want)
		}
	}
}

func TestScanStreamSchema(t *testing.T) {
	fileMeta := arrow.NewMetadata([]string{"file"}, []string{"a.parquet"})
	withMeta := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, &fileMeta)
	renamed := arrow.NewSchema([]arrow.Field{
		{Name: "ident", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	tests := []struct {
		name   string
		schema *arrow.Schema
		err    string
	}{
		{name: "metadata differs: batches get the scan's schema", schema: withMeta},
		{name: "column differs: error", schema: renamed, err: "stream column 0 is ident int64, the scan's schema has id int64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startFake(t, &fakeServer{endpoints: []fakeEndpoint{{batches: []int{2}}, {batches: []int{3}, schema: tt.schema}}})
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"x"}}, WithAllocator(mem))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			var rows int64
			for s.Next() {
				if !s.RecordBatch().Schema().Equal(s.Schema()) {
					t.Fatalf("batch schema %v is not the scan's %v", s.RecordBatch().Schema(), s.Schema())
				}
				rows += s.RecordBatch().NumRows()
			}
			if tt.err == "" {
				if s.Err() != nil || rows != 5 {
					t.Fatalf("rows %d, err %v; want 5 rows", rows, s.Err())
				}
				return
			}
			if s.Err() == nil || !strings.Contains(s.Err().Error(), tt.err) {
				t.Fatalf("Err() = %v, want %q", s.Err(), tt.err)
			}
		})
	}
}

func TestScanBoundsConcurrentStreams(t *testing.T) {
	for _, concurrency := range []int{1, 3} {
		t.Run(fmt.Sprint(concurrency), func(t *testing.T) {
			// Each stream waits before its first batch, so streams that are
			// allowed to overlap do.
			eps := make([]fakeEndpoint, 8)
			for i := range eps {
				eps[i] = fakeEndpoint{batches: []int{1, 1}, delay: 30 * time.Millisecond}
			}
			f := &fakeServer{endpoints: eps}
			c := startFake(t, f)
			s, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"x"}}, WithConcurrency(concurrency))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			if n := len(readIDs(t, s)); n != 16 {
				t.Fatalf("read %d rows, want 16", n)
			}
			peak := f.maxInFlight.Load()
			if peak > int64(concurrency) {
				t.Errorf("%d DoGet calls ran at once, want at most %d", peak, concurrency)
			}
			if concurrency > 1 && peak < 2 {
				t.Errorf("DoGet calls never overlapped (peak %d) with concurrency %d", peak, concurrency)
			}
		})
	}
}
