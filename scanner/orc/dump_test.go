package orc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDump prints the rows of the files named in $ORC_DUMP (comma
// separated paths relative to orc-examples), for eyeballing files that
// have no expected output.
func TestDump(t *testing.T) {
	names := os.Getenv("ORC_DUMP")
	if names == "" {
		t.Skip("set ORC_DUMP")
	}
	dir := orcExamples(t)
	for _, n := range strings.Split(names, ",") {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		f, _ := openBytes(t, n, data)
		objects := f == nil || f.ft.types[0].kind == kindStruct
		rows := 0
		_, err = readFile(t, n, data, nil, 0, memory.DefaultAllocator, func(rec arrow.RecordBatch) {
			for _, r := range recordJSON(rec, objects) {
				if rows < 12 {
					t.Logf("%s: %s", n, show(r))
				}
				rows++
			}
		})
		t.Logf("%s: %d rows, err %v, schema %v", n, rows, err, f.Schema())
	}
}
