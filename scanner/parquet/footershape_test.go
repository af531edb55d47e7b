package parquet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// deepFile is a Parquet file whose one column is a leaf under groups
// optional groups: groups+2 schema levels with the root. It has no rows.
func deepFile(groups int) []byte {
	schema := make([]func(*compactWriter), groups+2)
	schema[0] = func(w *compactWriter) { w.str(4, "schema"); w.i32(5, 1) }
	for i := 1; i <= groups; i++ {
		schema[i] = func(w *compactWriter) { w.i32(3, 1); w.str(4, fmt.Sprintf("g%d", i)); w.i32(5, 1) }
	}
	schema[groups+1] = func(w *compactWriter) { w.i32(1, 2); w.i32(3, 1); w.str(4, "v") }
	return bombFile{rows: 0, cols: 1, schema: schema}.build()
}

// wideFile is a Parquet file of cols INT64 columns in one row group of one
// row.
func wideFile(cols int) []byte {
	return bombFile{rows: 1, cols: cols, pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 8, numValues: 1, body: make([]byte, 8)}}}.build()
}

// The schema's depth is capped where pyarrow caps it (pyarrow reads 98
// nested groups under the root and refuses 99: "Parquet schema too
// deeply nested"), before arrow-go decodes the footer: a 6,000-level
// schema took 1.5 GB to plan and failed as INTERNAL. Within that, a
// column deeper than the 64 levels Arrow IPC carries is refused once its
// Arrow type is known (a struct per group, and the leaf).
func TestSchemaDepthLimit(t *testing.T) {
	for _, tc := range []struct {
		groups int
		limit  string // in the error; "" for none
	}{{0, ""}, {1, ""}, {62, ""}, {63, ""}, {64, "64 levels"}, {98, "64 levels"}, {99, "100 levels"}, {6000, "100 levels"}} {
		t.Run(fmt.Sprint(tc.groups), func(t *testing.T) {
			f, err := Open(context.Background(), "deep.parquet", memSource{bytes.NewReader(deepFile(tc.groups))}, memory.NewGoAllocator())
			if tc.limit == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				f.Close()
				return
			}
			if err == nil {
				f.Close()
				t.Fatal("Open accepted a schema past the depth limit")
			}
			if !errors.Is(err, scanner.ErrUnsupported) || !strings.Contains(err.Error(), tc.limit) {
				t.Fatalf("err = %v, want ErrUnsupported naming %q", err, tc.limit)
			}
		})
	}
}

func TestFooterShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		file []byte
		want footerShape
	}{
		{"flat", wideFile(3), footerShape{elements: 4, leaves: 3, depth: 2, rowGroups: 1, chunks: 3, maxChunks: 3}},
		{"deep", deepFile(5), footerShape{elements: 7, leaves: 1, depth: 7, rowGroups: 1, chunks: 1, maxChunks: 1}},
		{"wide", wideFile(1000), footerShape{elements: 1001, leaves: 1000, depth: 2, rowGroups: 1, chunks: 1000, maxChunks: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			footer, err := readFooter(tc.name, bytes.NewReader(tc.file), int64(len(tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := scanFooterShape(footer)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.bytes = int64(len(footer))
			if got.schema[0] <= 0 || got.schema[1] <= got.schema[0] || got.schema[1] > len(footer) {
				t.Errorf("schema span %v in a footer of %d bytes", got.schema, len(footer))
			}
			got.schema, got.keyValues = [2]int{}, [2]int{} // shapeKey's (TestShapes)
			if got != tc.want {
				t.Errorf("shape = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The estimate grows with the columns, and covers what decoding a wide
// footer and projecting it holds (measured: about 1.6 KiB a column).
func TestMetadataShapeEstimate(t *testing.T) {
	shape := func(name string, b []byte) (int64, error) {
		_, n, _, err := metadataShape(name, bytes.NewReader(b), int64(len(b)))
		return n, err
	}
	small, err := shape("s", wideFile(3))
	if err != nil {
		t.Fatal(err)
	}
	wide, err := shape("w", wideFile(10000))
	if err != nil {
		t.Fatal(err)
	}
	if small > 64<<10 {
		t.Errorf("3 columns: estimate %d bytes, want a few KiB", small)
	}
	if wide < 10000*1500 {
		t.Errorf("10,000 columns: estimate %d bytes, want at least 1.5 KiB a column", wide)
	}
	if _, err := shape("d", deepFile(200)); !errors.Is(err, scanner.ErrUnsupported) {
		t.Errorf("deep: err = %v, want ErrUnsupported", err)
	}
	// Not a footer: an estimate from nothing, and no error (Open says
	// what is wrong).
	if _, err := shape("x", []byte("not parquet at all")); err != nil {
		t.Errorf("garbage: err = %v, want none", err)
	}
}

// The crafted footers seed FuzzOpenAndRead (testdata/fuzz): the deepest
// pyarrow reads, one level past it, and forty columns.
// SCAND_UPDATE_FUZZ=1 rewrites them.
func TestSchemaLimitFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzOpenAndRead")
	seeds := map[string][]byte{
		"schema-depth-100":  deepFile(98),
		"schema-depth-101":  deepFile(99),
		"schema-40-columns": wideFile(40),
	}
	for name, b := range seeds {
		path := filepath.Join(dir, name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if os.Getenv("SCAND_UPDATE_FUZZ") != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is missing or stale (err %v): run with SCAND_UPDATE_FUZZ=1", path, err)
		}
	}
}

// Open reserves the decoded footer's estimate from the context's
// metadata budget before decoding it; a budget that refuses fails Open
// with its error. A cached footer costs its manifest and figures only.
func TestOpenReservesMetadata(t *testing.T) {
	data := wideFile(2000)
	small := &capReserver{cap: 1 << 20}
	_, err := Open(scanner.WithMetadataBudget(context.Background(), small), "wide.parquet", memSource{bytes.NewReader(data)}, memory.NewGoAllocator())
	if !errors.Is(err, errTestBudget) {
		t.Fatalf("Open within 1 MiB: err = %v, want the budget's error", err)
	}
	big := &capReserver{cap: 1 << 30}
	f, err := Open(scanner.WithMetadataBudget(context.Background(), big), "wide.parquet", memSource{bytes.NewReader(data)}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if h := big.Held(); h < 2000*1500 {
		t.Errorf("reserved %d bytes for 2,000 columns, want at least 1.5 KiB each", h)
	}
}
