package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The demo dataset: taxi trips, one Parquet file per month. The columns
// cover the type families a scan has to handle: integers, timestamps,
// strings, floats with nulls, a struct and a list.
const (
	demoRowsPerFile     = 10_000
	demoRowsPerRowGroup = 2_500 // 4 row groups per file
)

var tripSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "pickup_at", Type: arrow.FixedWidthTypes.Timestamp_us},
	{Name: "city", Type: arrow.BinaryTypes.String},
	{Name: "fare", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "pickup", Type: arrow.StructOf(
		arrow.Field{Name: "lat", Type: arrow.PrimitiveTypes.Float64},
		arrow.Field{Name: "lon", Type: arrow.PrimitiveTypes.Float64},
	)},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
}, nil)

var demoCities = []struct {
	name     string
	lat, lon float64
}{
	{"Berlin", 52.520, 13.405},
	{"Paris", 48.857, 2.352},
	{"London", 51.507, -0.128},
	{"Madrid", 40.417, -3.704},
	{"Rome", 41.903, 12.496},
	{"Vienna", 48.208, 16.373},
	{"Amsterdam", 52.373, 4.893},
	{"Lisbon", 38.722, -9.139},
}

var demoTags = []string{"airport", "night", "card", "cash", "shared"}

// demoFile is one file of the demo dataset.
type demoFile struct {
	Name      string // relative to the dataset's root
	Rows      int
	RowGroups int
	Bytes     int64
}

// writeDemoData writes the demo dataset under dir and returns its files.
// The data is a pure function of the file name, so runs are reproducible.
func writeDemoData(dir string) ([]demoFile, error) {
	var files []demoFile
	for _, month := range []time.Month{time.January, time.February} {
		name := fmt.Sprintf("trips/2026-%02d.parquet", int(month))
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := writeTrips(path, month); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		files = append(files, demoFile{
			Name:      name,
			Rows:      demoRowsPerFile,
			RowGroups: (demoRowsPerFile + demoRowsPerRowGroup - 1) / demoRowsPerRowGroup,
			Bytes:     fi.Size(),
		})
	}
	return files, nil
}

// writeTrips writes one month of trips, one row group per Write.
func writeTrips(path string, month time.Month) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(demoRowsPerRowGroup),
	)
	// Storing the Arrow schema keeps the timestamp's time zone exact.
	// The writer closes f when it is closed.
	w, err := pqarrow.NewFileWriter(tripSchema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return err
	}
	rng := rand.New(rand.NewPCG(2026, uint64(month)))
	start := time.Date(2026, month, 1, 0, 0, 0, 0, time.UTC)
	for first := 0; first < demoRowsPerFile; first += demoRowsPerRowGroup {
		n := min(demoRowsPerRowGroup, demoRowsPerFile-first)
		rec := tripBatch(memory.DefaultAllocator, rng, int64(month)*1_000_000+int64(first), start, n)
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			w.Close()
			return err
		}
		start = start.Add(time.Duration(n) * 4 * time.Minute)
	}
	return w.Close()
}

// tripBatch makes n trips with ids from firstID, starting at start.
func tripBatch(mem memory.Allocator, rng *rand.Rand, firstID int64, start time.Time, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, tripSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	at := b.Field(1).(*array.TimestampBuilder)
	cities := b.Field(2).(*array.StringBuilder)
	fares := b.Field(3).(*array.Float64Builder)
	pickup := b.Field(4).(*array.StructBuilder)
	lats := pickup.FieldBuilder(0).(*array.Float64Builder)
	lons := pickup.FieldBuilder(1).(*array.Float64Builder)
	tags := b.Field(5).(*array.ListBuilder)
	tagValues := tags.ValueBuilder().(*array.StringBuilder)

	t := start
	for i := range n {
		ids.Append(firstID + int64(i))
		t = t.Add(time.Duration(rng.IntN(480)) * time.Second)
		at.Append(arrow.Timestamp(t.UnixMicro()))
		city := demoCities[rng.IntN(len(demoCities))]
		cities.Append(city.name)
		if rng.IntN(50) == 0 {
			fares.AppendNull() // a fare not recorded
		} else {
			fares.Append(math.Round((4+rng.ExpFloat64()*14)*100) / 100)
		}
		pickup.Append(true)
		lats.Append(math.Round((city.lat+rng.NormFloat64()*0.03)*1e5) / 1e5)
		lons.Append(math.Round((city.lon+rng.NormFloat64()*0.05)*1e5) / 1e5)
		switch k := rng.IntN(8); {
		case k == 0:
			tags.AppendNull()
		default:
			tags.Append(true)
			for _, j := range rng.Perm(len(demoTags))[:k%3] {
				tagValues.Append(demoTags[j])
			}
		}
	}
	return b.NewRecordBatch()
}
