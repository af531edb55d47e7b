package orc

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// knownDifferences lists example files whose expected output this reader
// does not reproduce, and why. Keep it short and honest.
var knownDifferences = map[string]string{}

// sameRowsAs maps example files without an expected output to the
// expected output of a file written with the same rows.
var sameRowsAs = map[string]string{
	"TestVectorOrcFile.testZstd.0.12": "TestVectorOrcFile.testLz4",
}

// TestExpected reads every example that has expected rows
// (orc-examples/expected/*.jsn.gz, printed by ORC C++'s orc-contents) and
// compares them value by value.
func TestExpected(t *testing.T) {
	dir := orcExamples(t)
	exps, _ := filepath.Glob(filepath.Join(dir, "expected", "*.jsn.gz"))
	if len(exps) == 0 {
		t.Skip("no expected outputs")
	}
	type job struct{ base, expected string }
	var jobs []job
	for _, e := range exps {
		jobs = append(jobs, job{strings.TrimSuffix(filepath.Base(e), ".jsn.gz"), e})
	}
	// Files upstream has no expected output for, but which hold the same
	// rows as one that has (same generator and seed).
	for orcName, expName := range sameRowsAs {
		jobs = append(jobs, job{orcName, filepath.Join(dir, "expected", expName+".jsn.gz")})
	}
	passed := 0
	for _, j := range jobs {
		base, e := j.base, j.expected
		t.Run(base, func(t *testing.T) {
			if why, ok := knownDifferences[base]; ok {
				t.Skip(why)
			}
			data, err := os.ReadFile(filepath.Join(dir, base+".orc"))
			if err != nil {
				t.Skipf("no ORC file for %s: %v", base, err)
			}
			want := readExpected(t, e)
			objects := true
			if f, err := openBytes(t, base, data); err == nil {
				objects = f.ft.types[0].kind == kindStruct
			}
			// Small files are also read in batches of 1000 rows so that
			// they span several; large ones once, in batches of 5000 (the
			// JSON comparison, not decoding, dominates the test's time).
			batches := []int64{0, 1000}
			if len(want) > 12000 {
				batches = []int64{5000}
			}
			for _, batch := range batches {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				var got []any
				f, err := readFile(t, base, data, nil, batch, mem, func(rec arrow.RecordBatch) {
					got = append(got, recordJSON(rec, objects)...)
				})
				if err != nil {
					t.Fatalf("batch %d: %v", batch, err)
				}
				mem.AssertSize(t, 0)
				if int64(len(want)) != f.NumRows() && base != "TestOrcFile.emptyFile" {
					t.Errorf("footer says %d rows, expected file has %d", f.NumRows(), len(want))
				}
				if len(got) != len(want) {
					t.Fatalf("batch %d: got %d rows, want %d", batch, len(got), len(want))
				}
				for i := range want {
					if msg := diffJSON(want[i], got[i], ""); msg != "" {
						t.Fatalf("batch %d: row %d: %s\nwant %s\ngot  %s", batch, i, msg, show(want[i]), show(got[i]))
					}
				}
			}
			passed++
		})
	}
	t.Logf("%d of %d files with expected rows match", passed, len(jobs))
}

func readExpected(t *testing.T, path string) []any {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(zr, 1<<20))
	dec.UseNumber()
	var out []any
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 600 {
		b = append(b[:600], "..."...)
	}
	return string(b)
}

// floatVal is a float as decoded, compared with the printed expectation
// at the precision ORC's printer uses (%.7g for float, %.14g for double).
type floatVal struct {
	v    float64
	bits int
}

func (f floatVal) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(f.v, 'g', -1, f.bits)), nil
}

// recordJSON converts a batch to rows in the expected files' conventions.
func recordJSON(rec arrow.RecordBatch, objects bool) []any {
	out := make([]any, rec.NumRows())
	for i := range out {
		if !objects {
			out[i] = valueJSON(rec.Column(0), i)
			continue
		}
		row := map[string]any{}
		for c := 0; c < int(rec.NumCols()); c++ {
			row[rec.ColumnName(c)] = valueJSON(rec.Column(c), i)
		}
		out[i] = row
	}
	return out
}

