package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// planStats decodes the pruning figures of a scan's FlightInfo.
func planStats(t *testing.T, info *flight.FlightInfo) *scandv1.PlanStats {
	t.Helper()
	st, err := wire.UnmarshalPlanStats(info.AppMetadata)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// int64Column returns column name of rec as Go values (-1 for null).
func int64Column(t *testing.T, rec arrow.RecordBatch, name string) []int64 {
	t.Helper()
	i := rec.Schema().FieldIndices(name)
	if len(i) == 0 {
		t.Fatalf("no column %q in %v", name, rec.Schema())
	}
	col := rec.Column(i[0])
	out := make([]int64, col.Len())
	for r := range out {
		switch c := col.(type) {
		case *array.Int64:
			out[r] = c.Value(r)
		case *array.Int32:
			out[r] = int64(c.Value(r))
		}
		if col.IsNull(r) {
			out[r] = -1
		}
	}
	return out
}

func TestFilterRowsAndProjection(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	tests := []struct {
		name    string
		req     map[string]any
		want    []int64 // column id
		columns []string
	}{
		{"range", map[string]any{"filter": "id >= 35 AND id < 40"}, []int64{35, 36, 37, 38, 39}, []string{"id", "name", "s", "l"}},
		{"filter column not projected", map[string]any{"columns": []string{"id"}, "filter": "name = 'name-8' OR name IS NULL AND id < 10"},
			[]int64{0, 7, 8}, []string{"id"}},
		{"nested field filtered, other field returned", map[string]any{"columns": []string{"id", "s.y"}, "filter": "s.x BETWEEN 10 AND 14"},
			[]int64{5, 6, 7}, []string{"id", "s"}},
		{"in and like", map[string]any{"columns": []string{"id"}, "filter": "id IN (3, 4, 50) AND name LIKE 'name-_'"}, []int64{3, 4}, []string{"id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := map[string]any{"paths": []string{"a.parquet"}}
			for k, v := range tt.req {
				req[k] = v
			}
			res, err := scanJSON(ctx, c, req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			got := table(t, res)
			defer got.Release()
			if ids := int64Column(t, got, "id"); !equalInts(ids, tt.want) {
				t.Errorf("ids %v, want %v", ids, tt.want)
			}
			var names []string
			for _, f := range got.Schema().Fields() {
				names = append(names, f.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.columns, ",") {
				t.Errorf("columns %v, want %v", names, tt.columns)
			}
			var read, filtered int64
			for _, st := range res.stats {
				read, filtered = read+st.RowsRead, filtered+st.RowsFiltered
			}
			if read-filtered != int64(len(tt.want)) || read == 0 {
				t.Errorf("rows_read %d, rows_filtered %d for %d rows sent", read, filtered, len(tt.want))
			}
		})
	}
}

func TestFilterLimitAfterFilter(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"a.parquet"}, "columns": []string{"id"},
		"filter": "id > 42", "limit": 5, "split_bytes": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	if res.info.TotalRecords != 5 {
		t.Errorf("total_records %d, want the limit, 5", res.info.TotalRecords)
	}
	got := table(t, res)
	defer got.Release()
	// Every endpoint may return up to the limit: the client stops reading
	// once it has enough. The first five rows are the first matches.
	if ids := int64Column(t, got, "id"); len(ids) < 5 || !equalInts(ids[:5], []int64{43, 44, 45, 46, 47}) {
		t.Errorf("ids %v, want 43..47 first", ids)
	}
}

func TestFilterPrunesRowGroupsByStatistics(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"a.parquet"}, "columns": []string{"name"}, "filter": "id >= 95"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	st := planStats(t, res.info)
	if st.RowGroups != 10 || st.RowGroupsPruned != 9 || st.RowsWithFilter != 10 || st.RowsWithoutFilter != 100 {
		t.Errorf("plan stats %v: want 9 of 10 row groups pruned", st)
	}
	if st.BytesWithFilter >= st.BytesWithoutFilter {
		t.Errorf("bytes with filter %d, without %d", st.BytesWithFilter, st.BytesWithoutFilter)
	}
	if res.rows() != 5 {
		t.Errorf("%d rows, want 5", res.rows())
	}
}

// TestHivePartitions checks that partition columns join the schema after
// the files' columns, can be projected and filtered, and that a filter on
// them never opens a pruned file: the pruned partitions hold files that are
// not Parquet at all, which any footer read would fail on.
func TestHivePartitions(t *testing.T) {
	dir := t.TempDir()
	for _, y := range []string{"2020", "2021"} {
		rec := sampleRecord(0, 20)
		writeParquet(t, dir, "ds/year="+y+"/region=eu west/part-0.parquet", rec, 10)
		rec.Release()
	}
	bad := filepath.Join(dir, "ds/year=1999/region=eu/part-0.parquet")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"ds/"}, "columns": []string{"year", "id", "region"},
		"filter": "year >= 2021 AND id < 3"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	st := planStats(t, res.info)
	if st.Files != 3 || st.FilesPrunedByPartition != 2 {
		t.Errorf("plan stats %v: want 2 of 3 files pruned by partition", st)
	}
	got := table(t, res)
	defer got.Release()
	if s := got.Schema().String(); !strings.Contains(s, "year: type=int32") || !strings.Contains(s, "region: type=utf8") {
		t.Errorf("schema %s: want year int32 and region string", s)
	}
	if ids := int64Column(t, got, "id"); !equalInts(ids, []int64{0, 1, 2}) {
		t.Errorf("ids %v", ids)
	}
	if years := int64Column(t, got, "year"); !equalInts(years, []int64{2021, 2021, 2021}) {
		t.Errorf("years %v", years)
	}
	if r := got.Column(2).(*array.String).Value(0); r != "eu west" {
		t.Errorf("region %q, want the URL-decoded value", r)
	}

	// Every partition pruned: no rows, the whole schema, partitions last.
	res2, err := scanJSON(ctx, c, map[string]any{"paths": []string{"ds/year=202*/**"}, "filter": "year = 1"})
	if err != nil {
		t.Fatal(err)
	}
	defer res2.release()
	if len(res2.info.Endpoint) != 0 {
		t.Errorf("%d endpoints, want none", len(res2.info.Endpoint))
	}
	schema, err := flight.DeserializeSchema(res2.info.Schema, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if n := schema.NumFields(); n != 6 || schema.Field(4).Name != "year" || schema.Field(5).Name != "region" {
		t.Errorf("schema %v: want the files' 4 columns then year, region", schema)
	}
}

func TestFilterErrors(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 10)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	deep := strings.Repeat("(", 150) + "id = 1" + strings.Repeat(")", 150)
	for _, tc := range []struct {
		name string
		req  map[string]any
		code codes.Code
		want string
	}{
		{"syntax", map[string]any{"filter": "id = = 1"}, codes.InvalidArgument, "position"},
		{"unknown column", map[string]any{"filter": "nope > 1"}, codes.InvalidArgument, "available columns"},
		{"type mismatch", map[string]any{"filter": "id = 'abc'"}, codes.InvalidArgument, "int64"},
		{"too deep", map[string]any{"filter": deep}, codes.ResourceExhausted, "filter"},
		{"both forms", map[string]any{"filter": "id = 1", "filter_substrait": "AAAA"}, codes.InvalidArgument, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := map[string]any{"paths": []string{"a.parquet"}}
			for k, v := range tc.req {
				req[k] = v
			}
			res, err := scanJSON(context.Background(), c, req)
			if err == nil {
				res.release()
				t.Fatal("scan succeeded")
			}
			if s, _ := status.FromError(err); s.Code() != tc.code || !strings.Contains(s.Message(), tc.want) {
				t.Errorf("got %v, want %v containing %q", err, tc.code, tc.want)
			}
		})
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
