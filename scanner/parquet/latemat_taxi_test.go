package parquet

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// BenchmarkLateTaxi reads one bench/taxi file (SCAND_TAXI_FILE, a
// part-0.parquet that bench/taxi/gen.py wrote; skipped without it) with
// the filtered queries of bench/taxi, late materialization off and auto,
// the filter applied to what the read emits as the stream does:
//
//	SCAND_TAXI_FILE=/tmp/taxi/trips/service=yellow/month=1/part-0.parquet \
//	    go test -run '^$' -bench LateTaxi ./scanner/parquet
func BenchmarkLateTaxi(b *testing.B) {
	path := os.Getenv("SCAND_TAXI_FILE")
	if path == "" {
		b.Skip("SCAND_TAXI_FILE is not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	four := []string{"pickup_ts", "city", "fare", "distance_km"}
	queries := []struct {
		name, filter string
		columns      []string
	}{
		{"q1", "fare > 100 AND city = 'Boston'", four},
		{"q3", "city LIKE 'San%' AND distance_km > 25", four},
		{"q4", "payment_type IN ('cash', 'voucher') AND fare < 3", []string{"pickup_ts", "payment_type", "fare", "tip"}},
		{"q5", "tip IS NULL AND passengers IS NULL", []string{"pickup_ts", "fare", "tip", "passengers"}},
		{"q7", "note IS NOT NULL", nil},
	}
	only := os.Getenv("SCAND_TAXI_ONLY")
	for _, q := range queries {
		if only != "" && !strings.Contains(","+only+",", ","+q.name+",") {
			continue
		}
		for _, mode := range []scanner.LateMode{scanner.LateOff, scanner.LateAuto} {
			b.Run(fmt.Sprintf("%s/%s", q.name, mode), func(b *testing.B) {
				benchTaxiRead(b, data, q.columns, q.filter, mode)
			})
		}
	}
}

func benchTaxiRead(b *testing.B, data []byte, columns []string, text string, mode scanner.LateMode) {
	f, p, pred := openFiltered(b, "taxi.parquet", data, columns, text)
	defer f.Close()
	var rows int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		counts := &scanner.ReadCounts{}
		opts := scanner.ReadOptions{Filter: pred, LateMaterialization: mode, BatchRows: 64 << 10, Counts: counts,
			FilterDictionaries: true}
		rows = 0
		err := f.Read(context.Background(), p, opts, func(r arrow.RecordBatch) error {
			out, err := pred.Filter(context.Background(), r, memory.DefaultAllocator)
			r.Release()
			if err != nil {
				return err
			}
			defer out.Release()
			rows += out.NumRows()
			// The stream decodes the filter's dictionaries back (conform).
			for _, c := range out.Columns() {
				if d, ok := c.(*array.Dictionary); ok {
					v, err := scanner.DecodeDictionary(d, memory.DefaultAllocator)
					if err != nil {
						return err
					}
					v.Release()
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(counts.LateGroups), "late")
		b.ReportMetric(float64(counts.PagesSkipped), "skipped")
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(rows), "rows")
}
