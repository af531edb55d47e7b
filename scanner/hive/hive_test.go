package hive

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

func TestParse(t *testing.T) {
	tests := map[string]struct {
		path string
		want []Value
	}{
		"no partitions":      {"data/a.parquet", nil},
		"file name only":     {"k=v.parquet", nil},
		"one":                {"trips/city=Paris/a.parquet", []Value{{Key: "city", Text: "Paris"}}},
		"outermost first":    {"a=1/b=x/f.parquet", []Value{{Key: "a", Text: "1"}, {Key: "b", Text: "x"}}},
		"plain dirs skipped": {"plain/a=3/more/f.parquet", []Value{{Key: "a", Text: "3"}}},
		"first = splits":     {"k=v=w/f", []Value{{Key: "k", Text: "v=w"}}},
		"empty value":        {"k=/f", []Value{{Key: "k", Text: ""}}},
		"empty key":          {"=7/a=1/f", []Value{{Key: "", Text: "7"}, {Key: "a", Text: "1"}}},
		"null":               {"k=__HIVE_DEFAULT_PARTITION__/f", []Value{{Key: "k", Text: DefaultPartition, Null: true}}},
		"escaped null":       {"k=%5F%5FHIVE_DEFAULT_PARTITION%5F%5F/f", []Value{{Key: "k", Text: DefaultPartition, Null: true}}},
		"not quite null":     {"k=__HIVE_DEFAULT_PARTITION__x/f", []Value{{Key: "k", Text: "__HIVE_DEFAULT_PARTITION__x"}}},
		"decoded key":        {"a%20b=1/f", []Value{{Key: "a b", Text: "1"}}},
		"decoded value":      {"k=c%2Fd/f", []Value{{Key: "k", Text: "c/d"}}},
		"utf8 escape":        {"k=%E2%82%AC/f", []Value{{Key: "k", Text: "€"}}},
		"plus stays":         {"k=a+b/f", []Value{{Key: "k", Text: "a+b"}}},
		"bad escapes stay":   {"a=%zz/b=a%2/c=a%/f", []Value{{Key: "a", Text: "%zz"}, {Key: "b", Text: "a%2"}, {Key: "c", Text: "a%"}}},
		"not utf8 stays":     {"k=%ff/f", []Value{{Key: "k", Text: "%ff"}}},
		"absolute":           {"/srv/data/k=1/f", []Value{{Key: "k", Text: "1"}}},
		"s3 uri":             {"s3://bucket/t/k=1/j=a/part-0.parquet", []Value{{Key: "k", Text: "1"}, {Key: "j", Text: "a"}}},
		"s3 bucket only":     {"s3://bucket/f.parquet", nil},
		"directory":          {"k=1/", []Value{{Key: "k", Text: "1"}}},
		"repeated key":       {"a=1/a=2/f", []Value{{Key: "a", Text: "1"}, {Key: "a", Text: "2"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Parse(tc.path); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.path, got, tc.want)
			}
		})
	}
}

