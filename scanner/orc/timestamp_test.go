package orc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestPyarrowNegativeNanos reads timestamps before 1970 with fractions of a
// second as pyarrow 26 writes them (testdata/pyarrow_negative_nanos_*.orc,
// written by pyarrow.orc.write_table from the values below). Arrow's ORC
// writer splits -1.5 s into -1 s and -500000000 ns (it truncates towards
// zero), so the SECONDARY stream holds negative nanoseconds, which readers
// must take as signed as ORC C++ does; pyarrow reads these values back.
func TestPyarrowNegativeNanos(t *testing.T) {
	want := []any{int64(-1), int64(-1_500_000_000), int64(-1000), int64(-999_999_999), int64(-1_000_000_000),
		int64(-86_400_000_000_001), int64(0), int64(1), int64(1_500_000_000), nil, int64(-6_213_559_680_000_000),
		int64(1_700_000_000_123_456_789)}
	for _, name := range []string{"pyarrow_negative_nanos_0.11.orc", "pyarrow_negative_nanos_0.12.orc"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var got []any
			_, err = readFile(t, name, data, nil, 5, mem, func(rec arrow.RecordBatch) {
				col := rec.Column(0).(*array.Timestamp)
				for i := 0; i < col.Len(); i++ {
					if col.IsNull(i) {
						got = append(got, nil)
					} else {
						got = append(got, int64(col.Value(i)))
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d rows, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("row %d: got %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
}
