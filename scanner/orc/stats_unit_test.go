package orc

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/scand/scand/scanner"
)

// pb builds protobuf messages for synthetic statistics.
type pb []byte

func (m pb) u(num protowire.Number, v uint64) pb {
	return protowire.AppendVarint(protowire.AppendTag(m, num, protowire.VarintType), v)
}

func (m pb) s(num protowire.Number, v int64) pb { return m.u(num, protowire.EncodeZigZag(v)) }

func (m pb) d(num protowire.Number, v float64) pb {
	return protowire.AppendFixed64(protowire.AppendTag(m, num, protowire.Fixed64Type), math.Float64bits(v))
}

func (m pb) b(num protowire.Number, v []byte) pb {
	return protowire.AppendBytes(protowire.AppendTag(m, num, protowire.BytesType), v)
}

func (m pb) str(num protowire.Number, v string) pb { return m.b(num, []byte(v)) }

// counts starts ColumnStatistics with numberOfValues and hasNull.
func counts(values uint64, hasNull bool) pb {
	h := uint64(0)
	if hasNull {
		h = 1
	}
	return pb(nil).u(1, values).u(10, h)
}

// statsFile is a one-stripe file of one column "a" of type col, with the
// given statistics for it in the stripe and in the footer. Only metadata
// exists: GroupStats needs nothing else.
func statsFile(col orcType, writerVersion uint32, rows uint64, colStats []byte) *File {
	types := []orcType{{kind: kindStruct, subtypes: []uint64{1}, fieldNames: []string{"a"}}, col}
	return statsFileOf(types, writerVersion, rows, counts(rows, false), colStats)
}

// statsFileOf is a one-stripe file of the given types, with stats (one
// per type, in order) in the stripe and in the footer.
func statsFileOf(types []orcType, writerVersion uint32, rows uint64, stats ...[]byte) *File {
	ft := &footer{types: types, numberOfRows: rows, stripes: []stripeInfo{{numberOfRows: rows}}, statistics: stats}
	var stripe pb
	for _, s := range stats {
		stripe = stripe.b(1, s)
	}
	m := &fileMeta{ps: &postScript{writerVersion: writerVersion}, ft: ft, stripeStats: [][]byte{stripe}}
	m.tops = topNodes(types)
	m.schema = schemaOf(m.tops)
	return &File{name: "synthetic", fileMeta: m}
}

// TestStatsStructField checks null counts of a struct's field: the rows
// where the struct is null hold no value of the field, are null in what
// Read returns, and are not counted by the field's hasNull.
func TestStatsStructField(t *testing.T) {
	types := []orcType{
		{kind: kindStruct, subtypes: []uint64{1}, fieldNames: []string{"s"}},
		{kind: kindStruct, subtypes: []uint64{2}, fieldNames: []string{"a"}},
		{kind: kindInt},
	}
	f := statsFileOf(types, 6, 6, counts(6, false), counts(4, true), counts(4, false))
	checkWant(t, f.GroupStats(0), 0, "s", want{"", "", 2, 6, false})
	checkWant(t, f.GroupStats(0), 0, "s.a", want{"", "", 2, 6, false})
	// A top-level column claiming no nulls with values missing is not
	// believed.
	f = statsFileOf(types, 6, 6, counts(6, false), counts(4, false), counts(4, false))
	checkWant(t, f.GroupStats(0), 0, "s", want{"", "", -1, 6, false})
	checkWant(t, f.GroupStats(0), 0, "s.a", want{"", "", 2, 6, false})
	// A field claiming no nulls of its own must have a value wherever its
	// struct is present.
	f = statsFileOf(types, 6, 6, counts(6, false), counts(4, true), counts(3, false))
	checkWant(t, f.GroupStats(0), 0, "s.a", want{"", "", -1, 6, false})
}

