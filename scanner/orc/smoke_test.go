package orc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSmokeAll opens and reads every example file (also the ones without
// expected output), checking for leaks and logging the outcome.
func TestSmokeAll(t *testing.T) {
	dir := orcExamples(t)
	paths, _ := filepath.Glob(filepath.Join(dir, "*.orc"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.orc"))
	paths = append(paths, more...)
	for _, p := range paths {
		if testing.Short() && strings.HasPrefix(filepath.Base(p), "demo-") {
			continue // 1.9M rows each; BenchmarkDecode covers them
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rows := int64(0)
		f, err := readFile(t, filepath.Base(p), data, nil, 0, mem, func(rec arrow.RecordBatch) { rows += rec.NumRows() })
		mem.AssertSize(t, 0)
		if f != nil {
			t.Logf("%-50s rows=%d/%d err=%v", filepath.Base(p), rows, f.NumRows(), err)
		} else {
			t.Logf("%-50s err=%v", filepath.Base(p), err)
		}
	}
}
