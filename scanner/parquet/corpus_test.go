package parquet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// scanFile opens, projects and reads a whole file, returning its rows.
func scanFile(t testing.TB, path string, native bool, budget scanner.Reserver) (rows int64, err error) {
	data, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	// arrow-go leaks some decoder buffers on error paths: not checked.
	mem := memory.DefaultAllocator
	f, err := Open(context.Background(), filepath.Base(path), newLendingSource(data), mem)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	f.noNative = !native
	p, err := f.Project(nil)
	if err != nil {
		return 0, err
	}
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem, Budget: budget}, func(rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		rec.Release()
		return nil
	})
	return rows, err
}

// fuzzReadByPyarrow lists the arrow-testing fuzz files pyarrow 26 reads
// (pq.read_table), with their rows; it refuses every other one, and scand
// must too. Checked with /work/main/.venv/bin/python.
var fuzzReadByPyarrow = map[string]int64{
	"clusterfuzz-testcase-minimized-parquet-arrow-fuzz-4740205688193024": 0,
	"clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5068991573000192": 24,
	"clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5382863341289472": 5120,
	"clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5665099979423744": 0,
	"crash-649c71a618ae2fd80cec177a9676eb3e280fc1fa":                     7,
}

// fuzzRefusedOnlyByScand: pyarrow reads these, scand refuses them, for
// the reason given.
var fuzzRefusedOnlyByScand = map[string]string{
	// The footer claims 24 rows in a row group whose column chunk has no
	// metadata; pyarrow returns an empty table.
	"clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5697144926502912.fuzz": "column chunk metadata is missing",
}

// fuzzRefusedAtOpen are refusals of malformed files, each with what the
// error must say: negative row counts (pyarrow: "Negative size", "Invalid
// column metadata") and field names that are not UTF-8 (pyarrow: "'utf-8'
// codec can't decode").
var fuzzRefusedAtOpen = map[string]string{
	"clusterfuzz-testcase-5913005913407488":                              "row group 0 claims -25 rows",
	"clusterfuzz-testcase-dictbitwidth-4680774947569664":                 "row group 0 claims -25 rows",
	"clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5683528215035904": "the footer claims -25 rows",
	"clusterfuzz-testcase-parquet-arrow-fuzz-5131422543904768":           `field name "n\x80iant_key" is not valid UTF-8`,
}

// TestFuzzFilesLikePyarrow reads every fuzz file of arrow-testing: scand
// reads the ones pyarrow reads, with the same rows, and refuses the others
// with ErrCorrupt or ErrUnsupported.
func TestFuzzFilesLikePyarrow(t *testing.T) {
	dir := os.Getenv("SCAND_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "arrow-testing", "parquet", "fuzzing", "*"))
	if len(paths) == 0 {
		t.Skipf("no fuzz files under %s (set SCAND_TESTDATA)", dir)
	}
	for _, p := range paths {
		name := filepath.Base(p)
		if name == "README.md" {
			continue
		}
		rows, err := scanFile(t, p, true, nil)
		want, pyarrowReads := fuzzReadByPyarrow[name]
		switch {
		case pyarrowReads && (err != nil || rows != want):
			t.Errorf("%s: %d rows, %v; pyarrow reads %d rows", name, rows, err, want)
		case pyarrowReads:
		case err == nil:
			t.Errorf("%s: scand reads %d rows; pyarrow refuses the file", name, rows)
		case !errors.Is(err, scanner.ErrCorrupt) && !errors.Is(err, scanner.ErrUnsupported):
			t.Errorf("%s: unclassified error %v", name, err)
		case fuzzRefusedAtOpen[name] != "" && !strings.Contains(err.Error(), fuzzRefusedAtOpen[name]):
			t.Errorf("%s: %v, want an error saying %q", name, err, fuzzRefusedAtOpen[name])
		}
	}
	for name, why := range fuzzRefusedOnlyByScand {
		if _, err := scanFile(t, filepath.Join(dir, "arrow-testing", "parquet", "fuzzing", name), true, nil); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want %q", name, err, why)
		}
	}
}
