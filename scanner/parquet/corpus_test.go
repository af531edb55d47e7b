package parquet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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

func TestProbeFuzz(t *testing.T) {
	dir := os.Getenv("SCAND_TESTDATA")
	m, _ := filepath.Glob(filepath.Join(dir, "arrow-testing/parquet/fuzzing/*"))
	for _, p := range m {
		rows, err := scanFile(t, p, true, nil)
		t.Logf("%s\t%d\t%v\t%v", filepath.Base(p), rows, errors.Is(err, scanner.ErrCorrupt), err)
	}
}
