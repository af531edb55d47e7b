package parquet

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/scand/scand/scanner"
)

// classifyCases produce, for each entry of arrowGoMessages, a file on
// which arrow-go v18 fails with the message the entry matches.
var classifyCases = map[string]func(t *testing.T) []byte{
	"invalid logical type": func(t *testing.T) []byte {
		// A LogicalType union whose member (field 30) arrow-go does not know.
		leaf := func(w *compactWriter) {
			w.i32(1, 2)
			w.i32(3, 0)
			w.str(4, "x")
			w.structField(10, func() { w.structField(30, func() {}) })
		}
		return bombFile{rows: 1, cols: 1, schema: []func(*compactWriter){nil, leaf},
			pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 8, numValues: 1, body: make([]byte, 8)}}}.build()
	},
	"INT96 timestamp is outside the Arrow nanosecond range": func(t *testing.T) []byte {
		// One INT96 value: nanoseconds of the day, then a Julian day far
		// past year 2262.
		v := binary.LittleEndian.AppendUint64(nil, 0)
		v = binary.LittleEndian.AppendUint32(v, 1<<31-1)
		return bombFile{rows: 1, cols: 1, phys: 3, // INT96
			pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 12, numValues: 1, body: v}}}.build()
	},
	"MAP keys must be required": func(t *testing.T) []byte {
		// optional group m (MAP) { repeated group key_value { optional int64 key } }
		elems := []func(*compactWriter){
			func(w *compactWriter) { w.str(4, "schema"); w.i32(5, 1) },
			func(w *compactWriter) { w.i32(3, 1); w.str(4, "m"); w.i32(5, 1); w.i32(6, 1) },
			func(w *compactWriter) { w.i32(3, 2); w.str(4, "key_value"); w.i32(5, 1) },
			func(w *compactWriter) { w.i32(1, 2); w.i32(3, 1); w.str(4, "key") },
		}
		return bombFile{rows: 1, cols: 1, schema: elems,
			pages: []bombPage{{typ: pageTypeDataPage, uncompressed: 8, numValues: 1, body: make([]byte, 8)}}}.build()
	},
	"no support for reading columns of type": func(t *testing.T) []byte {
		// pyarrow writes durations as INT64 with the Arrow schema stored
		// (ARROW:schema); arrow-go cannot read them back. It cannot write
		// them either: the stored schema is put in by hand.
		stored := arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.FixedWidthTypes.Duration_us, Nullable: true}}, nil)
		ipcSchema := flight.SerializeSchema(stored, memory.DefaultAllocator)
		md := arrow.NewMetadata([]string{"ARROW:schema"}, []string{base64.StdEncoding.EncodeToString(ipcSchema)})
		sc := arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, &md)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(5)
		rec := b.NewRecordBatch()
		defer rec.Release()
		return writeParquetBytes(t, rec, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	},
}

// TestClassifyArrowGoMessages checks every message-matched entry against
// the real arrow-go error: the file fails with a message holding the
// fragment, classified as the entry says.
func TestClassifyArrowGoMessages(t *testing.T) {
	if len(classifyCases) != len(arrowGoMessages) {
		t.Errorf("%d cases for %d entries of arrowGoMessages", len(classifyCases), len(arrowGoMessages))
	}
	for _, m := range arrowGoMessages {
		t.Run(m.fragment, func(t *testing.T) {
			build, ok := classifyCases[m.fragment]
			if !ok {
				t.Fatal("no test case")
			}
			data := build(t)
			for _, native := range []bool{true, false} {
				_, err := scanBytes(data, native)
				if err == nil || !strings.Contains(err.Error(), m.fragment) || !errors.Is(err, m.class) {
					t.Errorf("native=%v: %v, want an error holding %q, classified as %v", native, err, m.fragment, m.class)
				}
			}
		})
	}
}

func TestClassifyTypedErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error
	}{
		{fmt.Errorf("%w: support for x", arrow.ErrNotImplemented), scanner.ErrUnsupported},
		{fmt.Errorf("ours: %w", scanner.ErrCorrupt), scanner.ErrCorrupt},
		{fmt.Errorf("ours: %w", scanner.ErrUnsupported), scanner.ErrUnsupported},
		{context.Canceled, context.Canceled},
		{fmt.Errorf("budget: %w", errTestBudget), scanner.ErrCorrupt}, // classify is for arrow-go's errors only
		{errors.New("parquet: something unsupported happened"), scanner.ErrCorrupt},
	} {
		if got := classify("f", c.err); !errors.Is(got, c.want) {
			t.Errorf("classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// scanBytes reads a whole file from memory.
func scanBytes(data []byte, native bool) (rows int64, err error) {
	f, err := Open(context.Background(), "c.parquet", newLendingSource(data), memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	f.noNative = !native
	p, err := f.Project(nil)
	if err != nil {
		return 0, err
	}
	err = f.Read(context.Background(), p, scanner.ReadOptions{Mem: memory.DefaultAllocator}, func(rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		rec.Release()
		return nil
	})
	return rows, err
}

// TestClassifyStructural: what is told from the file's structure, not
// from arrow-go's messages: codecs and encrypted footers.
func TestClassifyStructural(t *testing.T) {
	page := []bombPage{{typ: pageTypeDataPage, uncompressed: 8, numValues: 1, body: make([]byte, 8)}}
	encrypted := bombFile{rows: 1, cols: 1, pages: page}.build()
	copy(encrypted[len(encrypted)-4:], "PARE")
	for _, c := range []struct {
		name string
		data []byte
		want error
		says string
	}{
		{"LZO", bombFile{rows: 1, cols: 1, codec: 3, pages: page}.build(), scanner.ErrUnsupported, "LZO compression is not supported"},
		{"codec 16", bombFile{rows: 1, cols: 1, codec: 16, pages: page}.build(), scanner.ErrCorrupt, "unknown compression codec id 16"},
		{"encrypted footer", encrypted, scanner.ErrUnsupported, "the footer is encrypted"},
	} {
		for _, native := range []bool{true, false} {
			_, err := scanBytes(c.data, native)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s, native=%v: %v, want %v saying %q", c.name, native, err, c.want, c.says)
			}
		}
	}
}
