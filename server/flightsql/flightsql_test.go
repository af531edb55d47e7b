package flightsql_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
	"github.com/scand/scand/server/flightsql"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/wire"
)

// row is one generated row of the test dataset.
type row struct {
	id   int64
	city string // "" is NULL
	fare float64
}

// writeDataset writes trips/part-<i>.parquet (files x rowsPer rows, two
// row groups each) and top.parquet under root, and returns the rows of
// trips in file order.
func writeDataset(t *testing.T, root string, files, rowsPer int) []row {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "fare", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	cities := []string{"Paris", "Rome", "", "Oslo"}
	var all []row
	write := func(name string, rows []row) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for _, r := range rows {
			b.Field(0).(*array.Int64Builder).Append(r.id)
			if r.city == "" {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(r.city)
			}
			b.Field(2).(*array.Float64Builder).Append(r.fare)
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(max(1, len(rows)/2))))
		w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < files; i++ {
		var rows []row
		for j := 0; j < rowsPer; j++ {
			id := int64(i*rowsPer + j)
			rows = append(rows, row{id: id, city: cities[id%4], fare: float64(id%50) + 0.5})
		}
		write(filepath.Join(root, "trips", fmt.Sprintf("part-%d.parquet", i)), rows)
		all = append(all, rows...)
	}
	write(filepath.Join(root, "top.parquet"), all[:3])
	return all
}

type fixture struct {
	client *fsql.Client
	srv    *server.Server
	addr   string
	mem    memory.Allocator
	rows   []row
}

// start serves a generated root with scand (whose port serves the front
// door), with a checked allocator asserted empty at the end.
func start(t *testing.T) fixture { return startWith(t, wire.SendZeroCopy) }

func startWith(t *testing.T, sendPath wire.SendPath) fixture {
	t.Helper()
	root := t.TempDir()
	rows := writeDataset(t, root, 3, 40)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	bucket := &storage.Mux{Default: b}
	srv, err := server.New(server.Config{Bucket: bucket, Scheduler: iosched.New(bucket, iosched.Options{}), Mem: mem,
		SendPath: sendPath, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	cl, err := fsql.NewClient(lis.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cl.Close()
		srv.Stop()
		mem.AssertSize(t, 0)
	})
	return fixture{client: cl, srv: srv, addr: lis.Addr().String(), mem: mem, rows: rows}
}

// readAll reads every endpoint of info, in order, into one table as
// strings per row.
func (f fixture) readAll(t *testing.T, info *flight.FlightInfo) (*arrow.Schema, [][]string) {
	t.Helper()
	var out [][]string
	var schema *arrow.Schema
	for _, ep := range info.Endpoint {
		rdr, err := f.client.DoGet(context.Background(), ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		schema = rdr.Schema()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				var r []string
				for c := 0; c < int(rec.NumCols()); c++ {
					col := rec.Column(c)
					if col.IsNull(i) {
						r = append(r, "NULL")
					} else {
						r = append(r, col.ValueStr(i))
					}
				}
				out = append(out, r)
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
	}
	if schema == nil {
		var err error
		if schema, err = flight.DeserializeSchema(info.Schema, memory.DefaultAllocator); err != nil {
			t.Fatal(err)
		}
	}
	return schema, out
}

func (f fixture) query(t *testing.T, sql string) (*arrow.Schema, [][]string) {
	t.Helper()
	info, err := f.client.Execute(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return f.readAll(t, info)
}

func fmtFloat(v float64) string { return fmt.Sprint(v) }

func TestStatements(t *testing.T) {
	f := start(t)
	want := func(keep func(row) bool, limit int, cols func(row) []string) [][]string {
		var out [][]string
		for _, r := range f.rows {
			if keep(r) && (limit < 0 || len(out) < limit) {
				out = append(out, cols(r))
			}
		}
		return out
	}
	all := func(row) bool { return true }
	city := func(r row) string {
		if r.city == "" {
			return "NULL"
		}
		return r.city
	}
	for _, tc := range []struct {
		sql  string
		want [][]string
	}{
		{"SELECT * FROM trips", want(all, -1, func(r row) []string { return []string{fmt.Sprint(r.id), city(r), fmtFloat(r.fare)} })},
		{"SELECT fare, id FROM 'trips/*.parquet' WHERE fare > 40 LIMIT 7", want(func(r row) bool { return r.fare > 40 }, 7,
			func(r row) []string { return []string{fmtFloat(r.fare), fmt.Sprint(r.id)} })},
		{"select id from scand.root.trips where city = 'Rome' and id < 50", want(func(r row) bool { return r.city == "Rome" && r.id < 50 }, -1,
			func(r row) []string { return []string{fmt.Sprint(r.id)} })},
		{`SELECT "city" FROM root.trips WHERE city IS NULL LIMIT 0`, nil},
		{"SELECT id FROM \"top.parquet\"", [][]string{{"0"}, {"1"}, {"2"}}},
	} {
		_, got := f.query(t, tc.sql)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.sql, got, tc.want)
		}
	}
}

// TestAggregates runs on both send paths: aggregates read scand's
// streams in the process, whose messages differ by path.
func TestAggregates(t *testing.T) {
	for _, sp := range []wire.SendPath{wire.SendZeroCopy, wire.SendStock} {
		t.Run(sp.String(), func(t *testing.T) { testAggregates(t, startWith(t, sp)) })
	}
}

func testAggregates(t *testing.T, f fixture) {
	count := func(keep func(row) bool) int {
		n := 0
		for _, r := range f.rows {
			if keep(r) {
				n++
			}
		}
		return n
	}
	minMax := func(keep func(row) bool) (lo, hi float64) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, r := range f.rows {
			if keep(r) {
				lo, hi = math.Min(lo, r.fare), math.Max(hi, r.fare)
			}
		}
		return
	}
	lo, hi := minMax(func(r row) bool { return r.city == "Oslo" })
	for _, tc := range []struct {
		sql   string
		names []string
		want  []string
	}{
		{"SELECT COUNT(*) FROM trips", []string{"count(*)"}, []string{fmt.Sprint(len(f.rows))}},
		{"SELECT count(*) AS n FROM trips WHERE fare >= 25", []string{"n"}, []string{fmt.Sprint(count(func(r row) bool { return r.fare >= 25 }))}},
		{"SELECT COUNT(*) FROM trips WHERE city IS NULL", []string{"count(*)"}, []string{fmt.Sprint(count(func(r row) bool { return r.city == "" }))}},
		{"SELECT MIN(fare), MAX(fare), COUNT(*) FROM trips WHERE city = 'Oslo'", []string{"min(fare)", "max(fare)", "count(*)"},
			[]string{fmtFloat(lo), fmtFloat(hi), fmt.Sprint(count(func(r row) bool { return r.city == "Oslo" }))}},
		{"SELECT MIN(city), MAX(city) FROM trips", []string{"min(city)", "max(city)"}, []string{"Oslo", "Rome"}},
		{"SELECT MAX(id) FROM trips WHERE id > 100000", []string{"max(id)"}, []string{"NULL"}},
	} {
		schema, got := f.query(t, tc.sql)
		var names []string
		for _, fl := range schema.Fields() {
			names = append(names, fl.Name)
		}
		if fmt.Sprint(names) != fmt.Sprint(tc.names) || len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(tc.want) {
			t.Errorf("%s: columns %v rows %v, want %v %v", tc.sql, names, got, tc.names, tc.want)
		}
	}
	if _, got := f.query(t, "SELECT COUNT(*) FROM trips LIMIT 0"); len(got) != 0 {
		t.Errorf("COUNT(*) ... LIMIT 0: %v, want no rows", got)
	}
}

