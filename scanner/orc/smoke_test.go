package orc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// smokeFailures are the example files that must fail, with the error
// class and what the message must say. Every other file must read all its
// rows.
var smokeFailures = map[string]struct {
	class error
	says  string
}{
	"zero.orc": {scanner.ErrNotColumnar, "empty file"},
	// corrupt/: damaged on purpose upstream (ORC's reader rejects them too).
	"missing_blob_stream_in_string_dict.orc":   {scanner.ErrCorrupt, "without a DICTIONARY_DATA stream"},
	"missing_length_stream_in_string_dict.orc": {scanner.ErrCorrupt, "without a LENGTH stream"},
	"negative_dict_entry_lengths.orc":          {scanner.ErrCorrupt, "negative dictionary entry length"},
	"stripe_footer_bad_column_encodings.orc":   {scanner.ErrCorrupt, "stripe 0 footer"},
}

// TestSmokeAll opens and reads every example file (also the ones without
// expected output): each reads all its rows without leaking, or fails as
// smokeFailures says.
func TestSmokeAll(t *testing.T) {
	dir := orcExamples(t)
	paths, _ := filepath.Glob(filepath.Join(dir, "*.orc"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.orc"))
	paths = append(paths, more...)
	seen := map[string]bool{}
	for _, p := range paths {
		name := filepath.Base(p)
		seen[name] = true
		if testing.Short() && strings.HasPrefix(name, "demo-") {
			continue // 1.9M rows each; BenchmarkDecode covers them
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rows := int64(0)
		f, err := readFile(t, name, data, nil, 0, mem, func(rec arrow.RecordBatch) { rows += rec.NumRows() })
		mem.AssertSize(t, 0)
		want, mustFail := smokeFailures[name]
		switch {
		case mustFail && (!errors.Is(err, want.class) || !strings.Contains(err.Error(), want.says)):
			t.Errorf("%s: %v, want %v saying %q", name, err, want.class, want.says)
		case mustFail:
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case rows != stripeRows(f):
			t.Errorf("%s: %d rows of %d", name, rows, stripeRows(f))
		}
	}
	for name := range smokeFailures {
		if !seen[name] {
			t.Errorf("%s is listed in smokeFailures but not among the examples", name)
		}
	}
}

// stripeRows adds up the stripes' rows (some writers leave the footer's
// total out).
func stripeRows(f *File) int64 {
	n := int64(0)
	for _, s := range f.ft.stripes {
		n += int64(s.numberOfRows)
	}
	return n
}
