package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/planner"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// streamSchemas plans req and reads every endpoint, returning the
// FlightInfo's schema, each stream's and the rows read.
func streamSchemas(ctx context.Context, t *testing.T, c flight.Client, req map[string]any) (*arrow.Schema, []*arrow.Schema, int64) {
	t.Helper()
	cmd, _ := json.Marshal(req)
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		t.Fatalf("%v: %v", req, err)
	}
	planned, err := flight.DeserializeSchema(info.Schema, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	var streams []*arrow.Schema
	var rows int64
	for _, ep := range info.Endpoint {
		stream, err := c.DoGet(ctx, ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := flight.NewRecordReader(stream)
		if err != nil {
			t.Fatalf("%v: %v", req, err)
		}
		streams = append(streams, rdr.Schema())
		for rdr.Next() {
			rows += rdr.RecordBatch().NumRows()
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("%v: %v", req, err)
		}
	}
	return planned, streams, rows
}

// The FlightInfo's schema and every stream's are one, to the metadata, for
// every layout (one file, several files of several splits each, hive
// partitions, packed small files) and every kind of projection, with and
// without a filter on columns the scan does not return; and the columns
// follow the projection rule (projection.go).
func TestProjectionOneTruth(t *testing.T) {
	dir := t.TempDir()
	for i, part := range []string{"city=a/day=1", "city=b/day=2", "city=b/day=3"} {
		rec := sampleRecord(i*100, 100)
		writeParquet(t, dir, "hive/"+part+"/part-0.parquet", rec, 30)
		writeParquet(t, dir, "many/f"+string(rune('0'+i))+".parquet", rec, 30)
		rec.Release()
	}
	rec := sampleRecord(0, 100)
	writeParquet(t, dir, "one.parquet", rec, 30)
	rec.Release()
	c, _ := checkedServer(t, dir)
	ctx := context.Background()

	layouts := []struct {
		name  string
		path  string
		split int // split_bytes; 0: the server's (packs whole files)
		hive  bool
	}{
		{"one file", "one.parquet", 0, false},
		{"one file, a split per row group", "one.parquet", 1, false},
		{"many", "many/", 1, false},
		{"packed", "many/", 0, false},
		{"hive", "hive/", 1, true},
		{"hive packed", "hive/", 0, true},
	}
	projections := []struct {
		columns []string
		want    string // the output's top-level columns
		hive    bool   // names a partition column
	}{
		{[]string{"id", "name"}, "id,name", false},
		{[]string{"id", "s.x"}, "id,s", false},
		{[]string{"s.y", "id", "s.x"}, "s,id", false},
		{[]string{"s.x", "s"}, "s", false},
		{[]string{"l", "s.y"}, "l,s", false},
		{[]string{"id", "id"}, "id", false},
		{[]string{"s.x", "city", "id"}, "s,city,id", true},
		{[]string{"day", "s.y", "l", "city", "day"}, "day,s,l,city", true},
		{[]string{"city"}, "city", true},
	}
	filters := []string{"", "name IS NOT NULL", "s.y <> 'y1'", "l IS NOT NULL AND id > 5"}
	hiveFilters := []string{"city = 'b'", "day > 1 AND s.x > 2"}
	for _, lay := range layouts {
		for _, pr := range projections {
			if pr.hive && !lay.hive {
				continue
			}
			fs := filters
			if lay.hive {
				fs = append(fs[:len(fs):len(fs)], hiveFilters...)
			}
			for _, f := range fs {
				req := map[string]any{"paths": []string{lay.path}, "columns": pr.columns}
				if lay.split > 0 {
					req["split_bytes"] = lay.split
				}
				if f != "" {
					req["filter"] = f
				}
				planned, streams, _ := streamSchemas(ctx, t, c, req)
				if got := strings.Join(fieldNames(planned), ","); got != pr.want {
					t.Errorf("%s %v filter %q: FlightInfo columns %s, want %s", lay.name, pr.columns, f, got, pr.want)
				}
				if len(streams) == 0 {
					t.Errorf("%s %v filter %q: no endpoints", lay.name, pr.columns, f)
				}
				for i, s := range streams {
					if !planner.SchemasEqual(s, planned) {
						t.Errorf("%s %v filter %q: stream %d has schema\n%v\nthe FlightInfo\n%v", lay.name, pr.columns, f, i, s, planned)
					}
				}
			}
		}
	}
}

// A nested path keeps its struct pruned to the fields named, in the file's
// order, on every layout.
func TestProjectionPrunesStructs(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 50)
	writeParquet(t, dir, "hive/k=1/a.parquet", rec, 20)
	rec.Release()
	c, _ := checkedServer(t, dir)
	planned, _, rows := streamSchemas(context.Background(), t, c, map[string]any{"paths": []string{"hive/"}, "columns": []string{"s.y", "k", "s.x"}})
	if rows != 50 {
		t.Errorf("%d rows, want 50", rows)
	}
	st, ok := planned.Field(0).Type.(*arrow.StructType)
	if !ok || st.NumFields() != 2 || st.Field(0).Name != "x" || st.Field(1).Name != "y" || planned.Field(1).Name != "k" {
		t.Errorf("schema %v: want s: struct<x, y>, then k", planned)
	}
}

// A stream whose rebuilt schema is not the one its ticket says was
// planned fails with INTERNAL before it sends a batch: for the first file
// (the ticket's fingerprint is another schema's) and for a later file of a
// packed endpoint (its delta rebuilds another schema), whose batches would
// otherwise follow the first file's under the first file's schema. A
// forged ticket stands for a planner bug.
func TestStreamRefusesASchemaOtherThanPlanned(t *testing.T) {
	dir := t.TempDir()
	writeSmallFiles(t, dir, 2, 10)
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	task := decodeForTest(t, planTicket(ctx, t, c, map[string]any{"paths": []string{"f/"}}))
	if task.SchemaFingerprint == 0 || len(task.More) != 1 || task.More[0].SchemaFingerprint != 0 {
		t.Fatalf("ticket %v: want a fingerprint on the endpoint's task only", task)
	}
	for _, tc := range []struct {
		name    string
		edit    func(task *scandv1.ScanTask)
		batches int // at most: a later file's may follow the first's (gathered, they may not)
	}{
		{"first file", func(task *scandv1.ScanTask) { task.SchemaFingerprint++ }, 0},
		{"later file", func(task *scandv1.ScanTask) {
			task.More[0].SchemaDelta = &scandv1.SchemaDelta{Metadata: &scandv1.SchemaMetadata{Keys: []string{"k"}, Values: []string{"v"}}}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged := proto.CloneOf(task)
			tc.edit(forged)
			payload, _ := proto.Marshal(forged)
			stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: signTestTicket(t, payload)})
			if err != nil {
				t.Fatal(err)
			}
			batches := 0
			rdr, err := flight.NewRecordReader(stream)
			if err == nil {
				for rdr.Next() {
					batches++
				}
				err = rdr.Err()
				rdr.Release()
			}
			st := status.Convert(err)
			if st.Code() != codes.Internal || !strings.Contains(st.Message(), "fingerprint") || !strings.Contains(st.Message(), "{id: int64") {
				t.Fatalf("got %v, want Internal naming the stream's schema and the fingerprints", err)
			}
			if batches > tc.batches {
				t.Errorf("%d batches before the error, want at most %d", batches, tc.batches)
			}
		})
	}
}

func fieldNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}