func TestPrepared(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	p, err := f.client.Prepare(ctx, "SELECT id, fare FROM trips WHERE id < 3")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.DatasetSchema(); got == nil || got.NumFields() != 2 || got.Field(0).Name != "id" {
		t.Errorf("prepared statement's schema: %v", got)
	}
	info, err := p.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, rows := f.readAll(t, info); fmt.Sprint(rows) != "[[0 0.5] [1 1.5] [2 2.5]]" {
		t.Errorf("prepared statement's rows: %v", rows)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Prepare(ctx, "SELECT id FROM trips WHERE id = ?"); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(err.Error(), "bind parameter") {
		t.Errorf("a statement with a parameter: %v, want INVALID_ARGUMENT naming the parameter", err)
	}
}

func TestErrors(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	for _, tc := range []struct {
		sql  string
		code codes.Code
		want string
	}{
		{"SELECT id FROM trips WHERE id >", codes.InvalidArgument, "at position 31"},
		{"SELEKT 1", codes.InvalidArgument, "at position 0"},
		{"SELECT a.id FROM trips a JOIN trips b ON a.id = b.id", codes.Unimplemented, "joins, grouping, sorting and expressions belong in a query engine"},
		{"SELECT city, COUNT(*) FROM trips GROUP BY city", codes.Unimplemented, "GROUP BY"},
		{"SELECT nope FROM trips", codes.InvalidArgument, "nope"},
		{"SELECT * FROM missing", codes.NotFound, "missing"},
		{"SELECT * FROM other.schema.t", codes.NotFound, "no table"},
	} {
		_, err := f.client.Execute(ctx, tc.sql)
		if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %v ...%s...", tc.sql, err, tc.code, tc.want)
		}
	}
}

