package orc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(orcExamples(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestEncryptedMasked: ORC column encryption stores, besides the encrypted
// streams, an unencrypted masked copy of each encrypted column in the
// ordinary streams. A reader without keys reads those, as the Java reader
// does (README, ORC-921): ssn is nullified, email is a SHA-256 hash.
func TestEncryptedMasked(t *testing.T) {
	for name, want := range map[string]string{
		"encrypted/sample1.orc": `{"email":"841626795E7D351555B835A002E3BF10669DE9B81C95A3D59E10865AC37EA7C3","name":"Dongjoon Hyun","ssn":null}`,
		"encrypted/sample2.orc": `{"email":"B948E77D79105EAA53E54502CB39DA20C6A86263FA301D5B7EDBACC66D15B642","name":"William Hyun","ssn":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var got []any
			f, err := readFile(t, name, readExample(t, name), nil, 0, mem, func(rec arrow.RecordBatch) {
				got = append(got, recordJSON(rec, true)...)
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || show(got[0]) != want {
				t.Fatalf("got %s, want %s", show(got), want)
			}
			if enc := f.encryptedColumns(); strings.Join(enc, ",") != "ssn,email" && strings.Join(enc, ",") != "email,ssn" {
				t.Errorf("encrypted columns %v", enc)
			}
		})
	}
}

// TestBadFiles: malformed files fail with a classified error naming the
// file, and never panic.
func TestBadFiles(t *testing.T) {
	for name, want := range map[string]error{
		"zero.orc": scanner.ErrNotColumnar,
		"corrupt/missing_blob_stream_in_string_dict.orc":   scanner.ErrCorrupt,
		"corrupt/missing_length_stream_in_string_dict.orc": scanner.ErrCorrupt,
		"corrupt/negative_dict_entry_lengths.orc":          scanner.ErrCorrupt,
		"corrupt/stripe_footer_bad_column_encodings.orc":   scanner.ErrCorrupt,
	} {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, err := readFile(t, name, readExample(t, name), nil, 0, mem, nil)
			if !errors.Is(err, want) {
				t.Fatalf("got %v, want %v", err, want)
			}
			if !strings.HasPrefix(err.Error(), name) {
				t.Errorf("error does not start with the file name: %v", err)
			}
			if strings.Contains(err.Error(), "decoder failed") {
				t.Errorf("recovered from a panic: %v", err)
			}
		})
	}
	// orc_no_format.orc has no postscript magic or version (ORC-368):
	// readable as format 0.11.
	if _, err := readFile(t, "orc_no_format.orc", readExample(t, "orc_no_format.orc"), nil, 0, memory.DefaultAllocator, nil); err != nil {
		t.Errorf("orc_no_format.orc: %v", err)
	}
	// Not ORC at all.
	if _, err := openBytes(t, "x", []byte("PAR1 this is not orc at all PAR1")); !errors.Is(err, scanner.ErrNotColumnar) {
		t.Errorf("non-ORC bytes: %v", err)
	}
}

// TestTruncated cuts good files at many lengths: every cut fails cleanly
// (or, if the cut leaves a readable tail, reads), never panics or leaks.
func TestTruncated(t *testing.T) {
	for _, name := range []string{"TestOrcFile.test1.orc", "TestOrcFile.testUnionAndTimestamp.orc",
		"decimal64_v2.orc", "TestOrcFile.testSnappy.orc", "TestVectorOrcFile.testZstd.0.12.orc",
		"TestVectorOrcFile.testLz4.orc", "orc-file-11-format.orc", "complextypes_iceberg.orc", "over1k_bloom.orc"} {
		data := readExample(t, name)
		cuts := map[int]bool{}
		ends, steps := 48, 97
		if testing.Short() {
			ends, steps = 16, 31
		}
		for i := 0; i < ends && i < len(data); i++ {
			cuts[i] = true
			cuts[len(data)-1-i] = true
		}
		for i := 1; i < steps; i++ {
			cuts[len(data)*i/steps] = true
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		for cut := range cuts {
			_, err := readFile(t, name, data[:cut], nil, 0, mem, nil)
			if err == nil {
				t.Errorf("%s cut at %d of %d: no error", name, cut, len(data))
				continue
			}
			if !errors.Is(err, scanner.ErrCorrupt) && !errors.Is(err, scanner.ErrNotColumnar) && !errors.Is(err, scanner.ErrUnsupported) {
				t.Errorf("%s cut at %d: unclassified error %v", name, cut, err)
			}
			if strings.Contains(err.Error(), "decoder failed") {
				t.Errorf("%s cut at %d: panic: %v", name, cut, err)
			}
		}
		// Damage the data streams (not the tail): reading must fail or
		// succeed cleanly.
		tail := 1 + int(data[len(data)-1]) + 64
		for i := 3; i < len(data)-tail; i += max(1, len(data)/(2*steps)) {
			bad := append([]byte(nil), data...)
			bad[i] ^= 0x5a
			_, err := readFile(t, name, bad, nil, 1000, mem, nil)
			if err != nil && strings.Contains(err.Error(), "decoder failed") {
				t.Errorf("%s flipped byte %d: panic: %v", name, i, err)
			}
		}
		mem.AssertSize(t, 0)
	}
}

// TestProjection: names, dotted paths, request order, missing names, and
// that only the projected columns' streams are announced and read.
func TestProjection(t *testing.T) {
	data := readExample(t, "TestOrcFile.testSeek.orc")
	src := &memSource{data: data}
	f, err := Open(context.Background(), "testSeek", src, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Project([]string{"string1", "middle.list", "nope", "int1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Schema.String(); !strings.Contains(got, "string1: type=utf8") || p.Schema.NumFields() != 3 ||
		p.Schema.Field(0).Name != "string1" || p.Schema.Field(1).Name != "middle" || p.Schema.Field(2).Name != "int1" {
		t.Fatalf("schema %v", p.Schema)
	}
	if len(p.Missing) != 1 || p.Missing[0] != "nope" {
		t.Errorf("missing %v", p.Missing)
	}
	if len(p.Groups) != len(f.ft.stripes) {
		t.Fatalf("%d groups for %d stripes", len(p.Groups), len(f.ft.stripes))
	}
	all, _ := f.Project(nil)
	for i, g := range p.Groups {
		if g.Rows != int64(f.ft.stripes[i].numberOfRows) || g.Bytes <= 0 || g.Bytes >= all.Groups[i].Bytes || g.MemBytes <= 0 {
			t.Errorf("group %d: %+v (all columns: %+v)", i, g, all.Groups[i])
		}
		// The stripe's projected streams are held in one buffer while it
		// decodes, plus a decompression block per stream.
		if g.WorkBytes <= g.Bytes || g.WorkBytes >= all.Groups[i].WorkBytes {
			t.Errorf("group %d: work bytes %d for %d stream bytes (all columns: %d)", i, g.WorkBytes, g.Bytes, all.Groups[i].WorkBytes)
		}
	}
	// Sub-field projection: a struct with only the chosen child.
	sp, err := f.Project([]string{"map", "middle.list.int1x", "list"})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Schema.NumFields() != 2 || len(sp.Missing) != 1 {
		t.Errorf("schema %v missing %v", sp.Schema, sp.Missing)
	}

	src.prefetched, src.reads = nil, nil
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := int64(0)
	err = f.Read(context.Background(), p, scanner.ReadOptions{Groups: []int{1, 3}, BatchRows: 700, Mem: mem}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		if rec.NumRows() > 700 {
			t.Errorf("batch of %d rows", rec.NumRows())
		}
		if !rec.Schema().Equal(p.Schema) {
			t.Errorf("batch schema %v", rec.Schema())
		}
		rows += rec.NumRows()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := p.Groups[1].Rows + p.Groups[3].Rows; rows != want {
		t.Errorf("read %d rows, want %d", rows, want)
	}
	// Everything read was announced, and the announced bytes are the
	// projected streams of the two stripes.
	var announced int64
	for _, rs := range src.prefetched {
		for _, r := range rs {
			announced += r.Len
		}
	}
	if announced != p.Groups[1].Bytes+p.Groups[3].Bytes {
		t.Errorf("announced %d bytes, projected streams are %d", announced, p.Groups[1].Bytes+p.Groups[3].Bytes)
	}
	var read int64
	for _, r := range src.reads {
		read += r.Len
	}
	if read != announced {
		t.Errorf("read %d bytes, announced %d", read, announced)
	}

	// Values of a sub-field projection equal the same field read whole.
	check := func(cols []string) []string {
		var out []string
		_, err := readFile(t, "testSeek", data, cols, 5000, memory.DefaultAllocator, func(rec arrow.RecordBatch) {
			st := rec.Column(0).(*array.Struct)
			l := st.Field(0).(*array.List)
			for i := 0; i < 3; i++ {
				out = append(out, show(valueJSON(l, i)))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if a, b := check([]string{"middle"}), check([]string{"middle.list"}); strings.Join(a, "") != strings.Join(b, "") {
		t.Errorf("middle.list differs: %v vs %v", a, b)
	}
	// Paths look through a list to its struct element's fields, as the
	// Parquet reader's do: every field named is the element whole.
	if a, b := check([]string{"middle"}), check([]string{"middle.list.int1", "middle.list.string1"}); strings.Join(a, "") != strings.Join(b, "") {
		t.Errorf("middle.list.int1 and middle.list.string1 differ from middle: %v vs %v", a, b)
	}
	lp, err := f.Project([]string{"middle.list.string1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := lp.Schema.Field(0).Type.String(); len(lp.Missing) > 0 || got != "struct<list: list<item: struct<string1: utf8>, nullable>>" {
		t.Errorf("middle.list.string1: type %s, missing %v", got, lp.Missing)
	}

	// Cancellation stops the read.
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = f.Read(ctx, p, scanner.ReadOptions{BatchRows: 100, Mem: mem}, func(rec arrow.RecordBatch) error {
		rec.Release()
		n++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("after cancel: %v, %d batches", err, n)
	}
	// No columns of the file: row counts only.
	mp, _ := f.Project([]string{"nope"})
	rows = 0
	if err := f.Read(context.Background(), mp, scanner.ReadOptions{Mem: mem}, func(rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		rec.Release()
		return nil
	}); err != nil || rows != f.NumRows() {
		t.Errorf("rows-only read: %d rows, %v", rows, err)
	}
}

// TestStripeStatistics reads the stripe statistics of the metadata
// section (planning uses them; pushdown will).
func TestStripeStatistics(t *testing.T) {
	// Stripe statistics and file metadata.
	f, err := openBytes(t, "s", readExample(t, "TestOrcFile.testStripeLevelStats.orc"))
	if err != nil {
		t.Fatal(err)
	}
	if st := f.stripeColumnStats(0); len(f.stripeStats) != 3 || len(st) < 2 || st[1].intStats == nil || f.statsErr != nil {
		t.Errorf("stripe stats: %d stripes, err %v", len(f.stripeStats), f.statsErr)
	}
	if f.ft.softwareVersion == "" && !f.ft.hasWriter {
		t.Logf("no writer info")
	}
}
