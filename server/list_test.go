package server

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/iosched"
)

// ListFlights lists what a scan of the same prefix reads: names with a
// segment below the prefix that starts with "." or "_" are left out, and
// the prefix may be spelled as a scan path may.
func TestListFlightsSkipsWhatScansSkip(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"t/a.parquet", "t/sub/b.parquet", "t/_tmp/c.parquet", "t/.cache/d.parquet",
		"t/_SUCCESS", "t/sub/.e.parquet.crc", "u/f.parquet"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Mem: memory.NewGoAllocator()}))
	list := func(prefix string) []string {
		stream, err := c.ListFlights(context.Background(), &flight.Criteria{Expression: []byte(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			fi, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return got
			}
			if err != nil {
				t.Fatalf("ListFlights(%q): %v", prefix, err)
			}
			got = append(got, fi.FlightDescriptor.Path[0])
		}
	}
	want := []string{"t/a.parquet", "t/sub/b.parquet"}
	for _, prefix := range []string{"t/", "./t/", filepath.ToSlash(dir) + "/t/", "t"} {
		if got := list(prefix); !slices.Equal(got, want) {
			t.Errorf("ListFlights(%q) = %q, want %q", prefix, got, want)
		}
	}
	if got := list(""); !slices.Equal(got, append(want, "u/f.parquet")) {
		t.Errorf("ListFlights(\"\") = %q", got)
	}
}

// ListFlights lists only what a scan can read: Parquet and ORC by their
// extensions (any case), names without an extension by their magic bytes;
// CSV, JSON and the like are left out. Listed files have their size and
// no schema or row count (documented on ListFlights).
func TestListFlightsListsOnlyScannableFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.parquet": "x", "b.ORC": "x", "c.pq": "x", "d.csv": "id\n1\n", "e.json": "{}",
		"part-00000": "PAR1....PAR1", "part-00001": "ORC.....", "part-00002": "id,v\n1,2\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Mem: memory.NewGoAllocator()}))
	stream, err := c.ListFlights(context.Background(), &flight.Criteria{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		fi, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := fi.FlightDescriptor.Path[0]
		got = append(got, name)
		if fi.TotalBytes != int64(len(files[name])) || fi.TotalRecords != -1 || len(fi.Schema) != 0 {
			t.Errorf("%s: total_bytes %d, total_records %d, schema %d bytes; want its size, -1, none",
				name, fi.TotalBytes, fi.TotalRecords, len(fi.Schema))
		}
	}
	slices.Sort(got)
	if want := []string{"a.parquet", "b.ORC", "c.pq", "part-00000", "part-00001"}; !slices.Equal(got, want) {
		t.Errorf("ListFlights = %q, want %q", got, want)
	}
}
