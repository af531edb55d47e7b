package client

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

var wantPlanStats = &PlanStats{
	Files: 12, FilesPrunedByPartition: 8, FilesPrunedByStats: 1,
	RowGroups: 12, RowGroupsPruned: 7,
	BytesWithoutFilter: 4 << 20, BytesWithFilter: 1 << 20,
	RowsWithFilter: 5000, RowsWithoutFilter: 12000,
	Filter: "fare > 10",
}

// TestExplainPlanStats checks that Explain decodes the FlightInfo's
// app_metadata in each spelling a server may use, and that a server
// sending none or garbage still gives a plan.
func TestExplainPlanStats(t *testing.T) {
	full := &scandv1.PlanStats{Files: 12, FilesPrunedByPartition: 8, FilesPrunedByStats: 1, RowGroups: 12, RowGroupsPruned: 7,
		BytesWithoutFilter: 4 << 20, BytesWithFilter: 1 << 20, RowsWithFilter: 5000, RowsWithoutFilter: 12000, Filter: "fare > 10"}
	protoJSON, err := protojson.Marshal(full) // camelCase, int64 as strings
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		meta string
		want *PlanStats
	}{
		"older server": {"", nil},
		// What scand writes: snake_case, numbers, every field.
		"numbers": {`{"files":12,"files_pruned_by_partition":8,"files_pruned_by_stats":1,"row_groups":12,` +
			`"row_groups_pruned":7,"bytes_without_filter":4194304,"bytes_with_filter":1048576,` +
			`"rows_with_filter":5000,"rows_without_filter":12000,"filter":"fare > 10"}`, wantPlanStats},
		"protojson":      {string(protoJSON), wantPlanStats},
		"unknown fields": {`{"files":3,"future":{"x":1}}`, &PlanStats{Files: 3}},
		"no filter":      {`{"files":3,"filter":""}`, &PlanStats{Files: 3}},
		"not json":       {"not json", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := startFake(t, &fakeServer{endpoints: []fakeEndpoint{{batches: []int{1}}}, appMetadata: []byte(tc.meta)})
			p, err := c.Explain(context.Background(), &scandv1.ScanRequest{Paths: []string{"x"}})
			if err != nil {
				t.Fatal(err)
			}
			if (p.Stats == nil) != (tc.want == nil) || p.Stats != nil && !reflect.DeepEqual(*p.Stats, *tc.want) {
				t.Fatalf("Stats = %+v, want %+v", p.Stats, tc.want)
			}
		})
	}
}

func TestParsePlanStatsError(t *testing.T) {
	_, err := parsePlanStats([]byte(`{"files":"many"}`))
	if err == nil || !strings.Contains(err.Error(), `plan stats "{\"files\":\"many\"}"`) {
		t.Fatalf("err = %v, want one quoting the metadata", err)
	}
}

func TestPlanStringPruning(t *testing.T) {
	base := &Plan{TotalRecords: 5000, TotalBytes: 1 << 20, Files: []PlanFile{{Path: "a.parquet", Format: "parquet", Endpoints: 1, Rows: 5000}}}
	before := base.String()

	withStats := *base
	withStats.Stats = wantPlanStats
	out := withStats.String()
	for _, want := range []string{
		"\nfilter: fare > 10\n",
		"  files       12 matched, 8 pruned by partition, 1 by file statistics, 3 kept\n",
		"  row groups  5 of 12 kept (7 pruned by statistics, 0 by bloom filters, in the files whose footers were read)\n",
		"  bytes       1.0 MiB with the filter, 4.0 MiB without (75% less)\n",
		"  rows        at most 5,000 with the filter, of 12,000\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("String() lacks %q:\n%s", want, out)
		}
	}
	// The rest of the report is as before: the block is inserted whole
	// after the totals.
	if i := strings.Index(out, "\nfilter:"); out[:i] != before[:i] || !strings.HasSuffix(out, before[i:]) {
		t.Errorf("String() with stats changed the rest of the report:\n%s\nwas:\n%s", out, before)
	}

	// Without a filter there is no pruning to show.
	noFilter := *base
	noFilter.Stats = &PlanStats{Files: 1, RowGroups: 1, BytesWithFilter: 10, BytesWithoutFilter: 10}
	if got := noFilter.String(); got != before {
		t.Errorf("String() without a filter:\n%s\nwant:\n%s", got, before)
	}
}

