package client_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
)

// Small files packed into one endpoint (ScanTask.more): the plan names
// every file of it, with its rows and the endpoint's limit spread in file
// order, and the Go client reads the endpoint as the files' concatenation.
func TestExplainPackedFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir()
	for i := 0; i < 5; i++ {
		writeSeq(t, filepath.Join(dir, fmt.Sprintf("f%d.parquet", i)), int64(i*100), 1, 100)
	}
	c := startServer(t, dir, server.Config{})
	ctx := context.Background()
	p, err := c.Explain(ctx, &scandv1.ScanRequest{Paths: []string{"*.parquet"}, Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Endpoints) != 1 {
		t.Fatalf("%d endpoints, want 1", len(p.Endpoints))
	}
	e := p.Endpoints[0]
	if e.Path != "f0.parquet" || len(e.More) != 2 || e.More[1].Path != "f2.parquet" || e.AllRows() != 300 || e.Returns() != 250 {
		t.Fatalf("endpoint %+v", e)
	}
	if len(p.Files) != 3 || p.Files[2].Rows != 50 || p.Files[1].Endpoints != 1 {
		t.Fatalf("files %+v", p.Files)
	}
	out := p.String()
	for _, want := range []string{"  0  f0.parquet", "  +  f2.parquet", "(endpoint 0: 3 files)", "250 of 300 (limit)"} {
		if !strings.Contains(out, want) {
			t.Errorf("String() lacks %q:\n%s", want, out)
		}
	}
	scan, err := c.ScanInfo(ctx, p.Info)
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	recs, err := client.ReadAll(scan)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range recs {
		ids = append(ids, r.Column(0).(*array.Int64).Int64Values()...)
		r.Release()
	}
	if len(ids) != 250 {
		t.Fatalf("scanned %d rows, want 250", len(ids))
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("row %d has id %d", i, id)
		}
	}
}
