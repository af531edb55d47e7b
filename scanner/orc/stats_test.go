package orc

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// observed is what a group's decoded values of one column really are.
type observed struct {
	rows, nulls int64
	min, max    any // of the non-null, non-NaN values; nil when none
	nan         bool
}

// goValue gives an element, or a scalar, as a value that compare orders:
// int64 (integers, dates, timestamps), float64, string, bool or
// decimal128.Num.
func goValue(v any) any {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case arrow.Date32:
		return int64(x)
	case arrow.Timestamp:
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	}
	return v
}

// compare orders two goValues of the same kind.
func compare(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmp3(x < b.(int64), x > b.(int64))
	case float64:
		return cmp3(x < b.(float64), x > b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		return cmp3(!x && b.(bool), x && !b.(bool))
	case decimal128.Num:
		return x.Cmp(b.(decimal128.Num))
	}
	panic(fmt.Sprintf("compare %T", a))
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

// scalarValue unwraps a statistics bound.
func scalarValue(s scalar.Scalar) any {
	switch x := s.(type) {
	case *scalar.Int8:
		return goValue(x.Value)
	case *scalar.Int16:
		return goValue(x.Value)
	case *scalar.Int32:
		return goValue(x.Value)
	case *scalar.Int64:
		return x.Value
	case *scalar.Float32:
		return goValue(x.Value)
	case *scalar.Float64:
		return x.Value
	case *scalar.String:
		return string(x.Data())
	case *scalar.Boolean:
		return x.Value
	case *scalar.Date32:
		return goValue(x.Value)
	case *scalar.Timestamp:
		return goValue(x.Value)
	case *scalar.Decimal128:
		return x.Value
	}
	panic(fmt.Sprintf("bound of type %T", s))
}

// elemValue reads element i of a primitive array; ok is false for types
// statistics give no bounds for.
func elemValue(a arrow.Array, i int) (v any, nan, ok bool) {
	switch x := a.(type) {
	case *array.Int8:
		return goValue(x.Value(i)), false, true
	case *array.Int16:
		return goValue(x.Value(i)), false, true
	case *array.Int32:
		return goValue(x.Value(i)), false, true
	case *array.Int64:
		return x.Value(i), false, true
	case *array.Float32:
		f := float64(x.Value(i))
		return f, math.IsNaN(f), true
	case *array.Float64:
		f := x.Value(i)
		return f, math.IsNaN(f), true
	case *array.String:
		return x.Value(i), false, true
	case *array.Boolean:
		return x.Value(i), false, true
	case *array.Date32:
		return goValue(x.Value(i)), false, true
	case *array.Timestamp:
		return goValue(x.Value(i)), false, true
	case *array.Decimal128:
		return x.Value(i), false, true
	}
	return nil, false, false
}

// observe folds column path (field indexes from the record down through
// structs) of rec into o. A row is null in a struct field when the field
// or any struct above it is null.
func observe(o *observed, rec arrow.RecordBatch, path []int) {
	arrs := []arrow.Array{rec.Column(path[0])}
	for _, idx := range path[1:] {
		arrs = append(arrs, arrs[len(arrs)-1].(*array.Struct).Field(idx))
	}
	leaf := arrs[len(arrs)-1]
	o.rows += rec.NumRows()
	for i := 0; i < int(rec.NumRows()); i++ {
		null := false
		for _, a := range arrs {
			null = null || a.IsNull(i)
		}
		if null {
			o.nulls++
			continue
		}
		v, nan, ok := elemValue(leaf, i)
		if !ok {
			continue
		}
		if nan {
			o.nan = true
			continue
		}
		if o.min == nil || compare(v, o.min) < 0 {
			o.min = v
		}
		if o.max == nil || compare(v, o.max) > 0 {
			o.max = v
		}
	}
}

// columnPaths lists the statistics names of a schema with their field
// index paths.
func columnPaths(sc *arrow.Schema) map[string][]int {
	out := map[string][]int{}
	var walk func(prefix string, path []int, f arrow.Field)
	walk = func(prefix string, path []int, f arrow.Field) {
		name := prefix + f.Name
		out[name] = path
		if st, ok := f.Type.(*arrow.StructType); ok {
			for i, c := range st.Fields() {
				walk(name+".", append(append([]int(nil), path...), i), c)
			}
		}
	}
	for i, f := range sc.Fields() {
		walk("", []int{i}, f)
	}
	return out
}

// observeGroup reads stripe g (or all stripes, g = -1) and observes
// every column.
func observeGroup(t *testing.T, f *File, g int) map[string]*observed {
	t.Helper()
	p, err := f.Project(nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := scanner.ReadOptions{BatchRows: 4096, Mem: memory.DefaultAllocator}
	if g >= 0 {
		opts.Groups = []int{g}
	}
	paths := columnPaths(p.Schema)
	obs := map[string]*observed{}
	for name := range paths {
		obs[name] = &observed{}
	}
	err = f.Read(context.Background(), p, opts, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		for name, path := range paths {
			observe(obs[name], rec, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("stripe %d: %v", g, err)
	}
	return obs
}

// checkSound asserts that statistics claim nothing untrue of the values
// observed, and counts the claims made (bounds and null counts).
func checkSound(t *testing.T, what string, st filter.ColumnStats, o *observed) (claims int) {
	t.Helper()
	if st.Rows != -1 && st.Rows != o.rows {
		t.Errorf("%s: Rows %d, read %d", what, st.Rows, o.rows)
	}
	if st.Nulls != -1 {
		claims++
		if st.Nulls != o.nulls {
			t.Errorf("%s: Nulls %d, read %d", what, st.Nulls, o.nulls)
		}
	}
	if !st.NaN && o.nan {
		t.Errorf("%s: NaN false, but a NaN was read", what)
	}
	if st.Min != nil {
		claims++
		if o.min != nil && compare(scalarValue(st.Min), o.min) > 0 {
			t.Errorf("%s: Min %v above the least value read %v", what, st.Min, o.min)
		}
	}
	if st.Max != nil {
		claims++
		if o.max != nil && compare(scalarValue(st.Max), o.max) < 0 {
			t.Errorf("%s: Max %v below the greatest value read %v", what, st.Max, o.max)
		}
	}
	return claims
}

// checkTypes asserts that bounds have exactly the column's Arrow type.
func checkBoundTypes(t *testing.T, what string, st filter.ColumnStats, dt arrow.DataType) {
	t.Helper()
	for _, b := range []scalar.Scalar{st.Min, st.Max} {
		if b != nil && !arrow.TypeEqual(b.DataType(), dt) {
			t.Errorf("%s: bound of type %v, column is %v", what, b.DataType(), dt)
		}
	}
}

// TestStatsSound reads every stripe of every example that opens and
// checks, for every column, that the stripe's and the file's statistics
// hold of the decoded values: Min and Max bound them, null counts and
// row counts match, and NaN is claimed absent only when none was read.
func TestStatsSound(t *testing.T) {
	dir := orcExamples(t)
	names, _ := filepath.Glob(filepath.Join(dir, "*.orc"))
	enc, _ := filepath.Glob(filepath.Join(dir, "encrypted", "*.orc"))
	names = append(names, enc...)
	sort.Strings(names)
	total := 0
	for _, path := range names {
		rel, _ := filepath.Rel(dir, path)
		if testing.Short() && fileSize(path) > 1<<20 {
			continue
		}
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := openBytes(t, rel, data)
			if err != nil {
				t.Skipf("does not open: %v", err)
			}
			claims := soundFile(t, f)
			t.Logf("%d claims (bounds and null counts) checked", claims)
			total += claims
		})
	}
	t.Logf("%d claims checked in all", total)
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// soundFile checks each stripe's and the whole file's statistics.
func soundFile(t *testing.T, f *File) (claims int) {
	t.Helper()
	types := map[string]arrow.DataType{}
	for _, fld := range f.Schema().Fields() {
		collectTypes(types, "", fld)
	}
	for g := -1; g < len(f.ft.stripes); g++ {
		src := f.GroupStats(g)
		for name, o := range observeGroup(t, f, g) {
			st, ok := src.ColumnStats(name)
			if !ok {
				t.Errorf("stripe %d: no statistics for %q", g, name)
				continue
			}
			what := fmt.Sprintf("stripe %d, %q", g, name)
			checkBoundTypes(t, what, st, types[name])
			claims += checkSound(t, what, st, o)
		}
	}
	return claims
}

func collectTypes(out map[string]arrow.DataType, prefix string, f arrow.Field) {
	out[prefix+f.Name] = f.Type
	if st, ok := f.Type.(*arrow.StructType); ok {
		for _, c := range st.Fields() {
			collectTypes(out, prefix+f.Name+".", c)
		}
	}
}

// TestStatsDump prints the statistics of the files named in
// $ORC_STATS_DUMP (comma separated, relative to orc-examples; "all" for
// every example), for eyeballing what is trusted and what is dropped.
func TestStatsDump(t *testing.T) {
	names := os.Getenv("ORC_STATS_DUMP")
	if names == "" {
		t.Skip("set ORC_STATS_DUMP")
	}
	dir := orcExamples(t)
	list := strings.Split(names, ",")
	if names == "all" {
		list, _ = filepath.Glob(filepath.Join(dir, "*.orc"))
	}
	for _, n := range list {
		n = strings.TrimPrefix(n, dir+"/")
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		f, err := openBytes(t, n, data)
		if err != nil {
			t.Logf("%s: %v", n, err)
			continue
		}
		t.Logf("%s: writer %d version %d, %d stripes, stripe stats err %v", n, f.ft.writer, f.ps.writerVersion, len(f.ft.stripes), f.statsErr)
		for g := -1; g < min(len(f.ft.stripes), 2); g++ {
			src := f.GroupStats(g)
			for _, c := range scanner.ColumnNames(f.Schema()) {
				st, _ := src.ColumnStats(c)
				t.Logf("  %d %s: min %v max %v nulls %d rows %d nan %v", g, c, st.Min, st.Max, st.Nulls, st.Rows, st.NaN)
			}
		}
	}
}

// want is one expected ColumnStats: bounds as strings (scalar's String),
// "" for nil.
type want struct {
	min, max    string
	nulls, rows int64
	nan         bool
}

func scalarString(s scalar.Scalar) string {
	if s == nil {
		return ""
	}
	return s.String()
}

func checkWant(t *testing.T, src filter.StatsSource, g int, col string, w want) {
	t.Helper()
	st, ok := src.ColumnStats(col)
	if !ok {
		t.Fatalf("stripe %d: no statistics for %q", g, col)
	}
	got := want{scalarString(st.Min), scalarString(st.Max), st.Nulls, st.Rows, st.NaN}
	if got != w {
		t.Errorf("stripe %d, %q: got %+v, want %+v", g, col, got, w)
	}
}

// TestGroupStatsExamples asserts exact statistics of the examples ORC's
// own tests check (TestOrcFile.testStripeLevelStats: stripes of 5000,
// 5000 and 1000 rows of int1 1, 2, 3; testStringAndBinaryStatistics).
func TestGroupStatsExamples(t *testing.T) {
	type groupWant struct {
		g    int
		cols map[string]want
	}
	cases := map[string][]groupWant{
		"TestOrcFile.testStripeLevelStats.orc": {
			{-1, map[string]want{"int1": {"1", "3", 0, 11000, false}, "string1": {"one", "two", 0, 11000, false}}},
			{0, map[string]want{"int1": {"1", "1", 0, 5000, false}, "string1": {"one", "one", 0, 5000, false}}},
			{1, map[string]want{"int1": {"2", "2", 0, 5000, false}, "string1": {"two", "two", 0, 5000, false}}},
			{2, map[string]want{"int1": {"3", "3", 0, 1000, false}, "string1": {"three", "three", 0, 1000, false}}},
		},
		"TestOrcFile.testStringAndBinaryStatistics.orc": {
			// Binary columns carry only a total length: no bounds.
			{0, map[string]want{"bytes1": {"", "", 1, 4, false}, "string1": {"bar", "hi", 1, 4, false}}},
		},
		"orc_split_elim_new.orc": {
			// Java omits minimumNanos when it is 0, so the minimum is
			// widened by 999,999 ns; maximumNanos is stored (0 + 1), so
			// the maximum is exact.
			{0, map[string]want{
				"ts":       {"1969-12-31 15:59:59.999000001", "1969-12-31 16:04:10", 0, 25000, false},
				"decimal1": {"0", "5.5", 0, 25000, false},
				"subtype":  {"0.8", "80", 0, 25000, true},
			}},
		},
	}
	for name, groups := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := openBytes(t, name, readExample(t, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, gw := range groups {
				src := f.GroupStats(gw.g)
				for col, w := range gw.cols {
					checkWant(t, src, gw.g, col, w)
				}
			}
			if _, ok := f.GroupStats(0).ColumnStats("no such column"); ok {
				t.Errorf("statistics for a column the file does not have")
			}
			if _, ok := f.GroupStats(len(f.ft.stripes)).ColumnStats("int1"); ok {
				t.Errorf("statistics for a stripe the file does not have")
			}
		})
	}
}
