package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// writeParquet writes rows (JSON, one object per row) of schema as a
// Parquet file with arrow-go's writer, the stored Arrow schema included.
func writeParquet(t testing.TB, schema *arrow.Schema, rows string, props ...parquet.WriterProperty) []byte {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props = append([]parquet.WriterProperty{parquet.WithDictionaryDefault(false)}, props...)
	err = pqarrow.WriteTable(tbl, &buf, 1<<20, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func openBytes(t testing.TB, data []byte) *File {
	t.Helper()
	f, err := Open(context.Background(), "t.parquet", newLendingSource(data), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func statsOf(t testing.TB, f *File, g int) filter.StatsMap {
	t.Helper()
	m, ok := f.GroupStats(g).(filter.StatsMap)
	if !ok {
		t.Fatalf("GroupStats(%d) is %T", g, f.GroupStats(g))
	}
	return m
}

// wantBounds checks a column's bounds by their text, and that they are of
// the column's type.
func wantBounds(t *testing.T, f *File, st filter.StatsMap, col, lo, hi string) {
	t.Helper()
	s, ok := st[col]
	if !ok {
		t.Errorf("%s: no statistics", col)
		return
	}
	if lo == "" && hi == "" {
		if s.Min != nil || s.Max != nil {
			t.Errorf("%s: bounds [%v, %v], want none", col, s.Min, s.Max)
		}
		return
	}
	if s.Min == nil || s.Max == nil {
		t.Errorf("%s: bounds [%v, %v], want [%s, %s]", col, s.Min, s.Max, lo, hi)
		return
	}
	if s.Min.String() != lo || s.Max.String() != hi {
		t.Errorf("%s: bounds [%v, %v], want [%s, %s]", col, s.Min, s.Max, lo, hi)
	}
	if typ := columnType(f, col); !arrow.TypeEqual(s.Min.DataType(), typ) || !arrow.TypeEqual(s.Max.DataType(), typ) {
		t.Errorf("%s: bounds typed %s, column is %s", col, s.Min.DataType(), typ)
	}
}

// columnType is a column's type as Bind types its literals.
func columnType(f *File, col string) arrow.DataType {
	var typ arrow.DataType
	fields := f.Schema().Fields()
	for _, part := range strings.Split(col, ".") {
		for _, fld := range fields {
			if fld.Name == part {
				typ = fld.Type
				if st, ok := typ.(*arrow.StructType); ok {
					fields = st.Fields()
				}
			}
		}
	}
	if dt, ok := typ.(*arrow.DictionaryType); ok {
		return dt.ValueType
	}
	return typ
}

var typesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "bool", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "str", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "lstr", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true},
	{Name: "date", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, Nullable: true},
	{Name: "t32", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
	{Name: "t64", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
	{Name: "dec38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 0}, Nullable: true},
	{Name: "dec256", Type: &arrow.Decimal256Type{Precision: 50, Scale: 3}, Nullable: true},
	{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
	{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
}, nil)

const typesRows = `[
{"i8": -5, "i16": -300, "i32": -70000, "i64": -5000000000, "u8": 200, "u16": 60000, "u32": 4000000000, "u64": 18000000000000000000,
 "f16": -1.5, "f32": -2.5, "f64": -3.5, "bool": false, "str": "apple", "lstr": "zz", "bin": "AP8=", "fsb": "AP8=",
 "date": 18000, "ts_ms": 1000, "ts_us": -1, "ts_ns": 5, "t32": 1000, "t64": 2000, "dec": "-12.34", "dec38": "-99999999999999999999999999999999999999",
 "dec256": "-1234567890123456789012345678901234567.890", "s": {"a": 7}, "l": [1, 2]},
{"i8": 7, "i16": 300, "i32": 70000, "i64": 5000000000, "u8": 1, "u16": 1, "u32": 1, "u64": 1,
 "f16": 2, "f32": 2.5, "f64": 3.5, "bool": true, "str": "cherry", "lstr": "aa", "bin": "/wA=", "fsb": "/wA=",
 "date": 18001, "ts_ms": 2000, "ts_us": 1, "ts_ns": 6, "t32": 3000, "t64": 4000, "dec": "56.78", "dec38": "99999999999999999999999999999999999999",
 "dec256": "1234567890123456789012345678901234567.890", "s": null, "l": null},
{}
]`

// TestGroupStatsTypes: each Parquet type that pqarrow maps gets bounds of
// its Arrow type; unsigned integers compare unsigned.
func TestGroupStatsTypes(t *testing.T) {
	f := openBytes(t, writeParquet(t, typesSchema, typesRows))
	st := statsOf(t, f, 0)
	want := [][3]string{
		{"i8", "-5", "7"}, {"i16", "-300", "300"}, {"i32", "-70000", "70000"}, {"i64", "-5000000000", "5000000000"},
		{"u8", "1", "200"}, {"u16", "1", "60000"}, {"u32", "1", "4000000000"}, {"u64", "1", "18000000000000000000"},
		{"f16", "-1.5", "2"}, {"f32", "-2.5", "2.5"}, {"f64", "-3.5", "3.5"}, {"bool", "false", "true"},
		{"str", "apple", "cherry"}, {"lstr", "aa", "zz"}, {"bin", "\x00\xff", "\xff\x00"}, {"fsb", "\x00\xff", "\xff\x00"},
		{"date", "2019-04-14", "2019-04-15"},
		{"ts_ms", "1970-01-01 00:00:01Z", "1970-01-01 00:00:02Z"},
		{"ts_us", "1969-12-31 23:59:59.999999", "1970-01-01 00:00:00.000001"},
		{"t32", "00:00:01", "00:00:03"}, {"t64", "00:00:00.002", "00:00:00.004"},
		{"dec", "-12.34", "56.78"},
		{"dec38", "-99999999999999999999999999999999999999", "99999999999999999999999999999999999999"},
		{"dec256", "-1234567890123456789012345678901234567.89", "1234567890123456789012345678901234567.89"},
		{"s.a", "7", "7"},
	}
	for _, w := range want {
		wantBounds(t, f, st, w[0], w[1], w[2])
	}
	if s := st["ts_ns"]; s.Min == nil || !arrow.TypeEqual(s.Min.DataType(), columnType(f, "ts_ns")) {
		t.Errorf("ts_ns: min %v, want a timestamp[ns, Europe/Paris]", s.Min)
	}
	for _, c := range []string{"i8", "str", "dec", "ts_ms"} {
		if s := st[c]; s.Nulls != 1 || s.Rows != 3 || s.NaN {
			t.Errorf("%s: nulls=%d rows=%d nan=%v, want 1, 3, false", c, s.Nulls, s.Rows, s.NaN)
		}
	}
	if s := st["s.a"]; s.Nulls != 2 { // the struct's nulls count as the leaf's
		t.Errorf("s.a: nulls=%d, want 2", s.Nulls)
	}
	if _, ok := st["l"]; ok {
		t.Errorf("list column l has statistics")
	}
	if s := st["f64"]; !s.NaN { // arrow-go writes no nan_count
		t.Errorf("f64: NaN false without a nan_count")
	}
}

// leaf is the index of a leaf column by dotted path.
func leaf(t *testing.T, f *File, path string) int {
	t.Helper()
	i := f.pf.MetaData().Schema.ColumnIndexByName(path)
	if i < 0 {
		t.Fatalf("no column %s", path)
	}
	return i
}

// undefinedOrders makes the footer say nothing of column orders, as
// writers before parquet-format 2.4 did.
func undefinedOrders(t *testing.T, f *File) {
	md := f.pf.MetaData()
	orders := make([]parquet.ColumnOrder, md.Schema.NumColumns())
	for i := range orders {
		orders[i] = parquet.ColumnOrders.Undefined
	}
	if err := md.Schema.UpdateColumnOrders(orders); err != nil {
		t.Fatal(err)
	}
}

var signedDeprecated = map[string]bool{
	"i8": true, "i16": true, "i32": true, "i64": true, "f32": true, "f64": true, "bool": true,
	"date": true, "ts_ms": true, "ts_us": true, "ts_ns": true, "t32": true, "t64": true, "s.a": true,
}

// TestGroupStatsDeprecatedMinMax: a footer with only the deprecated
// min/max (and no column orders) keeps them for the types whose order is
// signed, and drops them for unsigned integers, byte arrays, decimals and
// float16, which old writers compared wrongly.
func TestGroupStatsDeprecatedMinMax(t *testing.T) {
	f := openBytes(t, writeParquet(t, typesSchema, typesRows))
	md := f.pf.MetaData()
	for _, cc := range md.RowGroups[0].Columns {
		if st := cc.MetaData.Statistics; st != nil {
			st.Min, st.Max, st.MinValue, st.MaxValue = st.MinValue, st.MaxValue, nil, nil
		}
	}
	undefinedOrders(t, f)
	st := statsOf(t, f, 0)
	for name, s := range st {
		if has := s.Min != nil; has != signedDeprecated[name] {
			t.Errorf("%s: bounds [%v, %v]; want bounds: %v", name, s.Min, s.Max, signedDeprecated[name])
		}
	}
	if s := st["i32"]; s.Min.String() != "-70000" || s.Max.String() != "70000" {
		t.Errorf("i32: [%v, %v]", s.Min, s.Max)
	}
}

// TestGroupStatsNeedColumnOrder: min_value/max_value without column
// orders are undefined (parquet.thrift), so they are not used; arrow-go
// also writes the deprecated min/max for signed types, which remain.
func TestGroupStatsNeedColumnOrder(t *testing.T) {
	f := openBytes(t, writeParquet(t, typesSchema, typesRows))
	undefinedOrders(t, f)
	for name, s := range statsOf(t, f, 0) {
		if has := s.Min != nil; has != signedDeprecated[name] {
			t.Errorf("%s: bounds [%v, %v]; want bounds: %v", name, s.Min, s.Max, signedDeprecated[name])
		}
	}
}

// TestGroupStatsMissing: no statistics is unknown, but for the rows.
func TestGroupStatsMissing(t *testing.T) {
	f := openBytes(t, writeParquet(t, typesSchema, typesRows, parquet.WithStats(false)))
	for name, s := range statsOf(t, f, 0) {
		if s.Min != nil || s.Max != nil || s.Nulls != -1 || s.Rows != 3 {
			t.Errorf("%s: %+v, want unknown with 3 rows", name, s)
		}
		if float := name == "f16" || name == "f32" || name == "f64"; s.NaN != float {
			t.Errorf("%s: NaN %v", name, s.NaN)
		}
	}
}

// TestGroupStatsFooterFaults: each thing a footer can get wrong, and what
// is left of the statistics.
func TestGroupStatsFooterFaults(t *testing.T) {
	data := writeParquet(t, typesSchema, typesRows)
	nan64 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))
	cases := []struct {
		name, col string
		mutate    func(f *File, col int)
		check     func(s filter.ColumnStats) bool
	}{
		{"no min or max, but null_count: counts only", "i32", func(f *File, c int) {
			st := f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics
			st.MinValue, st.Min, st.Max = nil, nil, nil
		}, func(s filter.ColumnStats) bool { return s.Min == nil && s.Max == nil && s.Nulls == 1 && s.Rows == 3 }},
		{"a NaN max: no bounds", "f64", func(f *File, c int) {
			f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics.MaxValue = nan64
		}, func(s filter.ColumnStats) bool { return s.Min == nil && s.Max == nil && s.NaN }},
		{"a NaN min: no bounds", "f64", func(f *File, c int) {
			f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics.MinValue = nan64
		}, func(s filter.ColumnStats) bool { return s.Min == nil && s.Max == nil }},
		{"min above max: no bounds", "i32", func(f *File, c int) {
			st := f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics
			st.MinValue, st.MaxValue = st.MaxValue, st.MinValue
		}, func(s filter.ColumnStats) bool { return s.Min == nil && s.Max == nil && s.Nulls == 1 }},
		{"a bound of the wrong size: no bounds", "i64", func(f *File, c int) {
			f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics.MinValue = []byte{1, 2, 3}
		}, func(s filter.ColumnStats) bool { return s.Min == nil && s.Max == nil }},
		{"nan_count 0: no NaN", "f64", func(f *File, c int) {
			f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics.NanCount = new(int64)
		}, func(s filter.ColumnStats) bool { return !s.NaN && s.Min != nil }},
		{"nan_count 2: NaN", "f32", func(f *File, c int) {
			n := int64(2)
			f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics.NanCount = &n
		}, func(s filter.ColumnStats) bool { return s.NaN && s.Min != nil }},
		{"null_count above the rows: unknown", "i32", func(f *File, c int) {
			n := int64(4)
			f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics.NullCount = &n
		}, func(s filter.ColumnStats) bool { return s.Nulls == -1 }},
		{"values and rows disagree: rows unknown", "i32", func(f *File, c int) {
			f.pf.MetaData().RowGroups[0].Columns[c].MetaData.NumValues = 99
		}, func(s filter.ColumnStats) bool { return s.Rows == -1 && s.Min != nil }},
		{"no statistics struct", "str", func(f *File, c int) {
			f.pf.MetaData().RowGroups[0].Columns[c].MetaData.Statistics = nil
		}, func(s filter.ColumnStats) bool { return s.Min == nil && s.Nulls == -1 && s.Rows == 3 }},
		{"encrypted column: unknown", "str", func(f *File, c int) {
			cm := reflect.ValueOf(f.pf.MetaData().RowGroups[0].Columns[c]).Elem().FieldByName("CryptoMetadata")
			cm.Set(reflect.New(cm.Type().Elem()))
		}, func(s filter.ColumnStats) bool { return s.Min == nil && s.Nulls == -1 && s.Rows == -1 }},
	}
	for _, c := range cases {
		f := openBytes(t, data)
		c.mutate(f, leaf(t, f, c.col))
		if s := statsOf(t, f, 0)[c.col]; !c.check(s) {
			t.Errorf("%s: %s: %+v", c.name, c.col, s)
		}
	}
}

// TestGroupStatsWriters: the bounds of writers with known statistics
// bugs are dropped for the types they got wrong.
func TestGroupStatsWriters(t *testing.T) {
	cases := []struct {
		writer  string
		dropped []string
		kept    []string
	}{
		// PARQUET-251: strings compared as signed bytes.
		{"parquet-mr version 1.7.0 (build x)", []string{"str", "bin", "fsb", "u32", "dec"}, []string{"i32", "f64", "date"}},
		// Before 1.10.0 every unsigned order was signed (PARQUET-686).
		{"parquet-mr version 1.9.0", []string{"str", "u8", "u64"}, []string{"i64", "bool", "dec"}},
		{"parquet-mr version 1.10.0", nil, []string{"str", "u32", "dec", "i32"}},
		{"parquet-cpp version 1.2.0", []string{"str", "u16"}, []string{"i16"}},
		// PARQUET-1655: decimals in byte arrays.
		{"parquet-cpp-arrow version 3.0.0", []string{"dec", "dec256"}, []string{"str", "i32"}},
		{"parquet-cpp-arrow version 4.0.0", nil, []string{"dec", "dec256", "str"}},
		{"", nil, []string{"str", "dec", "u32"}},
	}
	for _, c := range cases {
		f := openBytes(t, writeParquet(t, typesSchema, typesRows, parquet.WithCreatedBy(c.writer)))
		st := statsOf(t, f, 0)
		for _, col := range c.dropped {
			if s := st[col]; s.Min != nil || s.Max != nil || s.Nulls != 1 {
				t.Errorf("%q: %s: %+v, want counts only", c.writer, col, s)
			}
		}
		for _, col := range c.kept {
			if s := st[col]; s.Min == nil || s.Max == nil {
				t.Errorf("%q: %s: no bounds", c.writer, col)
			}
		}
	}
}

// TestGroupStatsFile: the whole file merges its row groups; a row group
// without statistics makes the file's bounds unknown, an all-null one
// does not.
func TestGroupStatsFile(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	data := writeParquet(t, schema, `[{"x": 5}, {"x": -2}, {"x": null}, {"x": null}, {"x": 9}, {"x": 1}]`, parquet.WithMaxRowGroupLength(2))
	f := openBytes(t, data)
	if n := f.pf.NumRowGroups(); n != 3 {
		t.Fatalf("%d row groups, want 3", n)
	}
	if s := statsOf(t, f, 1)["x"]; s.Min != nil || s.Nulls != 2 || s.Rows != 2 {
		t.Errorf("all-null group: %+v", s)
	}
	if s := statsOf(t, f, -1)["x"]; s.Min.String() != "-2" || s.Max.String() != "9" || s.Nulls != 2 || s.Rows != 6 {
		t.Errorf("file: %+v", s)
	}
	for _, g := range []int{-2, 3, 100} {
		if _, ok := f.GroupStats(g).ColumnStats("x"); ok {
			t.Errorf("GroupStats(%d) knows x", g)
		}
	}
	f = openBytes(t, data)
	f.pf.MetaData().RowGroups[2].Columns[0].MetaData.Statistics = nil
	if s := statsOf(t, f, -1)["x"]; s.Min != nil || s.Max != nil || s.Nulls != -1 || s.Rows != 6 {
		t.Errorf("file with a group without statistics: %+v", s)
	}
	// What MayMatch makes of it, through the file's statistics.
	p, err := filter.Bind(&filter.Compare{Op: filter.Gt, Left: &filter.Column{Path: []string{"x"}}, Right: &filter.Literal{Value: filter.Number("9")}}, f.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if g := openBytes(t, data); p.MayMatch(g.GroupStats(-1)) || p.MayMatch(g.GroupStats(0)) || p.MayMatch(g.GroupStats(1)) || p.MayMatch(g.GroupStats(2)) {
		t.Errorf("x > 9 not pruned")
	}
}

// corpusDir is the shared test data, or "" (tests skip).
func corpusDir() string {
	dir := os.Getenv("SCAND_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

func openCorpus(t *testing.T, rel string) *File {
	t.Helper()
	dir := corpusDir()
	if dir == "" {
		t.Skip("no test data (SCAND_TESTDATA)")
	}
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Skip(err)
	}
	return openBytes(t, data)
}

// TestGroupStatsCorpus pins what scand derives from files of other
// writers' edge cases.
func TestGroupStatsCorpus(t *testing.T) {
	type want struct {
		col, lo, hi string // lo == hi == "": no bounds
		nulls, rows int64
		nan         bool
	}
	cases := []struct {
		file string
		g    int
		want []want
	}{
		// pyarrow 0.8 wrote NaN as the max.
		{"parquet-testing/nan_in_stats.parquet", 0, []want{{"x", "", "", 0, 2, true}}},
		// parquet-rs truncates to a prefix (min) and a prefix with its last
		// byte raised (max); still bounds of the values.
		{"parquet-testing/binary_truncated_min_max.parquet", 0, []want{
			{"utf8_full_truncation", "Al", "Kf", 0, 12, false},
			{"utf8_partial_truncation", "Al", "🚀Kevin Bacon", 0, 12, false},
			{"binary_full_truncation", "Al", "Kf", 0, 12, false},
		}},
		{"parquet-testing/float16_zeros_and_nans.parquet", 0, []want{{"x", "-0", "0", 1, 3, true}}},
		{"parquet-testing/float16_nonzeros_and_nans.parquet", 0, []want{{"x", "-2", "2", 1, 8, true}}},
		// nan_count 0 proves there is no NaN; the IEEE 754 total order is
		// not one scand reads min_value/max_value in.
		{"parquet-testing/floating_orders_nan_count.parquet", 0, []want{
			{"double_typedef", "-2", "5", 0, 10, false},
			{"float16_typedef", "-2", "5", 0, 10, false},
			{"float16_ieee754", "", "", 0, 10, false},
		}},
		{"parquet-testing/int96_from_spark.parquet", 0, []want{{"a", "", "", 1, 6, false}}},
		{"parquet-testing/data_index_bloom_encoding_stats.parquet", 0, []want{{"String", "Hello", "today", 0, 14, false}}},
		// parquet-mr 1.8.2 wrote only the deprecated min/max: not trusted
		// for decimals.
		{"parquet-testing/int32_decimal.parquet", 0, []want{{"value", "", "", 0, 24, false}}},
		{"parquet-testing/int64_decimal.parquet", 0, []want{{"value", "", "", 0, 24, false}}},
		{"parquet-testing/fixed_length_decimal.parquet", 0, []want{{"value", "", "", 0, 24, false}}},
		{"parquet-testing/byte_array_decimal.parquet", 0, []want{{"value", "", "", -1, 24, false}}},
		// parquet-mr 1.8.1: ints and booleans kept, strings dropped.
		{"parquet-testing/datapage_v2.snappy.parquet", 0, []want{{"a", "", "", 1, 5, false}, {"b", "1", "5", 0, 5, false}, {"d", "false", "true", 0, 5, false}}},
		{"parquet-testing/sort_columns.parquet", -1, []want{{"a", "1", "2", 2, 6, false}, {"b", "a", "c", 0, 6, false}}},
	}
	for _, c := range cases {
		f := openCorpus(t, c.file)
		st := statsOf(t, f, c.g)
		for _, w := range c.want {
			wantBounds(t, f, st, w.col, w.lo, w.hi)
			if s := st[w.col]; s.Nulls != w.nulls || s.Rows != w.rows || s.NaN != w.nan {
				t.Errorf("%s g%d %s: nulls=%d rows=%d nan=%v, want %d, %d, %v", c.file, c.g, w.col, s.Nulls, s.Rows, s.NaN, w.nulls, w.rows, w.nan)
			}
		}
	}
}

// TestGroupStatsNeverPruneARow reads every Parquet file of the corpus that
// scand reads and, for values of its columns, checks that predicates the
// value's row satisfies (x = v, x <= v, x >= v, x IN (v), starts_with and
// LIKE of a prefix, x IS NULL) are not pruned by the row group's
// statistics or the file's.
func TestGroupStatsNeverPruneARow(t *testing.T) {
	dir := corpusDir()
	if dir == "" {
		t.Skip("no test data (SCAND_TESTDATA)")
	}
	var files []string
	for _, pat := range []string{"parquet-testing/*.parquet", "parquet-testing/geospatial/*.parquet", "arrow-testing/parquet/*.parquet", "arrow-testing/parquet/*/*.parquet"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	checked, bounded := 0, 0
	for _, path := range files {
		if strings.Contains(path, "large_string_map") { // > 2 GiB decoded
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Open(context.Background(), filepath.Base(path), newLendingSource(data), memory.DefaultAllocator)
		if err != nil {
			continue // refused files are tested elsewhere
		}
		c, b := checkRowsKept(t, f)
		checked, bounded = checked+c, bounded+b
		f.Close()
	}
	t.Logf("%d files, %d predicates checked, %d on columns with bounds", len(files), checked, bounded)
	if bounded < 1000 {
		t.Errorf("only %d predicates met bounds", bounded)
	}
}

// checkRowsKept checks one file (see TestGroupStatsNeverPruneARow).
func checkRowsKept(t *testing.T, f *File) (checked, bounded int) {
	p, err := f.Project(nil)
	if err != nil {
		return 0, 0
	}
	whole := f.GroupStats(-1)
	for g := range p.Groups {
		st := f.GroupStats(g)
		err := f.Read(context.Background(), p, scanner.ReadOptions{Groups: []int{g}, Mem: memory.DefaultAllocator}, func(rec arrow.RecordBatch) error {
			defer rec.Release()
			for name, s := range st.(filter.StatsMap) {
				arr := columnArray(rec, name)
				if arr == nil {
					continue
				}
				n := checkValues(t, f, name, arr, st, whole)
				checked += n
				if s.Min != nil {
					bounded += n
				}
			}
			return nil
		})
		if err != nil {
			return checked, bounded // unreadable files are tested elsewhere
		}
	}
	return checked, bounded
}

// columnArray finds a column of rec by dotted path through structs.
func columnArray(rec arrow.RecordBatch, name string) arrow.Array {
	parts := strings.Split(name, ".")
	idx := rec.Schema().FieldIndices(parts[0])
	if len(idx) != 1 {
		return nil
	}
	arr := rec.Column(idx[0])
	for _, p := range parts[1:] {
		st, ok := arr.(*array.Struct)
		if !ok {
			return nil
		}
		i, ok := st.DataType().(*arrow.StructType).FieldIdx(p)
		if !ok {
			return nil
		}
		arr = st.Field(i)
	}
	return arr
}

// checkValues checks predicates true of some rows of arr (64 at most).
func checkValues(t *testing.T, f *File, name string, arr arrow.Array, group, whole filter.StatsSource) int {
	col := &filter.Column{Path: strings.Split(name, ".")}
	n := 0
	step := max(1, arr.Len()/64)
	for i := 0; i < arr.Len(); i += step {
		var exprs []filter.Expr
		if arr.IsNull(i) {
			exprs = append(exprs, &filter.IsNull{Term: col})
		} else if v, err := scalar.GetScalar(arr, i); err == nil {
			exprs = matchingExprs(col, v)
		}
		for _, e := range exprs {
			p, err := filter.Bind(e, f.Schema())
			if err != nil {
				continue // a type Bind does not take literals of
			}
			n++
			if !p.MayMatch(group) || !p.MayMatch(whole) {
				t.Errorf("%s: %s pruned, but row %d of a group has %s = %v", f.name, p.Expr(), i, name, arr.ValueStr(i))
			}
		}
	}
	return n
}

// matchingExprs are predicates true where the column's value is v.
func matchingExprs(col *filter.Column, v scalar.Scalar) []filter.Expr {
	if filter.IsNaN(v) {
		return []filter.Expr{&filter.IsNull{Term: col, Negated: true}}
	}
	lit := &filter.Literal{Value: v}
	out := []filter.Expr{
		&filter.Compare{Op: filter.Eq, Left: col, Right: lit},
		&filter.Compare{Op: filter.Le, Left: col, Right: lit},
		&filter.Compare{Op: filter.Ge, Left: col, Right: lit},
		&filter.In{Term: col, Values: []*filter.Literal{lit}},
	}
	if s, ok := v.(*scalar.String); ok {
		b := s.Data()
		prefix := string(b[:len(b)/2])
		out = append(out, &filter.StartsWith{Term: col, Prefix: prefix},
			&filter.Like{Term: col, Pattern: likeEscape(prefix) + "%"})
	}
	return out
}

func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}