// pyarrowCases are what pyarrow 26.0.1 made of one key k whose files sat
// in k=<segment> directories: ds.dataset(root, partitioning="hive") gave
// the type, and to_table() the values (nil: null). Observed, not derived.
var pyarrowCases = []struct {
	segments []string
	typ      arrow.DataType
	values   []any
}{
	{[]string{"1", "2"}, i32, []any{int32(1), int32(2)}},
	{[]string{"-5", "3"}, i32, []any{int32(-5), int32(3)}},
	{[]string{"007", "8"}, i32, []any{int32(7), int32(8)}},
	{[]string{"-007", "-0", "00"}, i32, []any{int32(-7), int32(0), int32(0)}},
	{[]string{"00000000000000000000000001"}, i32, []any{int32(1)}},
	{[]string{"2147483647", "-2147483648"}, i32, []any{int32(2147483647), int32(-2147483648)}},
	{[]string{"2147483648"}, str, []any{"2147483648"}},
	{[]string{"-2147483649"}, str, []any{"-2147483649"}},
	{[]string{"9223372036854775807"}, str, []any{"9223372036854775807"}},
	{[]string{"0x10", "0X10", "0xabcDEF"}, i32, []any{int32(16), int32(16), int32(11259375)}},
	{[]string{"0xFFFFFFFF", "0x7FFFFFFF", "0x80000000"}, i32, []any{int32(-1), int32(2147483647), int32(-2147483648)}},
	{[]string{"0x00000001"}, i32, []any{int32(1)}},
	{[]string{"0x000000001"}, str, []any{"0x000000001"}},
	{[]string{"0x100000000"}, str, []any{"0x100000000"}},
	{[]string{"-0x10"}, str, []any{"-0x10"}},
	{[]string{"0x"}, str, []any{"0x"}},
	{[]string{"0x1g"}, str, []any{"0x1g"}},
	{[]string{"0b101"}, str, []any{"0b101"}},
	{[]string{"0o7"}, str, []any{"0o7"}},
	{[]string{"0x1F", "a"}, str, []any{"0x1F", "a"}},
	{[]string{"+5"}, str, []any{"+5"}},
	{[]string{" 5"}, str, []any{" 5"}},
	{[]string{"1 "}, str, []any{"1 "}},
	{[]string{"1_000"}, str, []any{"1_000"}},
	{[]string{"-"}, str, []any{"-"}},
	{[]string{"--1"}, str, []any{"--1"}},
	{[]string{"1-"}, str, []any{"1-"}},
	{[]string{"١"}, str, []any{"١"}}, // Arabic-Indic digit one
	{[]string{"１"}, str, []any{"１"}}, // fullwidth digit one
	{[]string{"1.5", "2"}, str, []any{"1.5", "2"}},
	{[]string{"1.0"}, str, []any{"1.0"}},
	{[]string{"1e3"}, str, []any{"1e3"}},
	{[]string{"NaN"}, str, []any{"NaN"}},
	{[]string{"2026-01-31"}, str, []any{"2026-01-31"}},
	{[]string{"2026-01-31T12:00:00"}, str, []any{"2026-01-31T12:00:00"}},
	{[]string{"true", "false"}, str, []any{"true", "false"}},
	{[]string{"null", "NULL"}, str, []any{"null", "NULL"}},
	{[]string{"abc"}, str, []any{"abc"}},
	{[]string{"1", "abc"}, str, []any{"1", "abc"}},
	{[]string{""}, str, []any{""}},
	{[]string{"5", ""}, str, []any{"5", ""}},
	{[]string{"%31"}, i32, []any{int32(1)}},
	{[]string{"%2D5"}, i32, []any{int32(-5)}},
	{[]string{"%2B5"}, str, []any{"+5"}},
	{[]string{"1%2E5"}, str, []any{"1.5"}},
	{[]string{"a%20b", "c%2Fd"}, str, []any{"a b", "c/d"}},
	{[]string{DefaultPartition, "3"}, i32, []any{nil, int32(3)}},
	{[]string{DefaultPartition, "abc"}, str, []any{nil, "abc"}},
	// pyarrow fails here ("No non-null segments were available"); scand
	// reads a string column of nulls.
	{[]string{DefaultPartition}, str, []any{nil}},
}

var (
	i32 = arrow.PrimitiveTypes.Int32
	str = arrow.BinaryTypes.String
)

func TestFieldsMatchPyarrow(t *testing.T) {
	for _, tc := range pyarrowCases {
		t.Run(strings.Join(tc.segments, ","), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var files [][]Value
			for _, s := range tc.segments {
				files = append(files, Parse("root/k="+s+"/part-0.parquet"))
			}
			fields := Fields(files)
			want := []arrow.Field{{Name: "k", Type: tc.typ, Nullable: true}}
			if !reflect.DeepEqual(fields, want) {
				t.Fatalf("Fields = %v, want %v", fields, want)
			}
			for i, vals := range files {
				if got := columnValue(t, mem, vals[0], fields[0].Type); !reflect.DeepEqual(got, tc.values[i]) {
					t.Errorf("value of k=%s = %#v, want %#v", tc.segments[i], got, tc.values[i])
				}
			}
		})
	}
}

// columnValue is the single value of a one-row Column of v.
func columnValue(t *testing.T, mem memory.Allocator, v Value, typ arrow.DataType) any {
	t.Helper()
	arr, err := Column(mem, v, typ, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	if arr.IsNull(0) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Int32:
		return a.Value(0)
	case *array.String:
		return a.Value(0)
	}
	t.Fatalf("unexpected array %T", arr)
	return nil
}

func TestFieldsOrderAndMissingKeys(t *testing.T) {
	// pyarrow, files in sorted path order "a=1/b=x", "b=y/a=2", "c=5",
	// "f.parquet": a int32, b string, c int32, all nullable.
	files := [][]Value{
		Parse("a=1/b=x/f.parquet"),
		Parse("b=y/a=2/f.parquet"),
		Parse("c=5/f.parquet"),
		Parse("f.parquet"),
	}
	want := []arrow.Field{
		{Name: "a", Type: i32, Nullable: true},
		{Name: "b", Type: str, Nullable: true},
		{Name: "c", Type: i32, Nullable: true},
	}
	if got := Fields(files); !reflect.DeepEqual(got, want) {
		t.Errorf("Fields = %v, want %v", got, want)
	}
	if got := Fields(nil); len(got) != 0 {
		t.Errorf("Fields(nil) = %v, want none", got)
	}
}

