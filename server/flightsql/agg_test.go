package flightsql

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestExtremes: MIN and MAX over batches of several types, merged from
// two accumulators as the endpoints' are, with NULLs, NaN, dictionaries
// and a struct field; every buffer released.
func TestExtremes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		name    string
		typ     arrow.DataType
		path    string
		batches []string // JSON arrays of the column, one per batch
		min     string
		max     string
	}{
		{"int64", arrow.PrimitiveTypes.Int64, "x", []string{`[3, null, -7]`, `[null]`, `[12, 0]`}, "-7", "12"},
		{"float with NaN", arrow.PrimitiveTypes.Float64, "x", []string{`[1.5, "NaN"]`, `[-2.25, null]`}, "-2.25", "1.5"},
		{"only NaN", arrow.PrimitiveTypes.Float64, "x", []string{`["NaN", null]`}, "NaN", "NaN"},
		{"all null", arrow.PrimitiveTypes.Int32, "x", []string{`[null, null]`, `[]`}, "(null)", "(null)"},
		{"string", arrow.BinaryTypes.String, "x", []string{`["pear", "apple"]`, `["zebra", null, "Zulu"]`}, "Zulu", "zebra"},
		{"date", arrow.FixedWidthTypes.Date32, "x", []string{`["2026-01-02", "2025-12-31"]`}, "2025-12-31", "2026-01-02"},
		{"dictionary", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
			"x", []string{`["b", "a", "c", "a"]`, `["b"]`}, "a", "c"},
		{"struct field", arrow.StructOf(arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), "x.y",
			[]string{`[{"y": 5}, null, {"y": 9}]`, `[{"y": null}, {"y": 2}]`}, "2", "9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: tc.typ, Nullable: true}}, nil)
			leaf, err := leafType(schema, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			for _, isMax := range []bool{false, true} {
				// Two accumulators, the first half of the batches in one:
				// merged as scanAggregates merges endpoints.
				a := &extreme{max: isMax, path: strings.Split(tc.path, "."), typ: leaf}
				b := &extreme{max: isMax, path: strings.Split(tc.path, "."), typ: leaf}
				for i, js := range tc.batches {
					rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(jsonRows(js)))
					if err != nil {
						t.Fatalf("%s: %v", js, err)
					}
					acc := a
					if i >= (len(tc.batches)+1)/2 {
						acc = b
					}
					if err := acc.add(rec); err != nil {
						t.Fatal(err)
					}
					rec.Release()
				}
				if err := a.merge(b); err != nil {
					t.Fatal(err)
				}
				b.release()
				res, err := a.result(mem)
				if err != nil {
					t.Fatal(err)
				}
				got := "(null)"
				if res.IsValid(0) {
					got = res.ValueStr(0)
				}
				want := map[bool]string{false: tc.min, true: tc.max}[isMax]
				if got != want || !arrow.TypeEqual(res.DataType(), leaf) {
					t.Errorf("max=%v: %s (%s), want %s (%s)", isMax, got, res.DataType(), want, leaf)
				}
				res.Release()
				a.release()
			}
		})
	}
}

// jsonRows turns a JSON array of values into rows of column x.
func jsonRows(values string) string {
	var rows []string
	dec := strings.TrimSpace(values)
	dec = strings.TrimSuffix(strings.TrimPrefix(dec, "["), "]")
	if strings.TrimSpace(dec) == "" {
		return "[]"
	}
	for _, v := range splitTop(dec) {
		rows = append(rows, `{"x": `+strings.TrimSpace(v)+`}`)
	}
	return "[" + strings.Join(rows, ",") + "]"
}

// splitTop splits s at the commas outside braces and quotes.
func splitTop(s string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i, c := range s {
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
