package stream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// assertReleased waits for deferred releases, then checks that mem holds
// nothing.
func assertReleased(t *testing.T, mem *memory.CheckedAllocator) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); mem.CurrentAlloc() != 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	mem.AssertSize(t, 0)
}

// conform casts promoted columns, dictionaries included (arrow-go's cast
// cannot make them), and releases all it made.
func TestConformCasts(t *testing.T) {
	dict := func(idx arrow.DataType) arrow.DataType {
		return &arrow.DictionaryType{IndexType: idx, ValueType: arrow.BinaryTypes.String}
	}
	var many strings.Builder
	many.WriteString(`[`)
	for i := range 200 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"v` + strings.Repeat("x", i) + `"`)
	}
	many.WriteString(`]`)
	for _, tc := range []struct {
		name     string
		from, to arrow.DataType
		values   string
		wantErr  string
		want     string // the values cast, when their text differs from values'
	}{
		{name: "int64 to int32", from: arrow.PrimitiveTypes.Int64, to: arrow.PrimitiveTypes.Int32, values: `[1, null, -3]`},
		{name: "int64 overflows int32", from: arrow.PrimitiveTypes.Int64, to: arrow.PrimitiveTypes.Int32, values: `[1099511627776]`, wantErr: "not in range"},
		{name: "large_string to string", from: arrow.BinaryTypes.LargeString, to: arrow.BinaryTypes.String, values: `["a", null]`},
		{name: "string to dictionary", from: arrow.BinaryTypes.String, to: dict(arrow.PrimitiveTypes.Int8), values: `["a", null, "b", "a"]`},
		{name: "dictionary to string", from: dict(arrow.PrimitiveTypes.Int32), to: arrow.BinaryTypes.String, values: `["a", null, "b"]`},
		{name: "dictionary int16 to int8", from: dict(arrow.PrimitiveTypes.Int16), to: dict(arrow.PrimitiveTypes.Int8), values: `["a", "b"]`},
		{name: "too many values for int8 indexes", from: arrow.BinaryTypes.String, to: dict(arrow.PrimitiveTypes.Int8), values: many.String(), wantErr: "do not fit"},
		{name: "null to dictionary", from: arrow.Null, to: dict(arrow.PrimitiveTypes.Int8), values: `[null, null]`},
		// A table's promotions (Iceberg): decimal precision widened, date to timestamp.
		{name: "decimal(5,2) to decimal(12,2)", from: &arrow.Decimal128Type{Precision: 5, Scale: 2}, to: &arrow.Decimal128Type{Precision: 12, Scale: 2},
			values: `["999.99", null, "-123.45"]`},
		{name: "date to timestamp", from: arrow.FixedWidthTypes.Date32, to: &arrow.TimestampType{Unit: arrow.Microsecond},
			values: `["2024-02-29", null, "1969-12-31"]`, want: `[1709164800000000 (null) -86400000000]`}, // midnight, in µs,
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer assertReleased(t, mem)
			a, _, err := array.FromJSON(mem, tc.from, strings.NewReader(tc.values))
			if err != nil {
				t.Fatal(err)
			}
			rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: tc.from, Nullable: true}}, nil), []arrow.Array{a}, int64(a.Len()))
			a.Release()
			defer rec.Release()
			out, err := conform(rec, arrow.NewSchema([]arrow.Field{{Name: "v", Type: tc.to, Nullable: true}}, nil), mem)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `column "v"`) {
					t.Fatalf("err = %v, want one naming the column and saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if !arrow.TypeEqual(out.Column(0).DataType(), tc.to) {
				t.Fatalf("cast to %s, want %s", out.Column(0).DataType(), tc.to)
			}
			want := plainString(t, rec.Column(0))
			if tc.want != "" {
				want = tc.want
			}
			if got := plainString(t, out.Column(0)); got != want && tc.from.ID() != arrow.NULL {
				t.Errorf("values %s, want %s", got, want)
			}
		})
	}
}

// plainString prints a's values, a dictionary's decoded.
func plainString(t *testing.T, a arrow.Array) string {
	d, ok := a.DataType().(*arrow.DictionaryType)
	if !ok {
		return a.String()
	}
	plain, err := compute.CastArray(context.Background(), a, compute.SafeCastOptions(d.ValueType))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Release()
	return plain.String()
}
