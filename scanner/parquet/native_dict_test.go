package parquet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/scanner/filter/sql"
)

// dictFilterFile has short dictionary strings (mode, a few values, every
// ninth row null), longer ones whose dictionary outgrows its page limit so
// the writer falls back to PLAIN pages mid-chunk (note), a binary column,
// dictionary-encoded numbers, dates and decimals with nulls (qty, day,
// price), and two columns whose dictionary overflows at once (id, v).
func dictFilterFile(t testing.TB, rows int) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "mode", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tag", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer b.Release()
	r := rand.New(rand.NewPCG(5, 6))
	modes := []string{"AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR"}
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%9 == 4 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(modes[r.IntN(len(modes))])
		}
		if i%5 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("note %d of %d", r.IntN(rows), i%17))
		}
		if i%11 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.BinaryBuilder).Append([]byte{byte(r.IntN(4)), 'x'})
		}
		b.Field(4).(*array.Float64Builder).Append(r.Float64())
		if i%7 == 2 {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Int32Builder).Append(int32(r.IntN(50)))
		}
		b.Field(6).(*array.Date32Builder).Append(arrow.Date32(20454 + r.IntN(30)))
		if i%13 == 1 {
			b.Field(7).AppendNull()
		} else {
			b.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.IntN(40) * 25)))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithDataPageSize(1<<10), parquet.WithDictionaryPageSizeLimit(4<<10),
		parquet.WithMaxRowGroupLength(2000), parquet.WithCompression(compress.Codecs.Snappy))
	return writeParquetBytes(t, rec, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
}

// readDictFiltered reads data filtered, as the server's stream does:
// the filter applied to every batch, then dictionaries the reader made
// decoded back to the schema's types. dictBatches counts the batches
// that held a dictionary.
func readDictFiltered(t *testing.T, data []byte, columns []string, filterText string, opts scanner.ReadOptions, mem memory.Allocator) (rec arrow.RecordBatch, dictBatches int) {
	t.Helper()
	f, err := Open(context.Background(), "dict.parquet", newLendingSource(data), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Project(columns)
	if err != nil {
		t.Fatal(err)
	}
	e, err := sql.Parse(filterText)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Filter, err = filter.Bind(e, f.Schema()); err != nil {
		t.Fatal(err)
	}
	opts.Mem = mem
	var parts []arrow.RecordBatch
	defer func() { releaseRecords(parts) }()
	err = f.Read(context.Background(), p, opts, func(r arrow.RecordBatch) error {
		defer r.Release()
		for _, c := range r.Columns() {
			if c.DataType().ID() == arrow.DICTIONARY {
				dictBatches++
				break
			}
		}
		kept, err := opts.Filter.Filter(context.Background(), r, mem)
		if err != nil {
			return err
		}
		defer kept.Release()
		cols := make([]arrow.Array, kept.NumCols())
		for i, c := range kept.Columns() {
			if cols[i], err = plainColumn(c, p.Schema.Field(i).Type, mem); err != nil {
				return err
			}
		}
		parts = append(parts, array.NewRecordBatch(p.Schema, cols, kept.NumRows()))
		releaseArrays(cols)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(p.Schema, parts)
	defer tbl.Release()
	return concatTable(t, tbl, mem), dictBatches
}

// TestFilterDictionariesMatchPlain: with FilterDictionaries, the filter's
// string columns come as dictionary arrays where they can (and plain
// where the writer fell back to PLAIN pages, or the dictionary outgrows
// the batch), and every filter keeps exactly the rows, and values, of a
// read without them: late materialization off and always, batches that
// cut pages, nulls.
func TestFilterDictionariesMatchPlain(t *testing.T) {
	data := dictFilterFile(t, 5_000)
	all := []string{"id", "mode", "note", "tag", "v", "qty", "day", "price"}
	filters := []string{
		"mode = 'AIR'",
		"mode IN ('MAIL', 'SHIP') AND v > 0.5",
		"mode LIKE 'R%' OR mode IS NULL",
		"NOT (mode = 'TRUCK') AND note LIKE 'note 1%'",
		"note IS NULL AND v < 0.2",
		"note IS NOT NULL AND mode >= 'RAIL'",
		"tag IS NULL AND mode = 'AIR'",
		"mode = 'nowhere'",
		"mode = 'FOB' AND note IN ('note 7 of 3', 'note 9 of 2') OR id = 17",
		"qty > 40 AND price <= 5.00",
		"qty IS NULL AND mode = 'AIR' OR price IS NULL",
		"qty IN (3, 5, 7) OR day = DATE '2026-01-03'",
		"day BETWEEN DATE '2026-01-10' AND DATE '2026-01-12' AND v > 0.5",
		"NOT (qty < 45) AND price IN (1.25, 7.50)",
	}
	// Batches of 3 rows, under every dictionary's entries, for a few.
	tiny := map[string]bool{filters[0]: true, filters[6]: true, filters[9]: true}
	if testing.Short() || raceEnabled {
		filters = filters[:4]
	}
	for _, text := range filters {
		for _, columns := range [][]string{all, {"mode", "note", "qty", "day", "price"}} {
			for _, late := range []scanner.LateMode{scanner.LateOff, scanner.LateAlways} {
				for _, batch := range []int64{1000, 3} {
					if batch == 3 && !tiny[text] {
						continue // a batch costs the same to filter, whatever its rows
					}
					name := fmt.Sprintf("%s/%v/%s/%d", text, columns, late, batch)
					t.Run(name, func(t *testing.T) {
						mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer mem.AssertSize(t, 0)
						opts := scanner.ReadOptions{LateMaterialization: late, BatchRows: batch}
						want, n := readDictFiltered(t, data, columns, text, opts, mem)
						defer want.Release()
						if n != 0 {
							t.Fatalf("%d dictionary batches without FilterDictionaries", n)
						}
						opts.FilterDictionaries = true
						got, n := readDictFiltered(t, data, columns, text, opts, mem)
						defer got.Release()
						if !array.RecordEqual(got, want) {
							t.Fatalf("%d rows, want %d", got.NumRows(), want.NumRows())
						}
						if late == scanner.LateOff && batch == 1000 && n == 0 {
							t.Fatalf("no batch held a dictionary")
						}
						if batch == 3 && n != 0 {
							t.Fatalf("%d dictionary batches of 3 rows over dictionaries of 4 or more entries", n)
						}
					})
				}
			}
		}
	}
}