// TestStatsRules checks each conversion rule on synthetic statistics, in
// the stripe and in the footer.
func TestStatsRules(t *testing.T) {
	dbl := func(min, max, sum float64) pb { return counts(5, true).b(3, pb(nil).d(1, min).d(2, max).d(3, sum)) }
	ints := func(min, max int64) pb { return counts(5, true).b(2, pb(nil).s(1, min).s(2, max)) }
	strs := func(fields pb) pb { return counts(5, true).b(4, fields) }
	boolean := func(trues uint64) pb { return counts(5, true).b(5, pb(nil).u(1, trues)) }
	date := func(min, max int64) pb { return counts(5, true).b(7, pb(nil).s(1, min).s(2, max)) }
	ts := func(fields pb) pb { return counts(5, true).b(9, fields) }
	dec := func(min, max string) pb { return counts(5, true).b(6, pb(nil).str(1, min).str(2, max)) }
	nan := math.NaN()
	cases := []struct {
		name    string
		col     orcType
		version uint32
		stats   pb
		want    want
	}{
		{"double", orcType{kind: kindDouble}, 6, dbl(-1.5, 2, 3), want{"-1.5", "2", 1, 6, true}},
		{"double NaN min", orcType{kind: kindDouble}, 6, dbl(nan, nan, nan), want{"", "", 1, 6, true}},
		{"double NaN sum", orcType{kind: kindDouble}, 6, dbl(1, 2, nan), want{"", "", 1, 6, true}},
		{"double no sum", orcType{kind: kindDouble}, 6, counts(5, true).b(3, pb(nil).d(1, 1).d(2, 2)), want{"", "", 1, 6, true}},
		{"double no values", orcType{kind: kindDouble}, 6, counts(0, true).b(3, pb(nil).d(3, 0)), want{"", "", 6, 6, false}},
		{"float narrowed outwards", orcType{kind: kindFloat}, 6, dbl(0.1, 0.7, 1), want{"0.099999994", "0.70000005", 1, 6, true}},
		{"tinyint", orcType{kind: kindByte}, 0, ints(-128, 127), want{"-128", "127", 1, 6, false}},
		{"tinyint out of range", orcType{kind: kindByte}, 6, ints(0, 200), want{"", "", 1, 6, false}},
		{"int min above max", orcType{kind: kindInt}, 6, ints(3, 2), want{"", "", 1, 6, false}},
		{"string", orcType{kind: kindString}, 6, strs(pb(nil).str(1, "a").str(2, "b")), want{"a", "b", 1, 6, false}},
		{"string truncated (ORC-203)", orcType{kind: kindString}, 6, strs(pb(nil).str(4, "ab").str(5, "ac")), want{"ab", "ac", 1, 6, false}},
		{"string replacement character", orcType{kind: kindVarchar}, 6, strs(pb(nil).str(1, "a").str(2, "\uFFFD")), want{"a", "", 1, 6, false}},
		{"string original writer", orcType{kind: kindString}, 0, strs(pb(nil).str(1, "a").str(2, "b")), want{"", "", 1, 6, false}},
		{"char keeps its minimum", orcType{kind: kindChar, maxLength: 3}, 6, strs(pb(nil).str(1, "a").str(2, "b")), want{"a", "", 1, 6, false}},
		{"boolean all false", orcType{kind: kindBoolean}, 6, boolean(0), want{"false", "false", 1, 6, false}},
		{"boolean all true", orcType{kind: kindBoolean}, 6, boolean(5), want{"true", "true", 1, 6, false}},
		{"boolean mixed", orcType{kind: kindBoolean}, 6, boolean(3), want{"false", "true", 1, 6, false}},
		{"boolean count above values", orcType{kind: kindBoolean}, 6, boolean(6), want{"", "", 1, 6, false}},
		{"date", orcType{kind: kindDate}, 6, date(0, 1), want{"1970-01-01", "1970-01-02", 1, 6, false}},
		{"date before 1582 (hybrid calendar)", orcType{kind: kindDate}, 6, date(-200000, 0), want{"", "1970-01-01", 1, 6, false}},
		{"timestamp local fields only", orcType{kind: kindTimestamp}, 6, ts(pb(nil).s(1, 0).s(2, 1000)), want{"", "", 1, 6, false}},
		{"timestamp with nanos", orcType{kind: kindTimestamp}, 6, ts(pb(nil).s(3, 0).s(4, 1000).u(5, 6).u(6, 1)), want{"1970-01-01 00:00:00.000000005", "1970-01-01 00:00:01", 1, 6, false}},
		{"timestamp without nanos widened", orcType{kind: kindTimestampInstant}, 6, ts(pb(nil).s(3, 0).s(4, 1000)), want{"1969-12-31 23:59:59.999000001Z", "1970-01-01 00:00:01.000999999Z", 1, 6, false}},
		{"timestamp bad nanos", orcType{kind: kindTimestamp}, 6, ts(pb(nil).s(3, 0).s(4, 1000).u(5, 2000000)), want{"", "1970-01-01 00:00:01.000999999", 1, 6, false}},
		{"timestamp out of range", orcType{kind: kindTimestamp}, 6, ts(pb(nil).s(3, math.MinInt64).s(4, 0)), want{"", "1970-01-01 00:00:00.000999999", 1, 6, false}},
		{"decimal rounded outwards", orcType{kind: kindDecimal, precision: 5, scale: 2, hasPrecision: true}, 6, dec("-1.231", "1.231"), want{"-1.24", "1.24", 1, 6, false}},
		{"decimal exact", orcType{kind: kindDecimal, precision: 5, scale: 2, hasPrecision: true}, 6, dec("-1.2", "999.990"), want{"-1.2", "999.99", 1, 6, false}},
		{"decimal beyond precision", orcType{kind: kindDecimal, precision: 5, scale: 2, hasPrecision: true}, 6, dec("0", "1000"), want{"0", "", 1, 6, false}},
		{"decimal nulls before HIVE-13083", orcType{kind: kindDecimal, precision: 5, scale: 2, hasPrecision: true}, 3, dec("1", "2"), want{"1", "2", -1, 6, false}},
		{"decimal exponent", orcType{kind: kindDecimal, precision: 5, scale: 2, hasPrecision: true}, 6, dec("1e2", "2"), want{"", "2", 1, 6, false}},
		{"nulls: hasNull absent", orcType{kind: kindInt}, 6, pb(nil).u(1, 5), want{"", "", -1, 6, false}},
		{"nulls: more values than rows", orcType{kind: kindInt}, 6, counts(7, true), want{"", "", -1, 6, false}},
		{"nulls: hasNull without a null", orcType{kind: kindInt}, 6, counts(6, true), want{"", "", -1, 6, false}},
		{"nulls: none", orcType{kind: kindInt}, 6, counts(6, false), want{"", "", 0, 6, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := statsFile(c.col, c.version, 6, c.stats)
			for _, g := range []int{0, -1} {
				checkWant(t, f.GroupStats(g), g, "a", c.want)
			}
		})
	}
}

