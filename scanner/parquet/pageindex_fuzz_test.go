package parquet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/scanner/filter/sql"
)

// Fuzz targets for the page index: the offset and column index decoders
// with their checks, and whole reads of a file whose index bytes are
// mutated. Seeds: testdata/fuzz/Fuzz*/ (written from a real file by
// SCAND_WRITE_SEEDS=1 go test -run TestWritePageIndexSeeds), plus the
// real index bytes added here.

// seedFile is a small file with a page index, and its first chunk's
// offset and column index bytes.
func seedFile(t testing.TB) (data []byte, f *File, oi, ci []byte) {
	data = pageIndexFile(t, 3000, false)
	f, err := Open(context.Background(), "seed.parquet", memSourceOf(data), memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	cc, err := f.pf.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	o, c := indexLocation(cc, false, int64(len(data))), indexLocation(cc, true, int64(len(data)))
	return data, f, data[o.Off:o.End()], data[c.Off:c.End()]
}

func memSourceOf(data []byte) scanner.Source { return newLendingSource(data) }

// FuzzOffsetIndex: any bytes decode to checked pages or an error, never a
// panic, and accepted pages keep checkPages' invariants.
func FuzzOffsetIndex(f *testing.F) {
	_, file, oi, _ := seedFile(f)
	defer file.Close()
	f.Add(oi)
	cc, _ := file.pf.MetaData().RowGroup(0).ColumnChunk(0)
	chunk := chunkOf(cc)
	rows := file.pf.MetaData().RowGroup(0).NumRows()
	f.Fuzz(func(t *testing.T, b []byte) {
		pages, err := decodeOffsetIndex(b, chunk, rows)
		if err != nil {
			return
		}
		if err := checkPages(pages, chunk, rows); err != nil {
			t.Fatalf("accepted pages fail the checks: %v", err)
		}
	})
}

// FuzzColumnIndex: any bytes decode to one statistics entry per page or
// an error, never a panic.
func FuzzColumnIndex(f *testing.F) {
	_, file, oi, ci := seedFile(f)
	defer file.Close()
	f.Add(ci)
	cc, _ := file.pf.MetaData().RowGroup(0).ColumnChunk(0)
	rows := file.pf.MetaData().RowGroup(0).NumRows()
	pages, err := decodeOffsetIndex(oi, chunkOf(cc), rows)
	if err != nil {
		f.Fatal(err)
	}
	file.GroupStats(-1)
	leaf := &file.stats.leaves[0]
	f.Fuzz(func(t *testing.T, b []byte) {
		stats, err := decodeColumnIndex(b, leaf, pages, rows, file)
		if err == nil && len(stats) != len(pages) {
			t.Fatalf("%d statistics for %d pages", len(stats), len(pages))
		}
	})
}

// FuzzPageIndexRead: a file whose page index bytes are overwritten reads
// without panicking, and fails, if at all, as corrupt data.
func FuzzPageIndexRead(f *testing.F) {
	data, file, oi, _ := seedFile(f)
	file.Close()
	start := int64(len(data)) - 1
	for g := range file.pf.MetaData().NumRowGroups() {
		cc, _ := file.pf.MetaData().RowGroup(g).ColumnChunk(0)
		if loc := indexLocation(cc, true, int64(len(data))); loc.Len > 0 {
			start = min(start, loc.Off)
		}
	}
	f.Add(uint16(0), oi[:min(8, len(oi))])
	f.Add(uint16(3), []byte{0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, at uint16, patch []byte) {
		mutated := append([]byte(nil), data...)
		off := start + int64(at)
		if off >= int64(len(data))-8 {
			return
		}
		copy(mutated[off:len(data)-8], patch) // never the footer's length and magic
		for _, text := range []string{"i64 >= 7000 AND i64 < 7700", ""} {
			opts := scanner.ReadOptions{BatchRows: 500}
			if text == "" {
				opts.Limit = 10
			}
			_, err := tryRead(mutated, text, opts)
			if err != nil && !errors.Is(err, scanner.ErrCorrupt) && !errors.Is(err, scanner.ErrUnsupported) {
				t.Fatalf("read failed other than as corrupt: %v", err)
			}
		}
	})
}

// tryRead is readFiltered without a testing.T: the footer may be damaged.
func tryRead(data []byte, filterText string, opts scanner.ReadOptions) (rows int64, err error) {
	src := &countingSource{lendingSource: newLendingSource(data)}
	f, err := Open(context.Background(), "fuzz.parquet", src, memory.NewGoAllocator())
	if err != nil {
		return 0, err
	}
	defer f.Close()
	p, err := f.Project(nil)
	if err != nil {
		return 0, err
	}
	if filterText != "" {
		if opts.Filter, err = bindText(filterText, f); err != nil {
			return 0, nil // the damaged footer lost the column
		}
	}
	err = f.Read(context.Background(), p, opts, func(r arrow.RecordBatch) error {
		rows += r.NumRows()
		r.Release()
		return nil
	})
	return rows, err
}

// TestWritePageIndexSeeds writes the fuzz targets' seed corpus.
func TestWritePageIndexSeeds(t *testing.T) {
	if os.Getenv("SCAND_WRITE_SEEDS") == "" {
		t.Skip("set SCAND_WRITE_SEEDS=1 to rewrite testdata/fuzz seeds")
	}
	_, file, oi, ci := seedFile(t)
	defer file.Close()
	write := func(target, name string, vals ...string) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "go test fuzz v1\n"
		for _, v := range vals {
			body += v + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("FuzzOffsetIndex", "real", fmt.Sprintf("[]byte(%q)", oi))
	write("FuzzOffsetIndex", "truncated", fmt.Sprintf("[]byte(%q)", oi[:len(oi)/2]))
	write("FuzzColumnIndex", "real", fmt.Sprintf("[]byte(%q)", ci))
	write("FuzzColumnIndex", "truncated", fmt.Sprintf("[]byte(%q)", ci[:len(ci)/2]))
	write("FuzzPageIndexRead", "zeros", "uint16(0)", fmt.Sprintf("[]byte(%q)", make([]byte, 16)))
	write("FuzzPageIndexRead", "offsets", "uint16(40)", fmt.Sprintf("[]byte(%q)", []byte{0x15, 0xff, 0xff, 0xff, 0x0f}))
}

// bindText binds a filter's text to f's columns.
func bindText(text string, f *File) (*filter.Predicate, error) {
	e, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	return filter.Bind(e, f.Schema())
}
