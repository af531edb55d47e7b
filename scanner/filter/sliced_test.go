package filter

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSlicedBooleans: booleans of a sliced batch (offset 1) compare,
// order and look up as the same values at offset 0 do.
func TestSlicedBooleans(t *testing.T) {
	mem := memory.NewGoAllocator() // evalTruth checks the evaluator's allocations
	ab := arrow.FixedWidthTypes.Boolean
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ab, Nullable: true}, {Name: "b", Type: ab, Nullable: true}}, nil)
	a, _, _ := array.FromJSON(mem, ab, strings.NewReader(`[false, true, true, true, false, false, false, null, null, null]`))
	b, _, _ := array.FromJSON(mem, ab, strings.NewReader(`[true, true, false, null, true, false, null, true, false, null]`))
	full := array.NewRecordBatch(schema, []arrow.Array{a, b}, 10)
	a.Release()
	b.Release()
	defer full.Release()
	rec := full.NewSlice(1, 10)
	defer rec.Release()
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{&And{Terms: []Expr{col("a"), col("b")}}, "TFNFFFNFN"},
		{cmpOp(Lt, col("a"), col("b")), "FFNTFNNNN"},
		{&Not{Term: cmpOp(Lt, col("a"), col("b"))}, "TTNFTNNNN"},
		{&In{Term: col("a"), Values: []*Literal{lit(false), lit(true)}}, "TTTTTTNNN"},
		{&IsNull{Term: col("a")}, "FFFFFFTTT"},
	} {
		if got := evalTruth(t, rec, c.e); got != c.want {
			t.Errorf("%s = %s, want %s", c.e, got, c.want)
		}
	}
}

// TestSlicedIn: IN on a sliced decimal column answers as on the same
// values at offset 0.
func TestSlicedIn(t *testing.T) {
	dt := &arrow.Decimal128Type{Precision: 9, Scale: 0}
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}}, nil)
	d, _, err := array.FromJSON(memory.NewGoAllocator(), dt, strings.NewReader(`["5", "1", "2", "3", null, "2", "7", "2", "1"]`))
	if err != nil {
		t.Fatal(err)
	}
	full := array.NewRecordBatch(schema, []arrow.Array{d}, int64(d.Len()))
	d.Release()
	defer full.Release()
	for from := int64(0); from < 4; from++ {
		rec := full.NewSlice(from, full.NumRows())
		got := evalTruth(t, rec, &In{Term: col("d"), Values: []*Literal{lit(Number("2"))}})
		rec.Release()
		if want := "FFTFNTFTF"[from:]; got != want {
			t.Errorf("from %d: d IN (2) = %s, want %s", from, got, want)
		}
	}
}

// TestSlicedDictionaries: a string column as a sliced dictionary array
// (the Parquet reader hands the filter's columns over as the file's
// dictionary, and a late read slices the batches it kept) answers every
// test as the same values plain and unsliced do, its null indices
// included.
func TestSlicedDictionaries(t *testing.T) {
	mem := memory.NewGoAllocator()
	utf8 := arrow.BinaryTypes.String
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: utf8}
	dict, _, _ := array.FromJSON(mem, utf8, strings.NewReader(`["apple", "banana", "cherry", "band"]`))
	defer dict.Release()
	idx, _, _ := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(`[2, 0, null, 1, 0, 3, 1, null, 0, 2]`))
	defer idx.Release()
	plain, _, _ := array.FromJSON(mem, utf8, strings.NewReader(
		`["cherry", "apple", null, "banana", "apple", "band", "banana", null, "apple", "cherry"]`))
	defer plain.Release()
	d := array.NewDictionaryArray(dt, idx, dict)
	defer d.Release()
	dictRec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: dt, Nullable: true}}, nil), []arrow.Array{d}, 10)
	defer dictRec.Release()
	plainRec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: utf8, Nullable: true}}, nil), []arrow.Array{plain}, 10)
	defer plainRec.Release()
	exprs := []Expr{
		cmpOp(Eq, col("s"), lit("apple")),
		cmpOp(Ge, col("s"), lit("band")),
		&Not{Term: cmpOp(Eq, col("s"), lit("apple"))},
		&In{Term: col("s"), Values: lits("banana", "cherry")},
		&In{Term: col("s"), Values: lits("banana", nil), Negated: true},
		&Like{Term: col("s"), Pattern: "ban%"},
		&StartsWith{Term: col("s"), Prefix: "ch"},
		&IsNull{Term: col("s")},
		&IsNull{Term: col("s"), Negated: true},
		&And{Terms: []Expr{&IsNull{Term: col("s"), Negated: true}, cmpOp(Ne, col("s"), lit("cherry"))}},
	}
	for from := int64(0); from < 4; from++ {
		for _, to := range []int64{10, 7} {
			dr, pr := dictRec.NewSlice(from, to), plainRec.NewSlice(from, to)
			for _, e := range exprs {
				if got, want := evalTruth(t, dr, e), evalTruth(t, pr, e); got != want {
					t.Errorf("rows %d..%d: %s = %s on the dictionary, %s on the values", from, to, e, got, want)
				}
			}
			dr.Release()
			pr.Release()
		}
	}
}
