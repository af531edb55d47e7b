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
