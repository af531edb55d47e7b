package parquet

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// memSource serves a file from memory.
type memSource struct{ *bytes.Reader }

func (m memSource) Size() int64 { return m.Reader.Size() }

// writeJSON writes rows given as JSON lines with schema sc to Parquet.
func writeJSON(t *testing.T, sc *arrow.Schema, rows string, props ...pqarrow.WriterOption) scanner.Source {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	data := writeParquetBytes(t, rec, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(append(props, pqarrow.WithStoreSchema())...))
	return memSource{bytes.NewReader(data)}
}

// writeParquetBytes returns rec written as a Parquet file.
func writeParquetBytes(t testing.TB, rec arrow.RecordBatch, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, arrowProps)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(t *testing.T, src scanner.Source, columns []string) (*arrow.Schema, string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, err := Open(context.Background(), "test.parquet", src, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project(columns)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: mem}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		if !rec.Schema().Equal(p.Schema) {
			t.Errorf("batch schema %s differs from the projection's %s", rec.Schema(), p.Schema)
		}
		for i, c := range rec.Columns() {
			if !arrow.TypeEqual(c.DataType(), p.Schema.Field(i).Type) {
				t.Errorf("column %d is %s, schema says %s", i, c.DataType(), p.Schema.Field(i).Type)
			}
		}
		return array.RecordToJSON(rec, &out)
	})
	if err != nil {
		t.Fatal(err)
	}
	return p.Schema, out.String()
}