func TestPlanStringTable(t *testing.T) {
	p := &Plan{TotalRecords: 10, Stats: &PlanStats{Files: 3, ManifestsRead: 2, ManifestsSkipped: 5, TableFilesPruned: 9, DeleteFiles: 1}}
	out := p.String()
	for _, want := range []string{
		"\ntable:\n",
		"  manifests     2 read, 5 skipped by partition summaries\n",
		"  data files    3 kept, 9 pruned by partition values and column statistics\n",
		"  delete files  1 attached\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("String() lacks %q:\n%s", want, out)
		}
	}
	p.Stats.TableFilesPruned = -1
	if out := p.String(); !strings.Contains(out, "3 kept, an unknown number of pruned") {
		t.Errorf("String() with an unknown count:\n%s", out)
	}
	m, err := wire.UnmarshalPlanStats([]byte(`{"files":3,"manifests_read":2,"manifests_skipped":5,"table_files_pruned":9,"delete_files":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := planStatsOf(m); got.ManifestsRead != 2 || got.ManifestsSkipped != 5 || got.TableFilesPruned != 9 || got.DeleteFiles != 1 {
		t.Errorf("planStatsOf = %+v", got)
	}
}

func TestSaved(t *testing.T) {
	for _, tc := range []struct {
		with, without int64
		want          string
	}{{1, 4, " (75% less)"}, {4, 4, ""}, {0, 0, ""}, {0, 10, " (100% less)"}, {5, 4, ""}} {
		if got := saved(tc.with, tc.without); got != tc.want {
			t.Errorf("saved(%d, %d) = %q, want %q", tc.with, tc.without, got, tc.want)
		}
	}
}

// TestFilterReachesServer checks that each form of the row filter goes
// out in its ScanRequest field, for plans and scans alike.
func TestFilterReachesServer(t *testing.T) {
	substrait := []byte{0x0a, 0x02, 0x08, 0x01}
	for name, req := range map[string]*scandv1.ScanRequest{
		"sql":       {Paths: []string{"x"}, RowFilter: &scandv1.ScanRequest_Filter{Filter: "fare > 10"}},
		"substrait": {Paths: []string{"x"}, RowFilter: &scandv1.ScanRequest_FilterSubstrait{FilterSubstrait: substrait}},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeServer{endpoints: []fakeEndpoint{{batches: []int{1}}}}
			c := startFake(t, f)
			if _, err := c.Explain(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if got := <-f.lastReq; !proto.Equal(got, withMaxMessage(req)) {
				t.Errorf("server got %v, want %v", got, withMaxMessage(req))
			}
			s, err := c.Scan(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			readIDs(t, s)
			got := <-f.lastReq
			if got.GetFilter() != req.GetFilter() || !bytes.Equal(got.GetFilterSubstrait(), req.GetFilterSubstrait()) {
				t.Errorf("scan sent filter %q / %x, want %q / %x", got.GetFilter(), got.GetFilterSubstrait(), req.GetFilter(), req.GetFilterSubstrait())
			}
		})
	}
}

// What the server encodes (wire.MarshalStats) decodes back whole.
func TestPlanStatsWireRoundTrip(t *testing.T) {
	m := &scandv1.PlanStats{Files: 12, FilesPrunedByPartition: 8, FilesPrunedByStats: 1, RowGroups: 12, RowGroupsPruned: 7,
		BytesWithoutFilter: 4 << 20, BytesWithFilter: 1 << 20, RowsWithFilter: 5000, RowsWithoutFilter: 12000, Filter: "fare > 10"}
	got, err := parsePlanStats(wire.MarshalStats(m))
	if err != nil || !reflect.DeepEqual(*got, *wantPlanStats) {
		t.Fatalf("got %+v, %v; want %+v", got, err, wantPlanStats)
	}
	m.LateMaterialization = []*scandv1.LatePlan{{Strategy: "yes", Reason: "filter on fare; 2 of 3 columns deferred", LateRowGroups: 4, RowGroups: 4}, {Strategy: "no", Reason: "no page index"}}
	got, err = parsePlanStats(wire.MarshalStats(m))
	want := []LatePlan{{"yes", "filter on fare; 2 of 3 columns deferred", 4, 4}, {"no", "no page index", 0, 0}}
	if err != nil || !reflect.DeepEqual(got.Late, want) || got.Late[0].String() != "yes (filter on fare; 2 of 3 columns deferred)" {
		t.Fatalf("late: got %+v, %v; want %+v", got.Late, err, want)
	}
}

// TestScanCapsLimit: with a filter every endpoint may return the whole
// limit, so the client stops at it, cutting the last batch, and ends
// cleanly with every batch released and every stream stopped.
func TestScanCapsLimit(t *testing.T) {
	// endpoints and rows are the Stats: the endpoint being read when the
	// limit is reached is drained and counted, the later ones are not.
	for _, tc := range []struct {
		limit     int64
		want      []int64
		endpoints int
		rows      int64
	}{
		{6, []int64{0, 1, 2, 3, 4, 1000}, 2, 8},
		{5, []int64{0, 1, 2, 3, 4}, 1, 5},
		{2, []int64{0, 1}, 1, 5},
		{0, []int64{0, 1, 2, 3, 4, 1000, 1001, 1002, 2000}, 3, 9},
		{100, []int64{0, 1, 2, 3, 4, 1000, 1001, 1002, 2000}, 3, 9},
	} {
		f := &fakeServer{endpoints: []fakeEndpoint{{batches: []int{2, 3}}, {batches: []int{3}}, {batches: []int{1}, endless: true}}}
		if tc.limit == 0 || tc.limit == 100 {
			f.endpoints[2].endless = false
		}
		c := startFake(t, f)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s, err := c.Scan(context.Background(), &scandv1.ScanRequest{Paths: []string{"x"}, Limit: tc.limit}, WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		if got := readIDs(t, s); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("limit %d: ids %v, want %v", tc.limit, got, tc.want)
		}
		if st := s.Stats(); st.Endpoints != tc.endpoints || st.Rows != tc.rows {
			t.Errorf("limit %d: stats %d endpoints %d rows, want %d %d", tc.limit, st.Endpoints, st.Rows, tc.endpoints, tc.rows)
		}
		s.Release()
		mem.AssertSize(t, 0)
	}
}

func TestFilteredLimit(t *testing.T) {
	ticket := func(task *scandv1.ScanTask) *flight.FlightEndpoint {
		b, err := proto.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		return &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: b}}
	}
	filtered := &scandv1.ScanTask{Path: "a", Limit: 10, RowFilter: &scandv1.ScanTask_Filter{Filter: "x > 1"}}
	for name, tc := range map[string]struct {
		eps  []*flight.FlightEndpoint
		want int64
	}{
		"filtered":      {[]*flight.FlightEndpoint{ticket(filtered), ticket(filtered)}, 10},
		"substrait":     {[]*flight.FlightEndpoint{ticket(&scandv1.ScanTask{Limit: 7, RowFilter: &scandv1.ScanTask_FilterSubstrait{FilterSubstrait: []byte{1}}})}, 7},
		"no filter":     {[]*flight.FlightEndpoint{ticket(&scandv1.ScanTask{Path: "a", Limit: 10})}, 0},
		"no limit":      {[]*flight.FlightEndpoint{ticket(&scandv1.ScanTask{RowFilter: &scandv1.ScanTask_Filter{Filter: "x"}})}, 0},
		"opaque ticket": {[]*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: []byte{0xff}}}, ticket(filtered)}, 10},
		"no endpoints":  {nil, 0},
	} {
		if got := filteredLimit(&flight.FlightInfo{Endpoint: tc.eps}); got != tc.want {
			t.Errorf("%s: filteredLimit = %d, want %d", name, got, tc.want)
		}
	}
}

// withMaxMessage is req as the client sends it by default: with
// max_message_bytes set (WithMaxMessageBytes).
func withMaxMessage(req *scandv1.ScanRequest) *scandv1.ScanRequest {
	out := proto.CloneOf(req)
	out.MaxMessageBytes = DefaultMaxMessageBytes
	return out
}