// TestStatsDistrusted checks what makes a whole group's statistics
// unknown: encryption, a footer that counts other rows than its stripes,
// and statistics that do not cover every column.
func TestStatsDistrusted(t *testing.T) {
	good := counts(5, true).b(2, pb(nil).s(1, 1).s(2, 2))
	unknown := want{"", "", -1, 6, true}
	f := statsFile(orcType{kind: kindInt}, 6, 6, good)
	f.ft.encryption = &encryption{variants: []encryptionVariant{{root: 1}}}
	checkWant(t, f.GroupStats(0), 0, "a", unknown)

	f = statsFile(orcType{kind: kindInt}, 6, 6, good)
	f.ft.numberOfRows = 0
	checkWant(t, f.GroupStats(-1), -1, "a", unknown)
	checkWant(t, f.GroupStats(0), 0, "a", want{"1", "2", 1, 6, false})

	f = statsFile(orcType{kind: kindInt}, 6, 6, good)
	f.stripeStats[0] = pb(nil).b(1, counts(6, false))
	f.ft.statistics = f.ft.statistics[:1]
	checkWant(t, f.GroupStats(0), 0, "a", unknown)
	checkWant(t, f.GroupStats(-1), -1, "a", unknown)
}

// TestRawEntriesLimit checks that the Metadata section is split into at
// most one entry per stripe.
func TestRawEntriesLimit(t *testing.T) {
	m := pb(nil).b(1, nil).b(1, nil).b(1, nil)
	if got, err := rawEntries(m, 3); err != nil || len(got) != 3 {
		t.Errorf("3 entries, limit 3: %d, %v", len(got), err)
	}
	if _, err := rawEntries(m, 2); err == nil {
		t.Errorf("3 entries, limit 2: no error")
	}
}

