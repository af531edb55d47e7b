package scanner

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDecodeDictionary: the gathered values equal arrow-go's take of the
// dictionary by the indices, for fixed-width, string and binary values,
// null indices (one holding an index out of range, as a null slot may),
// sliced indices and an empty dictionary; a valid index out of range is an
// error, not a read past the dictionary.
func TestDecodeDictionary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	i32 := arrow.PrimitiveTypes.Int32
	cases := []struct {
		name       string
		values     arrow.DataType
		dict, idx  string
		from, to   int
		badNullIdx bool
	}{
		{"strings", arrow.BinaryTypes.String, `["apple", "", "cherry"]`, `[2, 0, null, 1, 0, 2]`, 0, 6, false},
		{"strings sliced", arrow.BinaryTypes.String, `["apple", "", "cherry"]`, `[2, 0, null, 1, 0, 2]`, 2, 5, false},
		{"binary", arrow.BinaryTypes.Binary, `["AAE=", "Ag=="]`, `[1, 1, 0, null]`, 0, 4, false},
		{"int64", arrow.PrimitiveTypes.Int64, `[7, -1, 900]`, `[0, 2, null, 1]`, 1, 4, false},
		{"float32", arrow.PrimitiveTypes.Float32, `[1.5, 2.5]`, `[1, 0, 1]`, 0, 3, false},
		{"decimal", &arrow.Decimal128Type{Precision: 5, Scale: 2}, `["1.25", "-3.00"]`, `[1, null, 0]`, 0, 3, false},
		{"timestamp", &arrow.TimestampType{Unit: arrow.Microsecond}, `[1, 2]`, `[1, 0]`, 0, 2, false},
		{"null slot out of range", arrow.BinaryTypes.String, `["a", "b"]`, `[1, null, 0]`, 0, 3, true},
		{"empty dictionary", arrow.BinaryTypes.String, `[]`, `[null, null]`, 0, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dict, _, err := array.FromJSON(mem, tc.values, strings.NewReader(tc.dict))
			if err != nil {
				t.Fatal(err)
			}
			defer dict.Release()
			full, _, err := array.FromJSON(mem, i32, strings.NewReader(tc.idx))
			if err != nil {
				t.Fatal(err)
			}
			defer full.Release()
			if tc.badNullIdx {
				arrow.Int32Traits.CastFromBytes(full.Data().Buffers()[1].Bytes())[1] = 99
			}
			idx := array.NewSlice(full, int64(tc.from), int64(tc.to))
			defer idx.Release()
			d := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: i32, ValueType: tc.values}, idx, dict)
			defer d.Release()
			got, err := DecodeDictionary(d, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if tc.badNullIdx {
				if got.String() != `["b" (null) "a"]` {
					t.Fatalf("got %s", got)
				}
				return
			}
			want, err := compute.TakeArray(compute.WithAllocator(context.Background(), mem), dict, idx)
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()
			if !array.Equal(got, want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
	t.Run("valid index out of range", func(t *testing.T) {
		dict, _, _ := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["a"]`))
		defer dict.Release()
		idx, _, _ := array.FromJSON(mem, i32, strings.NewReader(`[0, 3]`))
		defer idx.Release()
		d := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: i32, ValueType: arrow.BinaryTypes.String}, idx, dict)
		defer d.Release()
		if got, err := DecodeDictionary(d, mem); err == nil {
			got.Release()
			t.Fatal("no error")
		}
	})
}
