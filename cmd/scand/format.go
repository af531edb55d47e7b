package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Output formats of scan.
const (
	formatTable = "table"
	formatCSV   = "csv"
	formatJSON  = "json"
	// The binary formats write a file (--output).
	formatParquet = "parquet"
	formatArrow   = "arrow"
)

// formats lists the output formats, for usage messages.
var formats = []string{formatTable, formatCSV, formatJSON, formatParquet, formatArrow}

// binaryFormat reports whether format writes a binary file, which needs
// --output.
func binaryFormat(format string) bool {
	return format == formatParquet || format == formatArrow
}

// maxCellRunes caps a table cell; longer values end in "…". The other
// formats never truncate.
const maxCellRunes = 60

// printer writes the batches of a scan in one format.
type printer interface {
	// write prints a batch (or buffers it, for the table). It does not
	// keep rec.
	write(rec arrow.RecordBatch) error
	// close prints what is buffered and flushes.
	close() error
}

func newPrinter(format string, schema *arrow.Schema, w io.Writer, maxRows int) (printer, error) {
	switch format {
	case formatTable:
		return newTablePrinter(schema, w, maxRows), nil
	case formatCSV:
		return newCSVPrinter(schema, w), nil
	case formatJSON:
		return &jsonPrinter{w: bufio.NewWriter(w)}, nil
	case formatParquet:
		return newParquetPrinter(schema, w)
	case formatArrow:
		return newArrowPrinter(schema, w)
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", format, strings.Join(formats, ", "))
}

// tablePrinter prints an aligned text table. Column widths depend on every
// shown row, so it keeps the first maxRows rows as strings and only counts
// the rest: memory stays bounded however long the scan is.
type tablePrinter struct {
	w       io.Writer
	header  []string
	numeric []bool // right-aligned columns
	rows    [][]string
	maxRows int // 0 = no cap
	total   int64
	// peek, when set, says the scan asked for only the rows shown (and
	// one more): the count comes from it, not from the rows that arrived.
	peek *peekCount
}

// peekCount is what a peek knows of the rows it did not fetch: the
// scan's rows from the footers (exact without a filter), or, with a
// filter, only that there are more.
type peekCount struct {
	rows     int64
	filtered bool
}

func newTablePrinter(schema *arrow.Schema, w io.Writer, maxRows int) *tablePrinter {
	t := &tablePrinter{w: w, maxRows: maxRows}
	for _, f := range schema.Fields() {
		t.header = append(t.header, f.Name)
		t.numeric = append(t.numeric, isNumeric(f.Type))
	}
	return t
}

func (t *tablePrinter) write(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	for i := 0; i < n && (t.maxRows == 0 || len(t.rows) < t.maxRows); i++ {
		row := make([]string, rec.NumCols())
		for j, col := range rec.Columns() {
			row[j] = truncateRunes(textValue(col, i, "null"), maxCellRunes)
		}
		t.rows = append(t.rows, row)
	}
	t.total += int64(n)
	return nil
}

func (t *tablePrinter) close() error {
	widths := make([]int, len(t.header))
	for j, h := range t.header {
		widths[j] = utf8.RuneCountInString(h)
	}
	for _, row := range t.rows {
		for j, c := range row {
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	bw := bufio.NewWriter(t.w)
	line := func(cells []string, alignRight []bool) {
		var b strings.Builder
		for j, c := range cells {
			if j > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c))
			if alignRight != nil && alignRight[j] {
				b.WriteString(pad + c)
			} else if j < len(cells)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c) // no trailing spaces
			}
		}
		fmt.Fprintln(bw, b.String())
	}
	line(t.header, t.numeric)
	rule := make([]string, len(widths))
	for j, w := range widths {
		rule[j] = strings.Repeat("-", w)
	}
	line(rule, nil)
	for _, row := range t.rows {
		line(row, t.numeric)
	}
	total := t.total
	switch {
	case t.peek != nil && t.peek.filtered && t.total > int64(len(t.rows)):
		fmt.Fprintf(bw, "... more rows match (--max-rows to show more, 0 to count them; --format csv or json for all)\n")
		fmt.Fprintf(bw, "(more than %d %s)\n", len(t.rows), plural(int64(len(t.rows)), "row", "rows"))
		return bw.Flush()
	case t.peek != nil && !t.peek.filtered:
		total = max(t.total, t.peek.rows)
	}
	if more := total - int64(len(t.rows)); more > 0 {
		fmt.Fprintf(bw, "... %d more %s (--max-rows to show more, --format csv or json for all)\n", more, plural(more, "row", "rows"))
	}
	fmt.Fprintf(bw, "(%d %s)\n", total, plural(total, "row", "rows"))
	return bw.Flush()
}