func TestCatalog(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	info, err := f.client.GetTables(ctx, &fsql.GetTablesOpts{IncludeSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	_, rows := f.readAll(t, info)
	var names []string
	for _, r := range rows {
		names = append(names, r[0]+"."+r[1]+"."+r[2]+":"+r[3])
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[scand.root.top.parquet:TABLE scand.root.trips:TABLE]" {
		t.Errorf("tables: %v", names)
	}
	info, err = f.client.GetCatalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, rows := f.readAll(t, info); fmt.Sprint(rows) != "[[scand]]" {
		t.Errorf("catalogs: %v", rows)
	}
	pattern := "tr%"
	info, err = f.client.GetTables(ctx, &fsql.GetTablesOpts{TableNameFilterPattern: &pattern})
	if err != nil {
		t.Fatal(err)
	}
	if _, rows := f.readAll(t, info); len(rows) != 1 || rows[0][2] != "trips" {
		t.Errorf("tables like tr%%: %v", rows)
	}
	info, err = f.client.GetSqlInfo(ctx, []fsql.SqlInfo{fsql.SqlInfoFlightSqlServerName, fsql.SqlInfoFlightSqlServerReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	if _, rows := f.readAll(t, info); len(rows) != 2 {
		t.Errorf("sql info: %v", rows)
	}
}

// recording is a Backend that records the requests planned and counts
// the endpoints read.
type recording struct {
	flightsql.Backend
	mu    sync.Mutex
	plans []*scandv1.ScanRequest
	reads int
}

func (r *recording) Plan(ctx context.Context, req *scandv1.ScanRequest) (*flight.FlightInfo, error) {
	r.mu.Lock()
	r.plans = append(r.plans, req)
	r.mu.Unlock()
	return r.Backend.Plan(ctx, req)
}

func (r *recording) PlanCount(ctx context.Context, req *scandv1.ScanRequest) (int64, *flight.FlightInfo, error) {
	r.mu.Lock()
	r.plans = append(r.plans, req)
	r.mu.Unlock()
	return r.Backend.PlanCount(ctx, req)
}

func (r *recording) Read(ctx context.Context, ticket []byte, fn func(arrow.RecordBatch) error) error {
	r.mu.Lock()
	r.reads++
	r.mu.Unlock()
	return r.Backend.Read(ctx, ticket, fn)
}

type statement string

func (q statement) GetQuery() string         { return string(q) }
func (q statement) GetTransactionId() []byte { return nil }

// TestCountsReadOnlyWhatTheyNeed: COUNT(*) without a condition reads no
// endpoint (the footers' row counts answer it); with one, it reads the
// condition's first column only, and only in row groups the statistics
// cannot decide (ids ascend: every file's two row groups hold 20
// consecutive ids, and fares follow id % 50).
func TestCountsReadOnlyWhatTheyNeed(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	count := func(sql string) (int64, *recording) {
		rec := &recording{Backend: flightsql.FlightBackend{Service: f.srv, Mem: f.mem, Count: f.srv.PlanCount}}
		front, err := flightsql.New(flightsql.Config{Backend: rec, Mem: f.mem})
		if err != nil {
			t.Fatal(err)
		}
		info, err := front.GetFlightInfoStatement(ctx, statement(sql), &flight.FlightDescriptor{})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		tkt, err := fsql.GetStatementQueryTicket(info.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		_, ch, err := front.DoGetStatement(ctx, tkt)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var n int64 = -1
		for chunk := range ch {
			n = chunk.Data.Column(0).(*array.Int64).Value(0)
			chunk.Data.Release()
		}
		return n, rec
	}
	n, rec := count("SELECT COUNT(*) FROM trips")
	if n != int64(len(f.rows)) || rec.reads != 0 {
		t.Errorf("COUNT(*): %d rows after %d endpoint reads, want %d after none", n, rec.reads, len(f.rows))
	}
	n, rec = count("SELECT COUNT(*) FROM trips WHERE fare < 10 AND city = 'Rome'")
	want := 0
	for _, r := range f.rows {
		if r.fare < 10 && r.city == "Rome" {
			want++
		}
	}
	if n != int64(want) || rec.reads == 0 {
		t.Errorf("COUNT(*) WHERE: %d rows after %d reads, want %d", n, rec.reads, want)
	}
	for _, p := range rec.plans {
		if fmt.Sprint(p.Columns) != "[fare]" {
			t.Errorf("COUNT(*) WHERE planned columns %v, want [fare]", p.Columns)
		}
	}
	for _, tc := range []struct {
		cond  string
		keep  func(row) bool
		reads int // endpoints read: the row groups the statistics cannot decide
	}{
		{"id >= 0", func(row) bool { return true }, 0},
		{"id < 40", func(r row) bool { return r.id < 40 }, 0},                             // file 0 wholly, the others pruned
		{"id < 50", func(r row) bool { return r.id < 50 }, 1},                             // file 1's first group straddles
		{"id BETWEEN 45 AND 74", func(r row) bool { return r.id >= 45 && r.id <= 74 }, 1}, // file 1 straddles: one endpoint
		{"city IS NULL", func(r row) bool { return r.city == "" }, -1},                    // statistics hold nulls and values
		{"id >= 0 AND fare > 100", func(row) bool { return false }, 0},                    // pruned
	} {
		n, rec := count("SELECT COUNT(*) FROM trips WHERE " + tc.cond)
		want := 0
		for _, r := range f.rows {
			if tc.keep(r) {
				want++
			}
		}
		if n != int64(want) || tc.reads >= 0 && rec.reads != tc.reads {
			t.Errorf("COUNT(*) WHERE %s: %d rows after %d endpoint reads, want %d after %d", tc.cond, n, rec.reads, want, tc.reads)
		}
	}
}