// checkStatsInvariants asks every group for every column's statistics
// and checks what holds whatever the bytes: bounds typed as the column,
// Min <= Max, counts within the rows.
func checkStatsInvariants(t *testing.T, f *File) {
	t.Helper()
	types := map[string]arrow.DataType{}
	for _, fld := range f.Schema().Fields() {
		collectTypes(types, "", fld)
	}
	for g := -1; g <= len(f.ft.stripes); g++ {
		src := f.GroupStats(g)
		for _, name := range scanner.ColumnNames(f.Schema()) {
			st, ok := src.ColumnStats(name)
			if !ok {
				continue
			}
			what := fmt.Sprintf("stripe %d, %q", g, name)
			checkBoundTypes(t, what, st, types[name])
			if st.Min != nil && st.Max != nil && compare(scalarValue(st.Min), scalarValue(st.Max)) > 0 {
				t.Errorf("%s: Min %v above Max %v", what, st.Min, st.Max)
			}
			if st.Nulls < -1 || st.Rows < -1 || (st.Rows >= 0 && st.Nulls > st.Rows) {
				t.Errorf("%s: Nulls %d, Rows %d", what, st.Nulls, st.Rows)
			}
		}
	}
}

// statsKinds are the column types FuzzColumnStats converts statistics of.
var statsKinds = []orcType{
	{kind: kindBoolean}, {kind: kindByte}, {kind: kindShort}, {kind: kindInt}, {kind: kindLong},
	{kind: kindFloat}, {kind: kindDouble}, {kind: kindString}, {kind: kindVarchar}, {kind: kindChar},
	{kind: kindBinary}, {kind: kindDate}, {kind: kindTimestamp}, {kind: kindTimestampInstant},
	{kind: kindDecimal, precision: 10, scale: 3, hasPrecision: true}, {kind: kindDecimal},
	{kind: kindDecimal, precision: 38, scale: 38, hasPrecision: true},
}

// FuzzColumnStats decodes one column's ColumnStatistics, as the stripe's
// and the file's, into filter.ColumnStats of each column type.
func FuzzColumnStats(f *testing.F) {
	f.Add([]byte(counts(5, true).b(2, pb(nil).s(1, 1).s(2, 2))), uint8(3), uint8(6))
	f.Add([]byte(counts(5, true).b(6, pb(nil).str(1, "-1.5").str(2, "99999.9999"))), uint8(14), uint8(6))
	f.Add([]byte(counts(5, true).b(9, pb(nil).s(3, -1).s(4, 1).u(5, 1).u(6, 1000000))), uint8(12), uint8(6))
	f.Add([]byte(counts(5, true).b(3, pb(nil).d(1, -1).d(2, 1e300).d(3, 0))), uint8(5), uint8(6))
	f.Add([]byte(counts(5, true).b(4, pb(nil).str(4, "a").str(5, "b"))), uint8(7), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, kind, version uint8) {
		col := statsKinds[int(kind)%len(statsKinds)]
		checkStatsInvariants(t, statsFile(col, uint32(version%8), 6, data))
	})
}