// csvPrinter writes CSV with a header through arrow's CSV writer. Nulls are
// empty fields, as most CSV readers expect. Types the arrow writer does not
// know (structs, maps, ...) and lists are written as JSON, so that nested
// values look the same as in the json format.
type csvPrinter struct {
	w      io.Writer
	schema *arrow.Schema
	cw     *csv.Writer
}

func newCSVPrinter(schema *arrow.Schema, w io.Writer) *csvPrinter {
	return &csvPrinter{w: w, schema: schema, cw: newArrowCSV(w, schema, true)}
}

func newArrowCSV(w io.Writer, schema *arrow.Schema, header bool) *csv.Writer {
	return csv.NewWriter(w, schema,
		csv.WithHeader(header),
		csv.WithNullWriter(""),
		csv.WithCustomTypeConverter(func(typ arrow.DataType, col arrow.Array) ([]string, bool) {
			if csvNative(typ) {
				return nil, false
			}
			out := make([]string, col.Len())
			for i := range out {
				out[i] = textValue(col, i, "")
			}
			return out, true
		}),
	)
}

func (p *csvPrinter) write(rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(p.schema) {
		// The arrow writer insists on one schema; the scan guarantees the
		// columns, but field metadata may differ, so re-wrap the columns.
		rec = array.NewRecordBatch(p.schema, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	return p.cw.Write(rec)
}

func (p *csvPrinter) close() error {
	if p.schema.NumFields() > 0 {
		// An empty scan still gets its header: write an empty batch.
		empty := array.NewRecordBatch(p.schema, emptyColumns(p.schema), 0)
		defer empty.Release()
		for _, c := range empty.Columns() {
			defer c.Release()
		}
		if err := p.cw.Write(empty); err != nil {
			return err
		}
	}
	return p.cw.Flush()
}

// jsonPrinter writes one JSON object per row, keys in column order (unlike
// array.RecordToJSON, which goes through a map and sorts them).
type jsonPrinter struct {
	w   *bufio.Writer
	buf []byte
}

func (p *jsonPrinter) write(rec arrow.RecordBatch) error {
	names := make([][]byte, rec.NumCols())
	for j, f := range rec.Schema().Fields() {
		names[j] = appendJSONString(nil, f.Name)
	}
	for i := range int(rec.NumRows()) {
		b := append(p.buf[:0], '{')
		for j, col := range rec.Columns() {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, names[j]...)
			b = append(b, ':')
			b = appendJSON(b, col, i)
		}
		b = append(b, '}', '\n')
		if _, err := p.w.Write(b); err != nil {
			return err
		}
		p.buf = b
	}
	return nil
}

func (p *jsonPrinter) close() error { return p.w.Flush() }

// Row groups of the parquet output end at whichever limit comes first.
// The writer keeps a row group's encoded pages in memory until it ends, so
// these bound the memory a long scan needs.
const (
	parquetRowGroupRows  = 1 << 20
	parquetRowGroupBytes = 64 << 20
)

// parquetPrinter writes a Parquet file (snappy) as the batches arrive.
type parquetPrinter struct {
	fw *pqarrow.FileWriter
}

func newParquetPrinter(schema *arrow.Schema, w io.Writer) (*parquetPrinter, error) {
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(parquetRowGroupRows),
	)
	// WithStoreSchema keeps the Arrow types Parquet cannot express
	// (time zones, large strings, ...) for Arrow readers.
	fw, err := pqarrow.NewFileWriter(schema, noClose{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("parquet output: %w", err)
	}
	return &parquetPrinter{fw: fw}, nil
}

func (p *parquetPrinter) write(rec arrow.RecordBatch) error {
	if err := p.fw.WriteBuffered(rec); err != nil {
		return err
	}
	if p.fw.RowGroupTotalCompressedBytes()+p.fw.RowGroupTotalBytesWritten() >= parquetRowGroupBytes {
		return p.fw.NewBufferedRowGroupChecked()
	}
	return nil
}

func (p *parquetPrinter) close() error { return p.fw.Close() }

// arrowPrinter writes an Arrow IPC file (the random-access format, with a
// footer) as the batches arrive.
type arrowPrinter struct {
	fw *ipc.FileWriter
}

func newArrowPrinter(schema *arrow.Schema, w io.Writer) (*arrowPrinter, error) {
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(schema))
	if err != nil {
		return nil, fmt.Errorf("arrow output: %w", err)
	}
	return &arrowPrinter{fw: fw}, nil
}

