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
