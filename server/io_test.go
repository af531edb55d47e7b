package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// wideRecord has cols int64 columns of distinct values.
func wideRecord(cols, rows int) arrow.RecordBatch {
	fields := make([]arrow.Field, cols)
	for i := range fields {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%03d", i), Type: arrow.PrimitiveTypes.Int64}
	}
	b := array.NewRecordBuilder(memory.NewGoAllocator(), arrow.NewSchema(fields, nil))
	defer b.Release()
	for c := 0; c < cols; c++ {
		fb := b.Field(c).(*array.Int64Builder)
		for r := 0; r < rows; r++ {
			fb.Append(int64(r*cols + c))
		}
	}
	return b.NewRecordBatch()
}

// The IO plan of a scan, counted: alternate columns of a wide file cost one
// read per row group once the footer is cached, and merging can be turned
// off to compare with one read per column chunk.
func TestReadsPerRowGroup(t *testing.T) {
	dir := t.TempDir()
	const cols, rows, rowGroups = 128, 8000, 4
	rec := wideRecord(cols, rows)
	defer rec.Release()
	writeParquet(t, dir, "wide.parquet", rec, rows/rowGroups)
	var alternate []string
	for c := 0; c < cols; c += 2 {
		alternate = append(alternate, fmt.Sprintf("c%03d", c))
	}

	for _, tc := range []struct {
		name     string
		io       iosched.Options
		minReads int64 // in DoGet, per scan, footer cached
		maxReads int64
	}{
		// The whole 8 MB file fits one request: gaps under the hole.
		{"static 4 MiB hole", iosched.Options{Hole: 4 << 20}, 1, 1},
		// Requests capped at 1 MiB: a row group's alternate columns
		// (about 1 MB) still come in one or two reads.
		{"1 MiB requests", iosched.Options{Hole: 4 << 20, MaxRequest: 1 << 20}, rowGroups, 2 * rowGroups},
		{"adaptive", iosched.Options{}, 1, rowGroups},
		{"coalescing off", iosched.Options{NoCoalesce: true}, rowGroups * cols / 2, rowGroups * cols / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer assertReleased(t, mem)
			c := testServerWith(t, onRoot(t, dir, tc.io, Config{Mem: mem}))
			for scan := 0; scan < 2; scan++ {
				res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"wide.parquet"}, "columns": alternate})
				if err != nil {
					t.Fatal(err)
				}
				got := table(t, res)
				for i, name := range alternate {
					var want int64
					fmt.Sscanf(name, "c%03d", &want)
					if v := got.Column(i).(*array.Int64).Value(rows - 1); v != int64(rows-1)*cols+want {
						t.Fatalf("column %s last value %d", name, v)
					}
				}
				got.Release()
				var st scandv1.StreamStats
				for _, s := range res.stats {
					st.Reads += s.Reads
					st.BytesFetched += s.BytesFetched
					st.BytesUsed += s.BytesUsed
					st.CacheHits += s.CacheHits
					st.Hole = max(st.Hole, s.Hole)
				}
				res.release()
				if st.Reads < tc.minReads || st.Reads > tc.maxReads {
					t.Errorf("scan %d: %d reads, want %d..%d (%v)", scan, st.Reads, tc.minReads, tc.maxReads, &st)
				}
				t.Logf("scan %d: %d reads, %d bytes fetched for %d used, hole %d", scan, st.Reads, st.BytesFetched, st.BytesUsed, st.Hole)
				if st.CacheHits == 0 {
					t.Errorf("scan %d: footer not served from the metadata cache", scan)
				}
				if st.BytesUsed > st.BytesFetched {
					t.Errorf("used %d > fetched %d", st.BytesUsed, st.BytesFetched)
				}
			}
		})
	}
}