func TestProjectionTypesMatchData(t *testing.T) {
	nested := arrow.NewSchema([]arrow.Field{{Name: "s", Nullable: true, Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "t", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "z", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			arrow.Field{Name: "w", Type: arrow.BinaryTypes.String, Nullable: true},
		)},
	)}}, nil)
	nestedRows := `[{"s": {"x": 1, "t": {"z": 1.5, "w": "a"}}}, {"s": null}]`
	tests := []struct {
		name     string
		schema   *arrow.Schema
		rows     string
		columns  []string
		wantType string
		wantJSON string
	}{
		{"struct in struct, one leaf", nested, nestedRows, []string{"s.t.z"},
			"struct<t: struct<z: float64>>", `{"s":{"t":{"z":1.5}}}` + "\n" + `{"s":null}` + "\n"},
		{"struct in struct, two branches", nested, nestedRows, []string{"s.x", "s.t.w"},
			"struct<x: int64, t: struct<w: utf8>>", `{"s":{"t":{"w":"a"},"x":1}}` + "\n" + `{"s":null}` + "\n"},
		{"null type", arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.Null, Nullable: true}}, nil),
			`[{"n": null}, {"n": null}]`, nil, "null", `{"n":null}` + "\n" + `{"n":null}` + "\n"},
		{"large list", arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Int64), Nullable: true}}, nil),
			`[{"l": [1, 2]}, {"l": [3]}]`, nil, "large_list<item: int64, nullable>", `{"l":[1,2]}` + "\n" + `{"l":[3]}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, got := readAll(t, writeJSON(t, tt.schema, tt.rows), tt.columns)
			if typ := sc.Field(0).Type.String(); !strings.Contains(stripNullable(typ), stripNullable(tt.wantType)) {
				t.Errorf("type %s, want %s", typ, tt.wantType)
			}
			if got != tt.wantJSON {
				t.Errorf("rows %q, want %q", got, tt.wantJSON)
			}
		})
	}
}

func stripNullable(s string) string {
	s = strings.ReplaceAll(s, " nullable", "")
	s = strings.ReplaceAll(s, ", nullable", "")
	s = strings.ReplaceAll(s, "element", "item")
	return s
}

// INT96 timestamps read as zone-less timestamps, as pyarrow and Spark do.
func TestInt96IsZoneless(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true}}, nil)
	src := writeJSON(t, sc, `[{"ts": "2009-03-01 00:01:00"}]`, pqarrow.WithDeprecatedInt96Timestamps(true))
	got, rows := readAll(t, src, nil)
	ts, ok := got.Field(0).Type.(*arrow.TimestampType)
	if !ok || ts.TimeZone != "" || ts.Unit != arrow.Nanosecond {
		t.Errorf("INT96 column read as %s, want timestamp[ns] without zone", got.Field(0).Type)
	}
	if !strings.Contains(rows, "2009-03-01") {
		t.Errorf("rows %q", rows)
	}
}

func TestUnknownColumnsAreMissing(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	src := writeJSON(t, sc, `[{"a": 1}]`)
	f, err := Open(context.Background(), "t.parquet", src, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project([]string{"a", "b", "a.x"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Missing, ",") != "b,a.x" {
		t.Errorf("missing %v, want [b a.x]", p.Missing)
	}
}

// A column whose name has dots is matched whole before any dotted path
// into another column, wherever it stands in the file (the planner maps
// names to output columns so: docs/schemas.md, "Projection").
func TestDottedNameMatchesWholeFirst(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
		{Name: "a.b", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	src := writeJSON(t, sc, `[{"a": {"b": 1}, "a.b": "x"}]`)
	f, err := Open(context.Background(), "t.parquet", src, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project([]string{"a.b"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Schema.NumFields() != 1 || p.Schema.Field(0).Name != "a.b" || p.Schema.Field(0).Type.ID() != arrow.STRING {
		t.Errorf("schema %v, want the string column a.b", p.Schema)
	}
}

// Fuzz the footer and decoder path: any bytes must give a result or an
// error, never a panic.
func FuzzOpenAndRead(f *testing.F) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rec, _, _ := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(`[{"a": 1, "s": "x"}, {"a": 2, "s": null}]`))
	// The default writer, and PLAIN files that the native reader decodes
	// (v1 and v2 pages, uncompressed and Snappy).
	for _, props := range [][]parquet.WriterProperty{
		nil,
		{parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Uncompressed)},
		{parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Snappy)},
	} {
		var buf bytes.Buffer
		w, _ := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
		w.Write(rec)
		w.Close()
		f.Add(buf.Bytes())
	}
	for _, b := range bombs() {
		f.Add(b.build())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Open(context.Background(), "fuzz.parquet", memSource{bytes.NewReader(data)}, memory.NewGoAllocator())
		if err != nil {
			return
		}
		defer file.Close()
		p, err := file.Project(nil)
		if err != nil {
			return
		}
		// Within a budget, whatever the file claims; all of it given back.
		budget := &capReserver{cap: 64 << 20}
		_ = file.Read(context.Background(), p, scanner.ReadOptions{Mem: memory.NewGoAllocator(), Budget: budget}, func(r arrow.RecordBatch) error {
			r.Release()
			return nil
		})
		if h := budget.Held(); h != 0 {
			t.Errorf("%d bytes of budget held after the read", h)
		}
	})
}

func TestChunkWorkBytes(t *testing.T) {
	const k, m = 1 << 10, 1 << 20
	for _, tc := range []struct {
		compressed, uncompressed int64
		dictionary               bool
		want                     int64
	}{
		// A small chunk is held whole: stream buffer, compressed and
		// decompressed page.
		{128 * k, 128 * k, false, 128*k + 128*k + 128*k + 16*k},
		{8 * k, 8 * k, false, 8*k + 8*k + 8*k + 16*k},
		// Large chunks hold a page at a time, taken as 1 MiB.
		{64 * m, 200 * m, false, m + m + m + 16*k},
		// Compressed chunk, with a dictionary kept for the whole chunk.
		{300 * k, 2 * m, true, 300*k + 300*k + m + m + 16*k},
	} {
		if got := chunkWorkBytes(tc.compressed, tc.uncompressed, tc.dictionary); got != tc.want {
			t.Errorf("chunkWorkBytes(%d, %d, %v) = %d, want %d", tc.compressed, tc.uncompressed, tc.dictionary, got, tc.want)
		}
	}
}
