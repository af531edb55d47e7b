package orc

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestVersionRules(t *testing.T) {
	for _, c := range []struct {
		version   []uint64
		decimal64 bool
		warns     string // "" for no warning
	}{
		{nil, false, ""}, // before ORC-368: 0.11
		{[]uint64{0, 11}, false, ""},
		{[]uint64{0, 12}, false, ""},
		{[]uint64{0, 13}, false, "version 0.13, which this reader does not know; read as version 0.12"},
		{[]uint64{1, 9999}, true, "unstable pre-2.0 ORC format version 1.9999"},
		{[]uint64{1}, false, "version 1.0, which"},
		{[]uint64{2, 0, 7}, false, "version 2.0, which"},
		{[]uint64{19, 99}, false, "version 19.99, which"},
	} {
		d64, w := versionRules(c.version)
		if d64 != c.decimal64 || (c.warns == "") != (w == "") || !strings.Contains(w, c.warns) {
			t.Errorf("%v: decimal64 %v, warning %q; want %v, %q", c.version, d64, w, c.decimal64, c.warns)
		}
	}
}

// TestFutureVersion: version1999.orc (format version 19.99, no columns, no
// rows) reads as pyarrow reads it (0 columns, 0 rows, a warning about the
// unknown version), and the warning survives the metadata cache.
func TestFutureVersion(t *testing.T) {
	data := readExample(t, "version1999.orc")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	batches := 0
	f, err := readFile(t, "version1999.orc", data, nil, 0, mem, func(arrow.RecordBatch) { batches++ })
	mem.AssertSize(t, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Schema().NumFields() != 0 || f.NumRows() != 0 || batches != 0 {
		t.Errorf("%d fields, %d rows, %d batches; pyarrow reads 0, 0", f.Schema().NumFields(), f.NumRows(), batches)
	}
	want := "version1999.orc: written in ORC format version 19.99, which this reader does not know; read as version 0.12"
	if w := f.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], want) {
		t.Errorf("warnings %q, want one starting %q", w, want)
	}
	cache := &sync.Map{}
	for i := range 2 {
		src := &cachingSource{memSource: &memSource{data: data}, cache: cache}
		g, err := Open(context.Background(), "again.orc", src, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		if w := g.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], "again.orc: written in ORC format version 19.99") {
			t.Errorf("open %d (cached: %v): warnings %q", i, i > 0, w)
		}
	}
}

// TestWarningsOfKnownVersions: files of the versions the reader knows
// carry no warning, except 1.9999 (as ORC C++ warns).
func TestWarningsOfKnownVersions(t *testing.T) {
	for name, warns := range map[string]bool{
		"TestOrcFile.test1.orc":                   false, // 0.12
		"orc-file-11-format.orc":                  false, // 0.11
		"orc_no_format.orc":                       false, // no version: 0.11
		"decimal64_v2.orc":                        true,  // 1.9999
		"TestVectorOrcFile.testLzo.orc":           false,
		"TestOrcFile.testMemoryManagementV11.orc": false,
	} {
		f, err := openBytes(t, name, readExample(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if w := f.Warnings(); (len(w) > 0) != warns {
			t.Errorf("%s: warnings %q", name, w)
		}
	}
}
