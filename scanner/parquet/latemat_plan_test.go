package parquet

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/scanner/filter/sql"
)

func TestGroupLate(t *testing.T) {
	indexed := lateFacts{native: true, offsetIndex: true, otherBytes: lateMinBytes}
	cases := []struct {
		name string
		mode scanner.LateMode
		ff   lateFacts
		late bool
		why  string
	}{
		{"pays", scanner.LateAuto, indexed, true, ""},
		{"off", scanner.LateOff, indexed, false, "late materialization is off"},
		{"not native", scanner.LateAuto, lateFacts{offsetIndex: true, otherBytes: lateMinBytes}, false, "pages the native reader does not decode"},
		{"no page index, nested", scanner.LateAlways, lateFacts{native: true, otherBytes: lateMinBytes}, false, "no page index, and a column read is not flat"},
		{"no page index, flat", scanner.LateAuto, lateFacts{native: true, headers: true, otherBytes: lateMinBytes}, true, ""},
		{"no page index, flat, too little", scanner.LateAuto, lateFacts{native: true, headers: true, otherBytes: lateMinBytes - 1}, false, "the other columns hold under 1 MiB per row group"},
		{"too little to save", scanner.LateAuto, lateFacts{native: true, offsetIndex: true, otherBytes: lateMinBytes - 1}, false, "the other columns hold under 1 MiB per row group"},
		{"always, however little", scanner.LateAlways, lateFacts{native: true, offsetIndex: true}, true, ""},
		{"under one round trip", scanner.LateAuto, lateFacts{native: true, offsetIndex: true, otherBytes: 3 << 20, roundTrip: 4 << 20}, false,
			"the other columns hold under one round trip's worth (4.0 MiB) per row group"},
		{"over one round trip", scanner.LateAuto, lateFacts{native: true, offsetIndex: true, otherBytes: 5 << 20, roundTrip: 4 << 20}, true, ""},
		{"always, whatever the round trip", scanner.LateAlways, lateFacts{native: true, offsetIndex: true, roundTrip: 4 << 20}, true, ""},
	}
	for _, tc := range cases {
		late, why := groupLate(tc.mode, tc.ff)
		if late != tc.late || why != tc.why {
			t.Errorf("%s: groupLate = %v %q, want %v %q", tc.name, late, why, tc.late, tc.why)
		}
	}
}

// TestPlanLatePredictsTheRead: PlanLate's prediction, from the footer
// alone, against what the read then did (ReadCounts.LateGroups), where
// no survivor share stops auto.
func TestPlanLatePredictsTheRead(t *testing.T) {
	late := lateFile(t, 40000)
	small := pageIndexFile(t, 20000, false)
	cases := []struct {
		name, filter string
		data         []byte
		columns      []string
		mode         scanner.LateMode
		strategy     string
		reason       string
		lateGroups   int64 // the read's
	}{
		{"pays", "cat = 8", late, lateProjection(), scanner.LateAuto, "yes", "filter on cat; 21 of 22 columns deferred", 4},
		{"two filter columns", "cat = 8 AND v0 > 0.5", late, lateProjection(), scanner.LateAuto, "yes", "filter on cat, v0; 20 of 22 columns deferred", 4},
		{"only the filter's columns", "cat = 8", late, []string{"cat"}, scanner.LateAuto, "no", "projection is only the filter columns", 0},
		{"off", "cat = 8", late, lateProjection(), scanner.LateOff, "no", "late materialization is off", 0},
		{"small groups", "u32 = 36000", small, []string{"u32", "s", "f64n"}, scanner.LateAuto, "no", "the other columns hold under 1 MiB per row group", 0},
		{"small groups, always", "u32 = 36000", small, []string{"u32", "s", "f64n"}, scanner.LateAlways, "yes", "filter on u32; 2 of 3 columns deferred", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := openBytes(t, tc.data)
			p, err := f.Project(tc.columns)
			if err != nil {
				t.Fatal(err)
			}
			pred := bindFilter(t, f, tc.filter)
			groups := make([]int, f.pf.NumRowGroups())
			for i := range groups {
				groups[i] = i
			}
			got := f.PlanLate(p, groups, pred.Columns(), tc.mode, 0)
			if got.Strategy != tc.strategy || got.Reason != tc.reason {
				t.Fatalf("PlanLate = %s (%s), want %s (%s)", got.Strategy, got.Reason, tc.strategy, tc.reason)
			}
			if tc.lateGroups < 0 {
				return // the page index prunes the read's groups
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			counts := &scanner.ReadCounts{}
			rec, _ := readFiltered(t, tc.data, tc.columns, tc.filter, scanner.ReadOptions{LateMaterialization: tc.mode, Counts: counts}, mem)
			rec.Release()
			if counts.LateGroups != tc.lateGroups || int64(got.LateGroups) != tc.lateGroups {
				t.Fatalf("read %d groups late, predicted %d, want %d", counts.LateGroups, got.LateGroups, tc.lateGroups)
			}
		})
	}
}

// TestPlanLateWithoutPageIndex: a file of flat columns written without a
// page index is predicted late (from its page headers) where forced, and
// one pass under auto where its other column holds too little; read so.
func TestPlanLateWithoutPageIndex(t *testing.T) {
	data := noIndexFile(t)
	f := openBytes(t, data)
	p, err := f.Project(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode               scanner.LateMode
		strategy, reason   string
		predicted, grouped int64
	}{
		{scanner.LateAlways, "yes", "filter on a; 1 of 2 columns deferred", 1, 1},
		{scanner.LateAuto, "no", "the other columns hold under 1 MiB per row group", 0, 0},
	} {
		got := f.PlanLate(p, []int{0}, []string{"a"}, tc.mode, 0)
		if got.Strategy != tc.strategy || got.Reason != tc.reason {
			t.Fatalf("%s: PlanLate = %s (%s)", tc.mode, got.Strategy, got.Reason)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		counts := &scanner.ReadCounts{}
		rec, _ := readFiltered(t, data, nil, "a = 7", scanner.ReadOptions{LateMaterialization: tc.mode, Counts: counts}, mem)
		if rec.NumRows() != 1 || counts.LateGroups != tc.grouped || int64(got.LateGroups) != tc.predicted {
			t.Fatalf("%s: %d rows, %d groups late, predicted %d", tc.mode, rec.NumRows(), counts.LateGroups, got.LateGroups)
		}
		rec.Release()
		mem.AssertSize(t, 0)
	}
}

func noIndexFile(t *testing.T) []byte {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer b.Release()
	for i := range 1000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(-i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithPageIndexEnabled(false))
	return writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties())
}

func bindFilter(t *testing.T, f *File, text string) *filter.Predicate {
	t.Helper()
	e, err := sql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := filter.Bind(e, f.Schema())
	if err != nil {
		t.Fatal(err)
	}
	return pred
}
