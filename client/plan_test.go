package client_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
)

func TestExplain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir()
	writeSeq(t, filepath.Join(dir, "a.parquet"), 0, 5, 1000)
	writeSeq(t, filepath.Join(dir, "b.parquet"), 5000, 3, 1000)
	c := startServer(t, dir, server.Config{Planning: server.Planning{SplitBytes: 1}})
	ctx := context.Background()

	p, err := c.Explain(ctx, &scandv1.ScanRequest{Paths: []string{"*.parquet"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.TotalRecords != 8000 || p.TotalBytes <= 0 || p.Schema.NumFields() != 1 || p.Info == nil {
		t.Fatalf("plan totals %d rows %d bytes schema %v", p.TotalRecords, p.TotalBytes, p.Schema)
	}
	wantFiles := []client.PlanFile{
		{Path: "a.parquet", Format: "parquet", Endpoints: 5, Rows: 5000},
		{Path: "b.parquet", Format: "parquet", Endpoints: 3, Rows: 3000},
	}
	for i := range p.Files {
		if p.Files[i].Size <= 0 {
			t.Errorf("file %d has size %d", i, p.Files[i].Size)
		}
		p.Files[i].Size = 0
	}
	if !reflect.DeepEqual(p.Files, wantFiles) {
		t.Fatalf("files %+v, want %+v", p.Files, wantFiles)
	}
	if len(p.Endpoints) != 8 {
		t.Fatalf("%d endpoints, want 8", len(p.Endpoints))
	}
	if e := p.Endpoints[6]; e.Path != "b.parquet" || !reflect.DeepEqual(e.RowGroups, []int{1}) || e.Rows != 1000 || e.Limit != 0 {
		t.Errorf("endpoint 6 = %+v", e)
	}
	if lo, hi := p.EstimatedReads(); lo != 8 || hi != 10 {
		t.Errorf("EstimatedReads = %d, %d; want 8, 10", lo, hi)
	}
	out := p.String()
	for _, want := range []string{
		"rows             8,000",
		"estimated reads  8 to 10 (estimate",
		"a.parquet  parquet",
		"  7  b.parquet  2           1,000",
		"schema:\n  id: int64",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("String() lacks %q:\n%s", want, out)
		}
	}

	// A limit plans only the splits it needs, the last one capped.
	p, err = c.Explain(ctx, &scandv1.ScanRequest{Paths: []string{"a.parquet"}, Limit: 1500, SplitBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Endpoints) != 1 || p.TotalRecords != 1500 {
		t.Fatalf("limited plan: %d endpoints, %d rows", len(p.Endpoints), p.TotalRecords)
	}
	e := p.Endpoints[0]
	if !reflect.DeepEqual(e.RowGroups, []int{0, 1, 2, 3, 4}) || e.Rows != 5000 || e.Limit != 1500 || e.Returns() != 1500 {
		t.Errorf("limited endpoint = %+v", e)
	}
	if p.Files[0].Rows != 1500 {
		t.Errorf("limited file rows = %d", p.Files[0].Rows)
	}
	if out := p.String(); !strings.Contains(out, "0-4") || !strings.Contains(out, "1,500 of 5,000 (limit)") {
		t.Errorf("limited plan String():\n%s", out)
	}

	// The plan's Info can be scanned as it is.
	scan, err := c.ScanInfo(ctx, p.Info)
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	recs, err := client.ReadAll(scan)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, r := range recs {
		n += r.NumRows()
		r.Release()
	}
	if n != 1500 {
		t.Errorf("scanned %d rows of the plan, want 1500", n)
	}
}

func TestExplainError(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	c := startServer(t, t.TempDir(), server.Config{})
	if _, err := c.Explain(context.Background(), &scandv1.ScanRequest{Paths: []string{"missing.parquet"}}); err == nil {
		t.Fatal("Explain of a missing file succeeded")
	}
	if _, err := c.Explain(context.Background(), nil); err == nil {
		t.Fatal("Explain(nil) succeeded")
	}
}
