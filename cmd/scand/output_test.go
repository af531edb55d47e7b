package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// serveDemo serves the demo data with the real server until the test ends
// and returns its address.
func serveDemo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if _, err := writeDemoData(root); err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(context.Background(), serveFlags{}, root, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return "grpc://" + lis.Addr().String()
}

func runOK(t *testing.T, addr string, args ...string) (stdout, stderr string) {
	t.Helper()
	e, out, errOut := testEnv(map[string]string{"SCAND_SERVER": addr})
	if code := run(context.Background(), args, e); code != 0 {
		t.Fatalf("scand %s exited %d\nstderr: %s", strings.Join(args, " "), code, errOut)
	}
	return out.String(), errOut.String()
}

func TestExplainCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := serveDemo(t)
	out, _ := runOK(t, addr, "explain", "trips/", "--columns", "id,fare", "--split-bytes", "1")
	for _, want := range []string{
		"rows             20,000\n",
		"files            2\n",
		"endpoints        8,",
		"estimated reads  8 to 10 (estimate",
		"  trips/2026-01.parquet  parquet",
		"  7  trips/2026-02.parquet  3           2,500\n",
		"schema:\n  id: int64 not null\n  fare: float64\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}

	out, _ = runOK(t, addr, "explain", "trips/2026-01.parquet", "--limit", "10")
	if !strings.Contains(out, "rows             10\n") || !strings.Contains(out, "10 of ") {
		t.Errorf("explain --limit output:\n%s", out)
	}
}

func TestScanToFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := serveDemo(t)
	dir := t.TempDir()

	pq := filepath.Join(dir, "out.parquet")
	out, _ := runOK(t, addr, "scan", "trips/", "--columns", "id,city,pickup.lat,tags", "--format", "parquet", "--output", pq, "--batch-rows", "700")
	if out != "" {
		t.Errorf("parquet scan printed to stdout: %q", out)
	}
	rdr, err := file.OpenParquetFile(pq, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := rdr.NumRows(); n != 20000 {
		t.Errorf("parquet output has %d rows, want 20000", n)
	}
	if c, err := rdr.MetaData().RowGroup(0).ColumnChunk(0); err != nil || c.Compression().String() != "SNAPPY" {
		t.Errorf("parquet output compression %v, %v; want SNAPPY", c.Compression(), err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if got := schema.String(); !strings.Contains(got, "pickup: type=struct<lat: float64>") || !strings.Contains(got, "tags: type=list") {
		t.Errorf("parquet output schema:\n%s", got)
	}
	rdr.Close()

	af := filepath.Join(dir, "out.arrow")
	runOK(t, addr, "scan", "trips/2026-02.parquet", "--columns", "id,fare", "--format", "arrow", "--output", af, "--limit", "1234")
	f, err := os.Open(af)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ar, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	var rows int64
	for i := range ar.NumRecords() {
		rec, err := ar.RecordBatchAt(i)
		if err != nil {
			t.Fatal(err)
		}
		rows += rec.NumRows()
		rec.Release()
	}
	if rows != 1234 || ar.Schema().NumFields() != 2 {
		t.Errorf("arrow output: %d rows, schema %s", rows, ar.Schema())
	}
	if fi, err := os.Stat(af); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("arrow output mode %v, %v; want 0644", fi.Mode(), err)
	}

	csvPath := filepath.Join(dir, "out.csv")
	runOK(t, addr, "scan", "trips/2026-01.parquet", "--columns", "id,city", "--limit", "2", "--format", "csv", "--output", csvPath)
	if b, err := os.ReadFile(csvPath); err != nil || string(b) != "id,city\n1000000,Berlin\n1000001,Amsterdam\n" {
		t.Errorf("csv output %q, %v", b, err)
	}

	// A failed scan leaves neither the file nor a temporary one.
	e, _, _ := testEnv(map[string]string{"SCAND_SERVER": addr})
	bad := filepath.Join(dir, "bad.parquet")
	if code := run(context.Background(), []string{"scan", "nope.parquet", "--format", "parquet", "--output", bad}, e); code != 1 {
		t.Errorf("scan of a missing file exited %d", code)
	}
	entries, _ := os.ReadDir(dir)
	for _, ent := range entries {
		if strings.HasPrefix(ent.Name(), ".") || ent.Name() == "bad.parquet" {
			t.Errorf("failed scan left %s behind", ent.Name())
		}
	}
}

func TestScanProgressOn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := serveDemo(t)
	out, errOut := runOK(t, addr, "scan", "trips/", "--columns", "id", "--format", "csv", "--progress", "on")
	if strings.Count(out, "\n") != 20001 {
		t.Errorf("csv output has %d lines, want 20001", strings.Count(out, "\n"))
	}
	// Not a terminal: the final line stays, ended by a newline.
	final := errOut[strings.LastIndex(errOut, "\r")+1:]
	if !strings.HasPrefix(final, "[####################] 100%  20,000/20,000 rows  ") || !strings.Contains(final, "files 2/2") || !strings.HasSuffix(final, "\n") {
		t.Errorf("progress final line %q (stderr %q)", final, errOut)
	}

	// auto: stderr is a buffer, not a terminal, so nothing is drawn.
	_, errOut = runOK(t, addr, "scan", "trips/", "--columns", "id", "--format", "csv")
	if errOut != "" {
		t.Errorf("--progress auto drew on a non-terminal: %q", errOut)
	}
}
