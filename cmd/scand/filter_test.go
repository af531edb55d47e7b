package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

func TestFilterFlags(t *testing.T) {
	substrait := filepath.Join(t.TempDir(), "expr.bin")
	if err := os.WriteFile(substrait, []byte{0x0a, 0x01, 0x02}, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		filter    string // the request's SQL filter
		substrait []byte // the request's Substrait filter
		err       error  // from parsing; errAny for any non-usage error
	}{
		{name: "none", args: []string{"a"}},
		{name: "sql", args: []string{"a", "--filter", "fare > 10"}, filter: "fare > 10"},
		{name: "sql with =", args: []string{"--filter=city = 'Paris'", "a"}, filter: "city = 'Paris'"},
		{name: "from env", args: []string{"a"}, env: map[string]string{"SCAND_FILTER": "x IS NULL"}, filter: "x IS NULL"},
		{name: "flag beats env", args: []string{"a", "--filter", "y = 1"}, env: map[string]string{"SCAND_FILTER": "x = 1"}, filter: "y = 1"},
		{name: "substrait", args: []string{"a", "--filter-substrait", substrait}, substrait: []byte{0x0a, 0x01, 0x02}},
		{name: "both", args: []string{"a", "--filter", "x = 1", "--filter-substrait", substrait}, err: errUsage},
		{name: "missing substrait file", args: []string{"a", "--filter-substrait", substrait + ".none"}, err: errAny},
	}
	parsers := map[string]func([]string, env) (*scandv1.ScanRequest, error){
		"scan": func(args []string, e env) (*scandv1.ScanRequest, error) {
			f, err := parseScan(args, e)
			return f.request(), err
		},
		"explain": func(args []string, e env) (*scandv1.ScanRequest, error) {
			f, err := parseExplain(args, e)
			return f.request(), err
		},
	}
	for cmd, parse := range parsers {
		for _, tt := range tests {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				e, _, _ := testEnv(tt.env)
				req, err := parse(tt.args, e)
				switch {
				case tt.err == errAny:
					if err == nil || errors.Is(err, errUsage) {
						t.Fatalf("err = %v, want a plain error", err)
					}
					return
				case !errors.Is(err, tt.err):
					t.Fatalf("err = %v, want %v", err, tt.err)
				case tt.err != nil:
					return
				}
				if req.GetFilter() != tt.filter || string(req.GetFilterSubstrait()) != string(tt.substrait) {
					t.Errorf("request filter %q / %x, want %q / %x", req.GetFilter(), req.GetFilterSubstrait(), tt.filter, tt.substrait)
				}
				if (tt.filter == "" && tt.substrait == nil) != (req.GetRowFilter() == nil) {
					t.Errorf("row filter set = %v, want %v", req.GetRowFilter() != nil, tt.filter != "" || tt.substrait != nil)
				}
			})
		}
	}
}

// errAny stands for any error that is not a usage error.
var errAny = errors.New("any error")

// planServer answers GetFlightInfo with a one-column schema, no endpoints
// and meta as the FlightInfo's app_metadata, and keeps the request.
type planServer struct {
	flight.BaseFlightServer
	meta []byte
	reqs chan *scandv1.ScanRequest
}

func (p *planServer) GetFlightInfo(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	req := &scandv1.ScanRequest{}
	if err := proto.Unmarshal(desc.GetCmd(), req); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "bad ScanRequest: %v", err)
	}
	p.reqs <- req
	schema := arrow.NewSchema([]arrow.Field{{Name: "fare", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, memory.DefaultAllocator),
		FlightDescriptor: desc,
		TotalRecords:     5000,
		TotalBytes:       1 << 20,
		AppMetadata:      p.meta,
	}, nil
}

// startPlanServer serves p on 127.0.0.1:0 until the test ends.
func startPlanServer(t *testing.T, p *planServer) string {
	t.Helper()
	p.reqs = make(chan *scandv1.ScanRequest, 4)
	srv := flight.NewServerWithMiddleware(nil)
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	srv.RegisterFlightService(p)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve()
	}()
	t.Cleanup(func() {
		srv.Shutdown()
		<-done
	})
	return "grpc://" + srv.Addr().String()
}

// TestExplainFilterRendering runs `scand explain --filter` against a
// server that sends PlanStats, and one that sends none (as servers older
// than filters do): the first adds the pruning block, the second prints
// the plan as before.
func TestExplainFilterRendering(t *testing.T) {
	meta := `{"files":12,"files_pruned_by_partition":8,"files_pruned_by_stats":1,"row_groups":12,` +
		`"row_groups_pruned":7,"bytes_without_filter":4194304,"bytes_with_filter":1048576,` +
		`"rows_with_filter":5000,"rows_without_filter":12000,"filter":"(fare > 10)"}`
	withStats := startPlanServer(t, &planServer{meta: []byte(meta)})
	out := runExplainOut(t, withStats, "trips/", "--filter", "fare > 10")
	for _, want := range []string{
		"rows             5,000\n",
		"\nfilter: (fare > 10)\n",
		"  files       12 matched, 8 pruned by partition, 1 by file statistics, 3 kept\n",
		"  row groups  5 of 12 kept (7 pruned by statistics",
		"  bytes       1.0 MiB with the filter, 4.0 MiB without (75% less)\n",
		"  rows        at most 5,000 with the filter, of 12,000\n",
		"\nschema:\n  fare: float64\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}

	older := startPlanServer(t, &planServer{})
	plain := runExplainOut(t, older, "trips/", "--filter", "fare > 10")
	if strings.Contains(plain, "filter") {
		t.Errorf("explain without PlanStats mentions a filter:\n%s", plain)
	}
	if i := strings.Index(out, "\nfilter:"); !strings.HasPrefix(plain, out[:i]) {
		t.Errorf("explain without PlanStats:\n%s\nwant the report of today:\n%s", plain, out[:i])
	}
}

// runExplainOut runs explain against addr and returns its stdout.
func runExplainOut(t *testing.T, addr string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, stdout, stderr := testEnv(nil)
	if code := run(ctx, append([]string{"explain", "--server", addr}, args...), e); code != 0 {
		t.Fatalf("explain exited %d: %s", code, stderr)
	}
	return stdout.String()
}

// TestExplainSendsFilter checks the request that reaches the server.
func TestExplainSendsFilter(t *testing.T) {
	p := &planServer{}
	addr := startPlanServer(t, p)
	runExplainOut(t, addr, "trips/", "--filter", "city IN ('Paris', 'Rome')", "--columns", "fare")
	req := <-p.reqs
	if req.GetFilter() != "city IN ('Paris', 'Rome')" || strings.Join(req.GetColumns(), ",") != "fare" {
		t.Errorf("server got %v", req)
	}
}

func TestPrintStatsRowsRead(t *testing.T) {
	var b strings.Builder
	printStats(&b, client.Stats{Rows: 10, RowsRead: 100, RowsFiltered: 90}, time.Second)
	if !strings.Contains(b.String(), "rows read      100 (90 rejected by the filter)\n") {
		t.Errorf("printStats:\n%s", b.String())
	}
	b.Reset()
	printStats(&b, client.Stats{Rows: 10}, time.Second)
	if strings.Contains(b.String(), "rows read") {
		t.Errorf("printStats without rows_read:\n%s", b.String())
	}
}
