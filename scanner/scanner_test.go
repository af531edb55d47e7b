package scanner_test

import (
	"bytes"
	"errors"
	"fmt"
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
	other := arrow.NewMetadata([]string{"k"}, []string{"other"})
	noID := arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"-1"})
	id7 := arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"7"})
	cases := []struct {
		name    string
		schemas [][]arrow.Field
		want    string // arrow.Schema.String of the result, when set
		wantErr string // part of the error message
		check   func(*testing.T, *arrow.Schema)
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
			name:    "field metadata comes from the first appearance, without PARQUET:field_id -1",
			schemas: [][]arrow.Field{{{Name: "a", Type: i64, Metadata: meta}}, {{Name: "a", Type: i64, Metadata: other}, {Name: "b", Type: i64, Metadata: noID}}},
			check: func(t *testing.T, s *arrow.Schema) {
				if got := s.Field(0).Metadata; !got.Equal(meta) {
					t.Errorf("a's metadata = %v, want the first file's %v", got, meta)
				}
				if s.Field(1).HasMetadata() {
					t.Errorf("b's metadata = %v, want none (field_id -1 is arrow-go's marker for no id)", s.Field(1).Metadata)
				}
			},
		},
		{
			name:    "nested PARQUET:field_id -1 markers go, real ids stay",
			schemas: [][]arrow.Field{{{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "x", Type: i64, Metadata: noID}, arrow.Field{Name: "y", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: i64, Metadata: noID}), Metadata: id7})}}},
			check: func(t *testing.T, s *arrow.Schema) {
				st := s.Field(0).Type.(*arrow.StructType)
				if st.Field(0).HasMetadata() || st.Field(1).Type.(*arrow.ListType).ElemField().HasMetadata() {
					t.Errorf("nested -1 ids kept: %v", st)
				}
				if !st.Field(1).Metadata.Equal(id7) {
					t.Errorf("real field id dropped: %v", st.Field(1).Metadata)
				}
			},
		},
	}
	for _, c := range promotionCases() {
		cases = append(cases, struct {
			name    string
			schemas [][]arrow.Field
			want    string
			wantErr string
			check   func(*testing.T, *arrow.Schema)
		}{name: c.name, schemas: [][]arrow.Field{{field("v", c.first, true)}, {field("v", c.then, true)}}, wantErr: c.wantErr,
			check: func(t *testing.T, s *arrow.Schema) {
				if !arrow.TypeEqual(s.Field(0).Type, c.want) {
					t.Errorf("unified type %s, want %s", s.Field(0).Type, c.want)
				}
			}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var names []string
			var schemas []*arrow.Schema
			for i, fs := range c.schemas {
				names = append(names, "f"+string(rune('0'+i)))
				m := arrow.NewMetadata([]string{"k"}, []string{fmt.Sprint("v", map[bool]string{true: "", false: "2"}[i == 0])})
				schemas = append(schemas, arrow.NewSchema(fs, &m))
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
			if plain := arrow.NewSchema(got.Fields(), nil); c.want != "" && plain.String() != c.want {
				t.Errorf("Unify =\n%s\nwant\n%s", plain, c.want)
			}
			if !got.Metadata().Equal(meta) {
				t.Errorf("schema metadata %v, want the first file's %v", got.Metadata(), meta)
			}
			if c.check != nil {
				c.check(t, got)
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

// promotionCases is the promotion table of docs/schemas.md: the type of
// the first file wins, what can be cast to it is, the rest is an error.
func promotionCases() []struct {
	name        string
	first, then arrow.DataType
	want        arrow.DataType
	wantErr     string
} {
	ts := func(u arrow.TimeUnit, tz string) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: tz} }
	dict := func(idx arrow.DataType) arrow.DataType {
		return &arrow.DictionaryType{IndexType: idx, ValueType: arrow.BinaryTypes.String}
	}
	i32, i64, f64, str := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String
	return []struct {
		name        string
		first, then arrow.DataType
		want        arrow.DataType
		wantErr     string
	}{
		{name: "timestamp us then ns: us", first: ts(arrow.Microsecond, ""), then: ts(arrow.Nanosecond, ""), want: ts(arrow.Microsecond, "")},
		{name: "timestamp ns then ms: ns", first: ts(arrow.Nanosecond, ""), then: ts(arrow.Millisecond, ""), want: ts(arrow.Nanosecond, "")},
		{name: "timestamp zones: the first", first: ts(arrow.Microsecond, "UTC"), then: ts(arrow.Nanosecond, "Europe/Paris"), want: ts(arrow.Microsecond, "UTC")},
		{name: "int32 then int64: int32", first: i32, then: i64, want: i32},
		{name: "uint32 then int64: uint32", first: arrow.PrimitiveTypes.Uint32, then: i64, want: arrow.PrimitiveTypes.Uint32},
		{name: "float64 then int64: float64", first: f64, then: i64, want: f64},
		{name: "int64 then float64: int64", first: i64, then: f64, want: i64},
		{name: "string then large_string: string", first: str, then: arrow.BinaryTypes.LargeString, want: str},
		{name: "binary then string: binary", first: arrow.BinaryTypes.Binary, then: str, want: arrow.BinaryTypes.Binary},
		{name: "dictionary then string: dictionary", first: dict(arrow.PrimitiveTypes.Int8), then: str, want: dict(arrow.PrimitiveTypes.Int8)},
		{name: "string then dictionary: string", first: str, then: dict(arrow.PrimitiveTypes.Int32), want: str},
		{name: "dictionary indices int8 then int16: int8", first: dict(arrow.PrimitiveTypes.Int8), then: dict(arrow.PrimitiveTypes.Int16), want: dict(arrow.PrimitiveTypes.Int8)},
		{name: "null then int64: int64", first: arrow.Null, then: i64, want: i64},
		{name: "int64 then null: int64", first: i64, then: arrow.Null, want: i64},
		{name: "int64 then string: error", first: i64, then: str, wantErr: `column "v" is int64 in f0 but utf8 in f1`},
		{name: "string then int64: error", first: str, then: i64, wantErr: `column "v" is utf8 in f0 but int64 in f1`},
		{name: "date32 then timestamp: error", first: arrow.FixedWidthTypes.Date32, then: ts(arrow.Microsecond, ""), wantErr: "in f1"},
		{name: "bool then int64: error", first: arrow.FixedWidthTypes.Boolean, then: i64, wantErr: "in f1"},
		{name: "decimals of two scales: error", first: &arrow.Decimal128Type{Precision: 10, Scale: 2}, then: &arrow.Decimal128Type{Precision: 12, Scale: 3}, wantErr: "in f1"},
		{name: "lists of two element types: error", first: arrow.ListOf(i32), then: arrow.ListOf(i64), wantErr: "in f1"},
	}
}