func (p *arrowPrinter) write(rec arrow.RecordBatch) error { return p.fw.Write(rec) }
func (p *arrowPrinter) close() error                      { return p.fw.Close() }

// noClose hides a writer's Close method from writers that would close it;
// the caller closes the file itself.
type noClose struct{ io.Writer }

// textValue formats one value for the table and CSV: nested values as
// JSON, everything else as arrow prints it.
func textValue(col arrow.Array, i int, null string) string {
	if col.IsNull(i) {
		return null
	}
	if isNested(col.DataType()) {
		return string(appendJSON(nil, col, i))
	}
	return col.ValueStr(i)
}

// appendJSON appends value i of col as JSON. Struct fields keep their
// schema order; arrow's GetOneForMarshal would put them in a map.
func appendJSON(b []byte, col arrow.Array, i int) []byte {
	if col.IsNull(i) {
		return append(b, "null"...)
	}
	switch a := col.(type) {
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		for k := range a.NumField() {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, st.Field(k).Name)
			b = append(b, ':')
			b = appendJSON(b, a.Field(k), i)
		}
		return append(b, '}')
	case array.ListLike:
		// Offsets index the unsliced child array directly.
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		b = append(b, '[')
		for k := start; k < end; k++ {
			if k > start {
				b = append(b, ',')
			}
			b = appendJSON(b, values, int(k))
		}
		return append(b, ']')
	}
	v, err := marshalNoEscape(col.GetOneForMarshal(i))
	if err != nil {
		// NaN and ±Inf have no JSON form; write them as strings.
		return appendJSONString(b, col.ValueStr(i))
	}
	return append(b, v...)
}

func appendJSONString(b []byte, s string) []byte {
	v, _ := marshalNoEscape(s)
	return append(b, v...)
}

// marshalNoEscape is json.Marshal without HTML escaping: "<" stays "<".
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func isNested(dt arrow.DataType) bool {
	_, ok := dt.(arrow.NestedType)
	return ok
}

func isNumeric(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

// csvNative reports whether arrow's CSV writer formats dt itself (its
// switch in csv/transformer.go, less lists, which it writes as "{a,b}").
func csvNative(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.STRING, arrow.LARGE_STRING, arrow.DATE32, arrow.DATE64,
		arrow.TIMESTAMP, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY, arrow.NULL:
		return true
	}
	return false
}

func emptyColumns(schema *arrow.Schema) []arrow.Array {
	cols := make([]arrow.Array, schema.NumFields())
	for j, f := range schema.Fields() {
		cols[j] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
	}
	return cols
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// formatBytes prints a byte count in binary units: 1.5 MiB.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
