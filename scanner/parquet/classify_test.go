package parquet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// classifyCases produce, for each entry of arrowGoMessages, a file on
// which arrow-go v18 fails with the message the entry matches.
var classifyCases = map[string]func(t *testing.T) []byte{
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
