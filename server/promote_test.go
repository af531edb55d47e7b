package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeWithSchema writes rec like writeParquet, storing its Arrow schema
// (ARROW:schema) as pyarrow does, so that metadata survives.
func writeWithSchema(t *testing.T, dir, name string, rec arrow.RecordBatch) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// recordOf builds a one-column record of JSON values.
func recordOf(t *testing.T, f arrow.Field, meta *arrow.Metadata, js string) arrow.RecordBatch {
	t.Helper()
	a, _, err := array.FromJSON(memory.NewGoAllocator(), f.Type, strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{f}, meta), []arrow.Array{a}, int64(a.Len()))
}

func writeColumn(t *testing.T, dir, name string, f arrow.Field, meta *arrow.Metadata, js string) {
	t.Helper()
	rec := recordOf(t, f, meta, js)
	defer rec.Release()
	writeWithSchema(t, dir, name, rec)
}

// streamsMatchInfo checks that every stream's schema is the FlightInfo's,
// metadata included: stock clients concatenate the streams.
func streamsMatchInfo(t *testing.T, res *scanResult) *arrow.Schema {
	t.Helper()
	want, err := flight.DeserializeSchema(res.info.Schema, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range res.records {
		if got := rec.Schema(); !got.Equal(want) || !got.Metadata().Equal(want.Metadata()) || !sameFieldMetadata(got, want) {
			t.Fatalf("batch %d has schema\n%v\nthe FlightInfo\n%v", i, got, want)
		}
	}
	return want
}

// A folder of timestamp[us], [ms] and [ns] files scans like
// pyarrow.dataset: as the first file's unit, values cast.
func TestMixedTimestampUnits(t *testing.T) {
	dir := t.TempDir()
	ts := func(u arrow.TimeUnit) arrow.Field {
		return arrow.Field{Name: "t", Type: &arrow.TimestampType{Unit: u}, Nullable: true}
	}
	writeColumn(t, dir, "a.parquet", ts(arrow.Microsecond), nil, `["2026-01-01T12:30:15.250000", null]`)
	writeColumn(t, dir, "b.parquet", ts(arrow.Millisecond), nil, `["2026-01-01T12:30:15.250"]`)
	writeColumn(t, dir, "c.parquet", ts(arrow.Nanosecond), nil, `["2000-01-01T00:00:00.000001000"]`)
	writeColumn(t, dir, "lossy/a.parquet", ts(arrow.Microsecond), nil, `["2026-01-01T00:00:00"]`)
	writeColumn(t, dir, "lossy/b.parquet", ts(arrow.Nanosecond), nil, `["2026-01-01T00:00:00.123456789"]`)
	c, _ := checkedServer(t, dir)
	res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"*.parquet"}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	schema := streamsMatchInfo(t, res)
	if got := schema.Field(0).Type; !arrow.TypeEqual(got, ts(arrow.Microsecond).Type) {
		t.Fatalf("unified type %s, want the first file's timestamp[us]", got)
	}
	got := table(t, res)
	defer got.Release()
	var sb strings.Builder
	if err := array.RecordToJSON(got, &sb); err != nil {
		t.Fatal(err)
	}
	want := `{"t":"2026-01-01T12:30:15.25"}` + "\n" + `{"t":null}` + "\n" + `{"t":"2026-01-01T12:30:15.25"}` + "\n" + `{"t":"2000-01-01T00:00:00.000001"}` + "\n"
	if sb.String() != want {
		t.Errorf("rows:\n%s\nwant:\n%s", sb.String(), want)
	}
	_, err = scanJSON(context.Background(), c, map[string]any{"paths": []string{"lossy/"}})
	if err == nil || !strings.Contains(err.Error(), "lossy/b.parquet") || !strings.Contains(err.Error(), `column "t"`) || !strings.Contains(err.Error(), "lose data") {
		t.Errorf("lossy cast: %v, want an error naming lossy/b.parquet and column t", err)
	}
}

// Schema metadata comes from the first file, field metadata from a field's
// first appearance, in the FlightInfo and every stream alike.
func TestMetadataFromFirstFile(t *testing.T) {
	dir := t.TempDir()
	meta := func(k, v string) arrow.Metadata { return arrow.NewMetadata([]string{k}, []string{v}) }
	first, second := meta("pandas", `{"first": true}`), meta("pandas", `{"second": true}`)
	f := func(m arrow.Metadata) arrow.Field {
		return arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: m}
	}
	writeColumn(t, dir, "a.parquet", f(meta("unit", "m")), &first, `[1, 2]`)
	writeColumn(t, dir, "b.parquet", f(meta("unit", "km")), &second, `[3]`)
	writeColumn(t, dir, "c.parquet", f(meta("unit", "m")), &first, `[4]`)
	c, _ := checkedServer(t, dir)
	res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"*.parquet"}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	schema := streamsMatchInfo(t, res)
	if !schema.Metadata().Equal(first) {
		t.Errorf("schema metadata %v, want the first file's %v", schema.Metadata(), first)
	}
	if got := schema.Field(0).Metadata; !got.Equal(meta("unit", "m")) {
		t.Errorf("field metadata %v, want the first file's", got)
	}
	if res.rows() != 4 {
		t.Errorf("%d rows, want 4", res.rows())
	}
}

// arrow-go marks fields without a Parquet field id with PARQUET:field_id
// "-1", nested children too; pyarrow shows no such key, and neither does
// scand.
func TestNoFieldIDLeak(t *testing.T) {
	dir := t.TempDir()
	st := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true})
	writeColumn(t, dir, "n.parquet", arrow.Field{Name: "s", Type: st, Nullable: true}, nil, `[{"x": 1, "l": [1, 2]}, null]`)
	c, _ := checkedServer(t, dir)
	for _, req := range []map[string]any{{"paths": []string{"n.parquet"}}, {"paths": []string{"n.parquet"}, "columns": []string{"s.l"}}} {
		res, err := scanJSON(context.Background(), c, req)
		if err != nil {
			t.Fatal(err)
		}
		schema := streamsMatchInfo(t, res)
		res.release()
		if s := schema.String(); strings.Contains(s, "field_id") {
			t.Errorf("%v: schema leaks field ids:\n%s", req, s)
		}
	}
}
