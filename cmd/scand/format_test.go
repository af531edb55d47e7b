package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// knownBatch is three trips covering nulls, an empty list, a NaN, and a
// string that needs CSV quoting.
func knownBatch(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
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

	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ids.AppendValues([]int64{1, 22, 333}, nil)
	for i := range 3 {
		at.Append(arrow.Timestamp(t0.Add(time.Duration(i) * time.Hour).UnixMicro()))
	}
	cities.AppendValues([]string{"Berlin", `Paris, "FR"`, "Zürich"}, nil)
	fares.Append(12.5)
	fares.AppendNull()
	fares.Append(math.NaN())
	for _, ll := range [][2]float64{{52.52, 13.405}, {48.857, 2.352}, {47.377, 8.54}} {
		pickup.Append(true)
		lats.Append(ll[0])
		lons.Append(ll[1])
	}
	tags.Append(true)
	tagValues.AppendValues([]string{"airport", "card"}, nil)
	tags.AppendNull()
	tags.Append(true) // empty list
	return b.NewRecordBatch()
}

func TestPrinters(t *testing.T) {
	tests := []struct {
		format  string
		maxRows int
		batches int
		want    string
	}{
		{
			format: formatTable, maxRows: 100, batches: 1,
			want: ` id  pickup_at             city         fare  pickup                      tags
---  --------------------  -----------  ----  --------------------------  ------------------
  1  2026-01-02T03:04:05Z  Berlin       12.5  {"lat":52.52,"lon":13.405}  ["airport","card"]
 22  2026-01-02T04:04:05Z  Paris, "FR"  null  {"lat":48.857,"lon":2.352}  null
333  2026-01-02T05:04:05Z  Zürich        NaN  {"lat":47.377,"lon":8.54}   []
(3 rows)
`,
		},
		{
			format: formatTable, maxRows: 2, batches: 2,
			// Widths come from the shown rows only.
			want: `id  pickup_at             city         fare  pickup                      tags
--  --------------------  -----------  ----  --------------------------  ------------------
 1  2026-01-02T03:04:05Z  Berlin       12.5  {"lat":52.52,"lon":13.405}  ["airport","card"]
22  2026-01-02T04:04:05Z  Paris, "FR"  null  {"lat":48.857,"lon":2.352}  null
... 4 more rows (--max-rows to show more, --format csv or json for all)
(6 rows)
`,
		},
		{
			format: formatTable, maxRows: 100, batches: 0,
			want: `id  pickup_at  city  fare  pickup  tags
--  ---------  ----  ----  ------  ----
(0 rows)
`,
		},
		{
			format: formatCSV, batches: 1,
			want: `id,pickup_at,city,fare,pickup,tags
1,2026-01-02 03:04:05Z,Berlin,12.5,"{""lat"":52.52,""lon"":13.405}","[""airport"",""card""]"
22,2026-01-02 04:04:05Z,"Paris, ""FR""",,"{""lat"":48.857,""lon"":2.352}",
333,2026-01-02 05:04:05Z,Zürich,NaN,"{""lat"":47.377,""lon"":8.54}",[]
`,
		},
		{
			format: formatCSV, batches: 0,
			want: "id,pickup_at,city,fare,pickup,tags\n",
		},
		{
			format: formatJSON, batches: 1,
			want: `{"id":1,"pickup_at":"2026-01-02T03:04:05Z","city":"Berlin","fare":12.5,"pickup":{"lat":52.52,"lon":13.405},"tags":["airport","card"]}
{"id":22,"pickup_at":"2026-01-02T04:04:05Z","city":"Paris, \"FR\"","fare":null,"pickup":{"lat":48.857,"lon":2.352},"tags":null}
{"id":333,"pickup_at":"2026-01-02T05:04:05Z","city":"Zürich","fare":"NaN","pickup":{"lat":47.377,"lon":8.54},"tags":[]}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := knownBatch(t, mem)
			defer rec.Release()
			var out bytes.Buffer
			p, err := newPrinter(tt.format, tripSchema, &out, tt.maxRows)
			if err != nil {
				t.Fatal(err)
			}
			for range tt.batches {
				if err := p.write(rec); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestPrinterUnknownFormat(t *testing.T) {
	if _, err := newPrinter("xml", tripSchema, &bytes.Buffer{}, 0); err == nil || !strings.Contains(err.Error(), "xml") {
		t.Fatalf("err = %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	tests := map[int64]string{
		0:               "0 B",
		1023:            "1023 B",
		1024:            "1.0 KiB",
		1536:            "1.5 KiB",
		5 << 20:         "5.0 MiB",
		3<<30 + 1<<29:   "3.5 GiB",
		int64(1) << 50:  "1.0 PiB",
		math.MaxInt64:   "8.0 EiB",
		64<<20 - 1<<10:  "64.0 MiB",
		100 * (1 << 10): "100.0 KiB",
	}
	for n, want := range tests {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTablePeekCounts: a peek (only --max-rows rows and one more asked
// for) counts the rest from the plan without a filter, and says only
// that there are more with one.
func TestTablePeekCounts(t *testing.T) {
	for _, tt := range []struct {
		peek     *peekCount
		wantTail string
	}{
		{&peekCount{rows: 5000}, "... 4998 more rows (--max-rows to show more, --format csv or json for all)\n(5000 rows)\n"},
		{&peekCount{rows: 5000, filtered: true}, "... more rows match (--max-rows to show more, 0 to count them; --format csv or json for all)\n(more than 2 rows)\n"},
	} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rec := knownBatch(t, mem) // 3 rows: the 2 shown and one more
		var out bytes.Buffer
		p := newTablePrinter(tripSchema, &out, 2)
		p.peek = tt.peek
		if err := p.write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(out.String(), tt.wantTail) {
			t.Errorf("got\n%s\nwant it to end with\n%s", out.String(), tt.wantTail)
		}
		mem.AssertSize(t, 0)
	}
}
