package scanner_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/scand/scand/scanner"
)

// bytesSource is a Source over a byte slice.
type bytesSource struct{ *bytes.Reader }

func (b bytesSource) Size() int64 { return b.Reader.Size() }

func source(b string) bytesSource { return bytesSource{bytes.NewReader([]byte(b))} }

func TestDetect(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		want    scanner.Format
		wantErr error
	}{
		{"parquet", "PAR1" + strings.Repeat("x", 8) + "PAR1", scanner.FormatParquet, nil},
		{"encrypted parquet", "PARE" + strings.Repeat("x", 8) + "PARE", scanner.FormatParquet, nil},
		{"parquet without its tail", "PAR1" + strings.Repeat("x", 8), scanner.FormatParquet, scanner.ErrCorrupt},
		{"orc", "ORC" + strings.Repeat("x", 20), scanner.FormatORC, nil},
		{"tiny orc header", "ORC", scanner.FormatORC, nil},
		{"empty", "", scanner.FormatUnknown, scanner.ErrNotColumnar},
		{"csv", "a,b,c\n1,2,3\n", scanner.FormatUnknown, scanner.ErrNotColumnar},
		{"PAR1 only at the end of a short file", "PAR1", scanner.FormatParquet, scanner.ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := scanner.Detect(source(c.file))
			if got != c.want {
				t.Errorf("format = %v, want %v", got, c.want)
			}
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("err = %v, want %v", err, c.wantErr)
			}
		})
	}
}

func TestColumnNames(t *testing.T) {
	addr := arrow.StructOf(
		arrow.Field{Name: "city", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "geo", Type: arrow.StructOf(arrow.Field{Name: "lat", Type: arrow.PrimitiveTypes.Float64})},
	)
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "address", Type: addr},
		{Name: "tags", Type: arrow.ListOf(addr)}, // lists are not walked: their fields are not addressable
	}, nil)
	got := strings.Join(scanner.ColumnNames(s), " ")
	want := "id address address.city address.geo address.geo.lat tags"
	if got != want {
		t.Errorf("ColumnNames = %q, want %q", got, want)
	}
}

func field(name string, t arrow.DataType, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: nullable}
}

func TestUnify(t *testing.T) {
	i64, str := arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String
	meta := arrow.NewMetadata([]string{"k"}, []string{"v"})
	cases := []struct {
		name    string
		schemas [][]arrow.Field
		want    string // arrow.Schema.String of the result
		wantErr string // part of the error message
	}{
		{
			name:    "same schemas",
			schemas: [][]arrow.Field{{field("a", i64, false)}, {field("a", i64, false)}},
			want:    "schema:\n  fields: 1\n    - a: type=int64",
		},
		{
			name:    "nullable in one file is nullable",
			schemas: [][]arrow.Field{{field("a", i64, false)}, {field("a", i64, true)}},
			want:    "schema:\n  fields: 1\n    - a: type=int64, nullable",
		},
		{
			name:    "a column missing from a file becomes nullable, in order of first appearance",
			schemas: [][]arrow.Field{{field("a", i64, false)}, {field("b", str, false), field("a", i64, false)}},
			want:    "schema:\n  fields: 2\n    - a: type=int64\n    - b: type=utf8, nullable",
		},
		{
			name:    "types disagree",
			schemas: [][]arrow.Field{{field("a", i64, false)}, {field("a", str, false)}},
			wantErr: `column "a" is int64 in f0 but utf8 in f1`,
		},
		{
			name:    "field metadata is dropped",
			schemas: [][]arrow.Field{{{Name: "a", Type: i64, Metadata: meta}}},
			want:    "schema:\n  fields: 1\n    - a: type=int64",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var names []string
			var schemas []*arrow.Schema
			for i, fs := range c.schemas {
				names = append(names, "f"+string(rune('0'+i)))
				schemas = append(schemas, arrow.NewSchema(fs, &meta))
			}
			got, err := scanner.Unify(names, schemas)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want it to say %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != c.want {
				t.Errorf("Unify =\n%s\nwant\n%s", got, c.want)
			}
			if got.HasMetadata() {
				t.Errorf("schema metadata kept: %v", got.Metadata())
			}
		})
	}
}

func TestUnknownColumnErrorListsAtMost40(t *testing.T) {
	var avail []string
	for i := range 45 {
		avail = append(avail, "c"+strings.Repeat("x", i))
	}
	msg := (&scanner.UnknownColumnError{Columns: []string{"nope"}, Available: avail}).Error()
	if !strings.Contains(msg, `unknown column "nope"`) || !strings.HasSuffix(msg, "and 5 more") {
		t.Errorf("message = %q", msg)
	}
}

func TestRecoverNamesWhatFailed(t *testing.T) {
	err := func() (err error) {
		defer scanner.Recover(&err, "f.parquet: reading row group 3")
		panic("index out of range")
	}()
	if !errors.Is(err, scanner.ErrCorrupt) || !strings.Contains(err.Error(), "f.parquet: reading row group 3") {
		t.Errorf("err = %v", err)
	}
}
