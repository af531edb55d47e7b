package orc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// testdataDir finds the shared test data: $SCAND_TESTDATA, or
// ../shared/testdata beside the repository.
func testdataDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("SCAND_TESTDATA"); d != "" {
		return d
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "testdata")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found")
		}
		dir = parent
	}
}

func orcExamples(t testing.TB) string {
	t.Helper()
	d := filepath.Join(testdataDir(t), "orc-examples")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("ORC examples not found at %s (set SCAND_TESTDATA)", d)
	}
	return d
}

// memSource is a scanner.Source over bytes that records prefetches and
// reads, to check what the reader asks for.
type memSource struct {
	data       []byte
	mu         sync.Mutex
	prefetched [][]scanner.Range
	reads      []scanner.Range
}

func (m *memSource) ReadAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	m.reads = append(m.reads, scanner.Range{Off: off, Len: int64(len(p))})
	m.mu.Unlock()
	return bytes.NewReader(m.data).ReadAt(p, off)
}

func (m *memSource) Size() int64 { return int64(len(m.data)) }

func (m *memSource) Prefetch(r []scanner.Range) {
	m.mu.Lock()
	m.prefetched = append(m.prefetched, append([]scanner.Range(nil), r...))
	m.mu.Unlock()
}

func openBytes(t testing.TB, name string, data []byte) (*File, error) {
	t.Helper()
	return Open(context.Background(), name, &memSource{data: data}, memory.DefaultAllocator)
}

// readFile opens and reads a whole file with the given columns, calling fn
// with each batch (released afterwards). It returns the file (for
// metadata) and any error.
func readFile(t testing.TB, name string, data []byte, columns []string, batchRows int64, mem memory.Allocator,
	fn func(arrow.RecordBatch)) (*File, error) {
	t.Helper()
	f, err := openBytes(t, name, data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := f.Project(columns)
	if err != nil {
		return f, err
	}
	err = f.Read(context.Background(), p, scanner.ReadOptions{BatchRows: batchRows, Mem: mem}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		if fn != nil {
			fn(rec)
		}
		return nil
	})
	return f, err
}