func valueJSON(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return json.Number(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int16:
		return json.Number(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int32:
		return json.Number(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int64:
		return json.Number(strconv.FormatInt(a.Value(i), 10))
	case *array.Float32:
		return floatVal{float64(a.Value(i)), 32}
	case *array.Float64:
		return floatVal{a.Value(i), 64}
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		b := a.Value(i)
		l := make([]any, len(b))
		for j, x := range b {
			l[j] = json.Number(strconv.Itoa(int(x)))
		}
		return l
	case *array.Date32:
		return time.Unix(int64(a.Value(i))*86400, 0).UTC().Format("2006-01-02")
	case *array.Timestamp:
		ns := int64(a.Value(i))
		tm := time.Unix(0, ns).UTC()
		frac := strings.TrimRight(fmt.Sprintf("%09d", tm.Nanosecond()), "0")
		if frac == "" {
			frac = "0"
		}
		return tm.Format("2006-01-02 15:04:05") + "." + frac
	case *array.Decimal128:
		return json.Number(formatDecimal(a.Value(i), a.DataType().(*arrow.Decimal128Type).Scale))
	case *array.Map:
		keys, items := a.Keys(), a.Items()
		start, end := a.ValueOffsets(i)
		l := []any{}
		for j := start; j < end; j++ {
			l = append(l, map[string]any{"key": valueJSON(keys, int(j)), "value": valueJSON(items, int(j))})
		}
		return l
	case *array.List:
		start, end := a.ValueOffsets(i)
		l := []any{}
		for j := start; j < end; j++ {
			l = append(l, valueJSON(a.ListValues(), int(j)))
		}
		return l
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		m := map[string]any{}
		for f := 0; f < a.NumField(); f++ {
			m[st.Field(f).Name] = valueJSON(a.Field(f), i)
		}
		return m
	case *array.SparseUnion:
		code := a.ChildID(i)
		child := a.Field(code)
		if child.IsNull(i) {
			// Arrow unions have no validity bitmap: a null union is variant
			// 0 holding a null, so {"tag": 0, "value": null} and null look
			// the same (diffJSON accepts either); other tags are certain.
			if code == 0 {
				return nil
			}
			return map[string]any{"tag": json.Number(strconv.Itoa(code)), "value": nil}
		}
		return map[string]any{"tag": json.Number(strconv.Itoa(code)), "value": valueJSON(child, i)}
	}
	return fmt.Sprintf("<unsupported %s>", a.DataType())
}

func formatDecimal(n decimal128.Num, scale int32) string {
	s := n.BigInt().String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if scale > 0 {
		for int32(len(s)) <= scale {
			s = "0" + s
		}
		s = s[:int32(len(s))-scale] + "." + s[int32(len(s))-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// diffJSON returns "" when got matches want, else where they differ.
func diffJSON(want, got any, path string) string {
	switch w := want.(type) {
	case nil:
		if got != nil {
			return fmt.Sprintf("%s: want null, got %s", path, show(got))
		}
		return ""
	case map[string]any:
		if got == nil && len(w) == 2 && w["value"] == nil && w["tag"] == json.Number("0") {
			return "" // a union of variant 0 holding null: see valueJSON
		}
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want object, got %s", path, show(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s.%s missing", path, k)
			}
			if m := diffJSON(w[k], gv, path+"."+k); m != "" {
				return m
			}
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s: got %d fields, want %d", path, len(g), len(w))
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want %s, got %s", path, show(w), show(got))
		}
		for i := range w {
			if m := diffJSON(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); m != "" {
				return m
			}
		}
		return ""
	case json.Number:
		switch g := got.(type) {
		case json.Number:
			if string(g) == string(w) {
				return ""
			}
		case floatVal:
			if floatMatches(string(w), g) {
				return ""
			}
		}
		return fmt.Sprintf("%s: want %s, got %s", path, w, show(got))
	default:
		if want != got {
			return fmt.Sprintf("%s: want %s, got %s", path, show(want), show(got))
		}
		return ""
	}
}

// floatMatches compares a printed float with a decoded one: equal after
// printing ours the way ORC's printer does, or as the shortest repr.
func floatMatches(printed string, g floatVal) bool {
	w, err := strconv.ParseFloat(printed, 64)
	if err != nil {
		return false
	}
	if math.IsNaN(w) && math.IsNaN(g.v) || w == g.v {
		return true
	}
	prec := 14
	if g.bits == 32 {
		prec = 7
	}
	for _, s := range []string{strconv.FormatFloat(g.v, 'g', prec, 64), strconv.FormatFloat(g.v, 'g', -1, g.bits)} {
		if v, err := strconv.ParseFloat(s, 64); err == nil && v == w {
			return true
		}
	}
	return false
}