func TestStats(t *testing.T) {
	tests := map[string]struct {
		v                Value
		typ              arrow.DataType
		min              scalar.Scalar
		nulls, rows      int64
		nan, unsupported bool
	}{
		"int":          {v: Value{Key: "k", Text: "007"}, typ: i32, min: scalar.NewInt32Scalar(7), rows: -1},
		"hex":          {v: Value{Key: "k", Text: "0xFFFFFFFF"}, typ: i32, min: scalar.NewInt32Scalar(-1), rows: -1},
		"int64":        {v: Value{Key: "k", Text: "2147483648"}, typ: arrow.PrimitiveTypes.Int64, min: scalar.NewInt64Scalar(2147483648), rows: -1},
		"string":       {v: Value{Key: "k", Text: "Paris"}, typ: str, min: scalar.NewStringScalar("Paris"), rows: -1},
		"empty string": {v: Value{Key: "k", Text: ""}, typ: str, min: scalar.NewStringScalar(""), rows: -1},
		"null":         {v: Value{Key: "k", Text: DefaultPartition, Null: true}, typ: i32, nulls: 1, rows: 1},
		"date":         {v: Value{Key: "d", Text: "2026-01-31"}, typ: arrow.FixedWidthTypes.Date32, min: scalar.NewDate32Scalar(20484), rows: -1},
		"float":        {v: Value{Key: "f", Text: "1.5"}, typ: arrow.PrimitiveTypes.Float64, min: scalar.NewFloat64Scalar(1.5), rows: -1},
		"nan":          {v: Value{Key: "f", Text: "NaN"}, typ: arrow.PrimitiveTypes.Float64, rows: -1, nan: true},
		"not an int":   {v: Value{Key: "k", Text: "abc"}, typ: i32, unsupported: true},
		"out of range": {v: Value{Key: "k", Text: "2147483648"}, typ: i32, unsupported: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			st, err := Stats(tc.v, tc.typ)
			if tc.unsupported {
				if err == nil {
					t.Fatalf("Stats = %+v, want an error", st)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Nulls != tc.nulls || st.Rows != tc.rows || st.NaN != tc.nan {
				t.Errorf("Stats counts = nulls %d rows %d nan %v, want %d %d %v", st.Nulls, st.Rows, st.NaN, tc.nulls, tc.rows, tc.nan)
			}
			if !scalarEqual(st.Min, tc.min) || !scalarEqual(st.Max, tc.min) {
				t.Errorf("Stats min/max = %v/%v, want %v", st.Min, st.Max, tc.min)
			}
		})
	}
}

func scalarEqual(a, b scalar.Scalar) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return scalar.Equals(a, b)
}

func TestColumn(t *testing.T) {
	tests := map[string]struct {
		v    Value
		typ  arrow.DataType
		n    int
		want string // the array as arrow-go prints it
	}{
		"int32":           {Value{Key: "k", Text: "-7"}, i32, 3, "[-7 -7 -7]"},
		"string":          {Value{Key: "k", Text: "a b"}, str, 2, `["a b" "a b"]`},
		"empty string":    {Value{Key: "k", Text: ""}, str, 2, `["" ""]`},
		"large string":    {Value{Key: "k", Text: "x"}, arrow.BinaryTypes.LargeString, 2, `["x" "x"]`},
		"null int":        {Value{Key: "k", Null: true}, i32, 2, "[(null) (null)]"},
		"null string":     {Value{Key: "k", Null: true}, str, 2, "[(null) (null)]"},
		"zero rows":       {Value{Key: "k", Text: "1"}, i32, 0, "[]"},
		"zero null":       {Value{Key: "k", Null: true}, str, 0, "[]"},
		"many (doubling)": {Value{Key: "k", Text: "ab"}, str, 5, `["ab" "ab" "ab" "ab" "ab"]`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			arr, err := Column(mem, tc.v, tc.typ, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			defer arr.Release()
			if arr.Len() != tc.n || !arrow.TypeEqual(arr.DataType(), tc.typ) {
				t.Fatalf("Column = %d × %s, want %d × %s", arr.Len(), arr.DataType(), tc.n, tc.typ)
			}
			if got := arr.String(); got != tc.want {
				t.Errorf("Column = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestColumnErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for name, tc := range map[string]struct {
		v   Value
		typ arrow.DataType
		n   int
	}{
		"not an int":    {Value{Key: "k", Text: "x"}, i32, 1},
		"negative rows": {Value{Key: "k", Text: "1"}, i32, -1},
		"offsets":       {Value{Key: "k", Text: strings.Repeat("x", 1<<16)}, str, 1 << 16},
	} {
		if arr, err := Column(mem, tc.v, tc.typ, tc.n); err == nil {
			arr.Release()
			t.Errorf("%s: Column succeeded, want an error", name)
		}
	}
}

// A key repeated in a path reads its outermost value, as pyarrow does.
func TestByKeyOutermost(t *testing.T) {
	m := ByKey(Parse("p=1/q=x/p=2/f.parquet"))
	if len(m) != 2 || m["p"].Text != "1" || m["q"].Text != "x" {
		t.Errorf("ByKey = %v, want p=1 (the outermost) and q=x", m)
	}
}
