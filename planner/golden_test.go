package planner

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	scanparquet "github.com/scand/scand/scanner/parquet"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/files"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
)

var update = flag.Bool("update", false, "rewrite the golden plans under testdata/golden")

// Golden plans: for a corpus written here and a table of requests, the
// plan's schema, tasks and figures as text, compared with
// testdata/golden/NAME.txt (go test ./planner -run TestGoldenPlans -update
// rewrites them). A change of planning shows as a diff of these files.
func TestGoldenPlans(t *testing.T) {
	root := t.TempDir()
	writeGoldenCorpus(t, root)
	pl := testPlanner(t, root)
	for _, tc := range []struct {
		name string
		req  *scandv1.ScanRequest
	}{
		{"plain", &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}}},
		{"projection", &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, Columns: []string{"amount", "id"}}},
		{"split", &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, Columns: []string{"id"}, SplitBytes: 2 << 10}},
		{"hive", &scandv1.ScanRequest{Paths: []string{"hive/"}}},
		{"hive_partition_filter", &scandv1.ScanRequest{Paths: []string{"hive/"}, Columns: []string{"id", "city"},
			RowFilter: &scandv1.ScanRequest_Filter{Filter: "city = 'ber' AND day = 2"}}},
		{"stats_filter", &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, RowFilter: &scandv1.ScanRequest_Filter{Filter: "id >= 600"}}},
		{"limit", &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, Limit: 300}},
		{"filter_limit", &scandv1.ScanRequest{Paths: []string{"plain/a.parquet"}, Limit: 5, RowFilter: &scandv1.ScanRequest_Filter{Filter: "amount > 10"}}},
		{"small_files_packed", &scandv1.ScanRequest{Paths: []string{"small/", "plain/a.parquet"}}},
		{"small_files_split_bytes", &scandv1.ScanRequest{Paths: []string{"small/"}, Columns: []string{"id"}, SplitBytes: 2 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := pl.Plan(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			got := renderPlan(p)
			path := filepath.Join("testdata", "golden", tc.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("plan of %s differs from %s (run with -update if the change is meant):\n--- got\n%s--- want\n%s", tc.name, path, got, want)
			}
		})
	}
}

// testPlanner plans over the local directory root, every file in scope.
func testPlanner(t *testing.T, root string) *Planner {
	t.Helper()
	bucket, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	sched := iosched.New(bucket, iosched.Options{})
	pl, err := New(Config{
		Resolve: func(_ context.Context, req *scandv1.ScanRequest) (source.Source, error) {
			return files.New(bucket, req.Paths, everything{}), nil
		},
		Open: func(ctx context.Context, info storage.Info) (*Opened, error) {
			f, err := sched.Open(ctx, info)
			if err != nil {
				return nil, err
			}
			pf, err := scanparquet.Open(ctx, info.Name, f, memory.DefaultAllocator)
			if err != nil {
				f.Close()
				return nil, err
			}
			return &Opened{File: pf, Info: f.Info(), Close: func() error { pf.Close(); return f.Close() }}, nil
		},
		Hole: sched.Hole,
	})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// everything is a scope that allows every file.
type everything struct{}

func (everything) Check(string) error           { return nil }
func (everything) CheckFile(storage.Info) error { return nil }
func (everything) AllowsFile(storage.Info) bool { return true }

// writeGoldenCorpus writes the golden plans' files: one file of four row
// groups, hive partitions, and twenty small files.
func writeGoldenCorpus(t *testing.T, root string) {
	writeGoldenFile(t, filepath.Join(root, "plain/a.parquet"), 0, 1000, 250)
	writeGoldenFile(t, filepath.Join(root, "hive/city=ams/day=1/part-0.parquet"), 0, 100, 100)
	writeGoldenFile(t, filepath.Join(root, "hive/city=ber/day=1/part-0.parquet"), 100, 100, 100)
	writeGoldenFile(t, filepath.Join(root, "hive/city=ber/day=2/part-0.parquet"), 200, 100, 50)
	for i := range 20 {
		writeGoldenFile(t, filepath.Join(root, fmt.Sprintf("small/f%03d.parquet", i)), int64(i*10), 10, 10)
	}
}

// writeGoldenFile writes rows [start, start+n) of (id int64, name string,
// amount float64) in row groups of group rows.
func writeGoldenFile(t *testing.T, path string, start, n, group int64) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", i%7))
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 10)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(group), parquet.WithCreatedBy("scand golden plans"))
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

// renderPlan is a plan as text: its schema, totals, figures and tasks.
func renderPlan(p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema:")
	for _, f := range p.Schema.Fields() {
		fmt.Fprintf(&b, " %s", f.Name)
		fmt.Fprintf(&b, ":%s", f.Type)
	}
	fmt.Fprintf(&b, "\nendpoints: %d rows: %d bytes: %d\n", len(p.Tasks), p.Rows, p.Bytes)
	st := p.Stats
	fmt.Fprintf(&b, "stats: files %d, pruned by partition %d, by stats %d; row groups %d, pruned %d, by bloom %d\n",
		st.GetFiles(), st.GetFilesPrunedByPartition(), st.GetFilesPrunedByStats(), st.GetRowGroups(), st.GetRowGroupsPruned(), st.GetRowGroupsPrunedByBloom())
	fmt.Fprintf(&b, "stats: rows %d of %d, bytes %d of %d\n", st.GetRowsWithFilter(), st.GetRowsWithoutFilter(), st.GetBytesWithFilter(), st.GetBytesWithoutFilter())
	if st.GetFilter() != "" {
		fmt.Fprintf(&b, "filter: %s\n", st.GetFilter())
	}
	for i, task := range p.Tasks {
		fmt.Fprintf(&b, "task %d:%s\n", i, renderTask(task))
		for _, m := range task.GetMore() {
			fmt.Fprintf(&b, "  +%s\n", renderTask(m))
		}
		if i < len(p.Late) && p.Late[i] != nil {
			l := p.Late[i]
			fmt.Fprintf(&b, "  late: %s (%d of %d row groups): %s\n", l.Strategy, l.LateRowGroups, l.RowGroups, l.Reason)
		}
	}
	return b.String()
}

func renderTask(t *scandv1.ScanTask) string {
	var b strings.Builder
	fmt.Fprintf(&b, " %s size %d groups %v rows %d", t.GetPath(), t.GetSize(), t.GetRowGroups(), t.GetRows())
	if t.GetLimit() > 0 {
		fmt.Fprintf(&b, " limit %d", t.GetLimit())
	}
	if c := t.GetColumns(); c != nil {
		fmt.Fprintf(&b, " columns %v", c.GetIndex())
		if len(c.GetAbsent()) > 0 {
			fmt.Fprintf(&b, " absent %v", c.GetAbsent())
		}
	}
	if t.GetSchemaDelta() != nil {
		fmt.Fprintf(&b, " delta")
	}
	if len(t.GetExtraFields()) > 0 {
		fmt.Fprintf(&b, " extra-fields")
	}
	if f := t.GetFilter(); f != "" {
		fmt.Fprintf(&b, " filter %q", f)
	}
	if t.GetFormat() != scandv1.Format_FORMAT_UNSPECIFIED {
		fmt.Fprintf(&b, " %s", strings.TrimPrefix(t.GetFormat().String(), "FORMAT_"))
	}
	return b.String()
}
