package delta

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/source"
)

// The examples of PROTOCOL.md, "Deletion Vectors".
const (
	specRelativeDV = "ab^-aqEH.-t@S}K{vb[*k^"
	specInlineDV   = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L"
)

func TestDVFileName(t *testing.T) {
	got, err := dvFileName(specRelativeDV)
	if want := "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"; err != nil || got != want {
		t.Errorf("dvFileName = %q %v, want %q", got, err, want)
	}
	got, err = dvFileName(specRelativeDV[2:])
	if want := "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"; err != nil || got != want {
		t.Errorf("without prefix: %q %v, want %q", got, err, want)
	}
	for _, bad := range []string{"short", "..^-aqEH.-t@S}K{vb[*k^", "a/^-aqEH.-t@S}K{vb[*k^", "ab^-aqEH.-t@S}K{vb[*k~", "#####aqEH.-t@S}K{vb[*k^"} {
		if _, err := dvFileName(bad); !errors.Is(err, errDV) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

// portableRows decodes the portable 64-bit roaring bitmap of a deletion
// vector made of array containers only (as the spec's example is), enough
// to check the inline example's rows without a roaring library.
func portableRows(t *testing.T, b []byte) []uint64 {
	t.Helper()
	if binary.LittleEndian.Uint32(b) != dvMagic {
		t.Fatalf("no magic")
	}
	b = b[4:]
	buckets := binary.LittleEndian.Uint64(b)
	b = b[8:]
	var out []uint64
	for ; buckets > 0; buckets-- {
		high := uint64(binary.LittleEndian.Uint32(b))
		b = b[4:]
		cookie := binary.LittleEndian.Uint32(b)
		if cookie != 12346 {
			t.Fatalf("cookie %d: only array containers without runs are decoded here", cookie)
		}
		n := int(binary.LittleEndian.Uint32(b[4:]))
		b = b[8:]
		keys := make([]uint64, n)
		cards := make([]int, n)
		for i := 0; i < n; i++ {
			keys[i] = uint64(binary.LittleEndian.Uint16(b[4*i:]))
			cards[i] = int(binary.LittleEndian.Uint16(b[4*i+2:])) + 1
		}
		b = b[4*n+4*n:] // key/cardinality pairs, then offsets
		for i := 0; i < n; i++ {
			for j := 0; j < cards[i]; j++ {
				low := uint64(binary.LittleEndian.Uint16(b))
				b = b[2:]
				out = append(out, high<<32|keys[i]<<16|low)
			}
		}
	}
	return out
}

func TestDVDeleteInline(t *testing.T) {
	d := &dvDescriptor{StorageType: "i", PathOrInlineDv: specInlineDV, SizeInBytes: 40, Cardinality: 6}
	del, err := dvDelete(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if del.Kind != source.DeletionVector || del.Cardinality != 6 || del.Object.Name != "" {
		t.Errorf("delete: %+v", del)
	}
	in := del.Inline
	// The spec's example is in the native layout (40 bytes), rewritten
	// as portable (44 bytes): magic, one bucket, its key, the same 32-bit
	// bitmap.
	if len(in) != 52 || binary.BigEndian.Uint32(in) != 44 || binary.BigEndian.Uint32(in[48:]) != crc32.ChecksumIEEE(in[4:48]) {
		t.Fatalf("framing of %x", in)
	}
	rows := portableRows(t, in[4:48])
	if want := []uint64{3, 4, 7, 11, 18, 29}; !equalU64(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
	for _, bad := range []*dvDescriptor{
		{StorageType: "i", PathOrInlineDv: specInlineDV, SizeInBytes: 44},
		{StorageType: "i", PathOrInlineDv: specInlineDV, SizeInBytes: 20},
		{StorageType: "i", PathOrInlineDv: specInlineDV[:49], SizeInBytes: 40},
		{StorageType: "i", PathOrInlineDv: "0000000000", SizeInBytes: 8},
	} {
		if _, err := dvDelete(bad, nil); !errors.Is(err, errDV) {
			t.Errorf("%+v: err = %v", bad, err)
		}
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDVDeleteFiles(t *testing.T) {
	tbl := &Table{location: "s3://bucket/mytable"}
	off := int64(4)
	del, err := dvDelete(&dvDescriptor{StorageType: "u", PathOrInlineDv: specRelativeDV, Offset: &off, SizeInBytes: 40, Cardinality: 6}, tbl.resolve)
	if err != nil {
		t.Fatal(err)
	}
	if del.Object.Name != "s3://bucket/mytable/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin" || del.Offset != 4 || del.Length != 48 || del.Inline != nil {
		t.Errorf("u: %+v", del)
	}
	del, err = dvDelete(&dvDescriptor{StorageType: "p", PathOrInlineDv: "s3://other/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", SizeInBytes: 40, Cardinality: 6}, tbl.resolve)
	if err != nil {
		t.Fatal(err)
	}
	if del.Object.Name != "s3://other/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin" || del.Offset != 0 || del.Length != 48 {
		t.Errorf("p: %+v", del)
	}
}

func TestResolve(t *testing.T) {
	tbl := &Table{location: "data/t"}
	for _, c := range []struct{ in, want string }{
		{"part-0.parquet", "data/t/part-0.parquet"},
		{"p=b%2520c/q=1/f.parquet", "data/t/p=b%20c/q=1/f.parquet"},
		{"p=x%253Ay/f.parquet", "data/t/p=x%3Ay/f.parquet"},
		{"p=a:b/f.parquet", "data/t/p=a:b/f.parquet"},
		{"s3://bucket/a%20b/f.parquet", "s3://bucket/a b/f.parquet"},
		{"s3a://bucket/f.parquet", "s3://bucket/f.parquet"},
	} {
		got, err := tbl.resolve(c.in, true)
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"../x.parquet", "a/../../x.parquet", "/etc/passwd", "a//b", "%zz", "./a"} {
		if got, err := tbl.resolve(bad, true); err == nil {
			t.Errorf("%s: resolved to %q", bad, got)
		}
	}
	if _, err := tbl.resolve("s3://bucket/f.parquet", false); err == nil {
		t.Error("an absolute path was taken where a relative one belongs")
	}
}

const mappedSchema = `{"type":"struct","fields":[
 {"name":"Key","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-k"}},
 {"name":"rec","type":{"type":"struct","fields":[
   {"name":"a","type":"integer","nullable":false,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-a"}}]},
  "nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-r"}},
 {"name":"part","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-p"}}]}`

func TestParseSchemaMapping(t *testing.T) {
	ts, err := parseSchema(mappedSchema, mappingName)
	if err != nil {
		t.Fatal(err)
	}
	want := arrow.NewSchema([]arrow.Field{
		{Name: "Key", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "rec", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), Nullable: true},
		{Name: "part", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	if !ts.arrow.Equal(want) {
		t.Errorf("schema\n%v\nwant\n%v", ts.arrow, want)
	}
	wantPhys := map[string]string{"Key": "col-k", "rec": "col-r", "rec.a": "col-r.col-a", "part": "col-p"}
	if len(ts.physical) != len(wantPhys) {
		t.Errorf("physical %v", ts.physical)
	}
	for k, v := range wantPhys {
		if ts.physical[k] != v {
			t.Errorf("physical[%s] = %q, want %q", k, ts.physical[k], v)
		}
	}
	if l := ts.leaves["col-r.col-a"]; l.logical != "rec.a" || l.typ.ID() != arrow.INT32 {
		t.Errorf("leaf col-r.col-a: %+v", l)
	}

	ts, err = parseSchema(mappedSchema, mappingID)
	if err != nil {
		t.Fatal(err)
	}
	if md := ts.arrow.Field(1).Type.(*arrow.StructType).Field(0).Metadata; md.FindKey(fieldIDKey) < 0 || md.Values()[md.FindKey(fieldIDKey)] != "3" {
		t.Errorf("id of rec.a: %v", md)
	}
	ts, err = parseSchema(mappedSchema, mappingNone)
	if err != nil || ts.physical != nil || ts.leaves["Key"].logical != "Key" {
		t.Errorf("none: %v %v %v", err, ts.physical, ts.leaves)
	}
}

func TestParseSchemaTypes(t *testing.T) {
	s := `{"type":"struct","fields":[
	 {"name":"a","type":"decimal(10,2)","nullable":true,"metadata":{}},
	 {"name":"b","type":"timestamp","nullable":true,"metadata":{}},
	 {"name":"c","type":"timestamp_ntz","nullable":true,"metadata":{}},
	 {"name":"d","type":{"type":"array","elementType":"short","containsNull":false},"nullable":true,"metadata":{}},
	 {"name":"e","type":{"type":"map","keyType":"string","valueType":"date","valueContainsNull":true},"nullable":false,"metadata":{}},
	 {"name":"f","type":"byte","metadata":{}}]}`
	ts, err := parseSchema(s, mappingNone)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"decimal(10, 2)", "timestamp[us, tz=UTC]", "timestamp[us]", "list<element: int16>", "map<utf8, date32, items_nullable>", "int8"}
	for i, w := range want {
		if got := ts.arrow.Field(i).Type.String(); got != w {
			t.Errorf("field %d: %s, want %s", i, got, w)
		}
	}
	for _, bad := range []string{
		`[]`, `{"type":"array"}`, `{"type":"struct","fields":[{"name":"a","type":"int"}]}`,
		`{"type":"struct","fields":[{"name":"a","type":"decimal(40,2)"}]}`,
		`{"type":"struct","fields":[{"name":"a","type":"long"},{"name":"A","type":"long"}]}`,
		`{"type":"struct","fields":[{"name":"a"}]}`,
		`{"type":"struct","fields":[{"name":"a","type":"long","metadata":{}}]}` + "x",
	} {
		if _, err := parseSchema(bad, mappingNone); !errors.Is(err, errSchema) {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
	if _, err := parseSchema(`{"type":"struct","fields":[{"name":"v","type":"variant"}]}`, mappingNone); !errors.Is(err, errUnsupportedType) {
		t.Errorf("variant: %v", err)
	}
	if _, err := parseSchema(`{"type":"struct","fields":[{"name":"a","type":"long","metadata":{}}]}`, mappingName); !errors.Is(err, errSchema) {
		t.Errorf("name mode without physical names: %v", err)
	}
	deep := strings.Repeat(`{"type":"array","elementType":`, 100) + `"long"` + strings.Repeat(`}`, 100)
	if _, err := parseSchema(`{"type":"struct","fields":[{"name":"a","type":`+deep+`}]}`, mappingNone); !errors.Is(err, errSchema) {
		t.Errorf("deep: %v", err)
	}
	ts, err = parseSchema(`{"type":"struct","fields":[{"name":"l","type":{"type":"array","elementType":{"type":"struct","fields":[
	 {"name":"x","type":"long","metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-x"}}]}},
	 "metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-l"}}]}`, mappingName)
	if err != nil || len(ts.hiddenRenames) != 1 || ts.hiddenRenames[0] != "x" {
		t.Errorf("hidden renames: %v %v", err, ts)
	}
}

func TestParsePartitionValue(t *testing.T) {
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	ntz := &arrow.TimestampType{Unit: arrow.Microsecond}
	dec := &arrow.Decimal128Type{Precision: 5, Scale: 2}
	for _, c := range []struct {
		in   string
		typ  arrow.DataType
		want string // scalar's String(), "null" for nil
	}{
		{"", arrow.PrimitiveTypes.Int64, "null"},
		{"", arrow.BinaryTypes.String, "null"},
		{"a b", arrow.BinaryTypes.String, "a b"},
		{"-12", arrow.PrimitiveTypes.Int8, "-12"},
		{"40000", arrow.PrimitiveTypes.Int32, "40000"},
		{"1.5", arrow.PrimitiveTypes.Float64, "1.5"},
		{"NaN", arrow.PrimitiveTypes.Float32, "NaN"},
		{"true", arrow.FixedWidthTypes.Boolean, "true"},
		{"2026-01-31", arrow.FixedWidthTypes.Date32, "2026-01-31"},
		{"2026-01-01 12:00:00.000001", utc, "2026-01-01 12:00:00.000001Z"},
		{"2026-01-01 12:00:00", utc, "2026-01-01 12:00:00Z"},
		{"1970-01-01T00:00:00.123456Z", utc, "1970-01-01 00:00:00.123456Z"},
		{"2026-01-01T13:00:00+01:00", utc, "2026-01-01 12:00:00Z"},
		{"2026-05-06 07:08:09.000001", ntz, "2026-05-06 07:08:09.000001"},
		{"123.45", dec, "123.45"},
		{"-0.5", dec, "-0.5"},
	} {
		s, err := parsePartitionValue(c.in, c.typ)
		if err != nil {
			t.Errorf("%q as %s: %v", c.in, c.typ, err)
			continue
		}
		got := "null"
		if s != nil {
			got = s.String()
			if !arrow.TypeEqual(s.DataType(), c.typ) {
				t.Errorf("%q: type %s, want %s", c.in, s.DataType(), c.typ)
			}
		}
		if got != c.want {
			t.Errorf("%q as %s: %s, want %s", c.in, c.typ, got, c.want)
		}
	}
	for _, c := range []struct {
		in  string
		typ arrow.DataType
	}{
		{"128", arrow.PrimitiveTypes.Int8}, {"1.5", arrow.PrimitiveTypes.Int64}, {"yes", arrow.FixedWidthTypes.Boolean},
		{"2026-13-01", arrow.FixedWidthTypes.Date32}, {"2026-01-01T00:00:00Z", ntz}, {"1234.5", dec}, {"1.234", dec}, {"x", utc},
	} {
		if _, err := parsePartitionValue(c.in, c.typ); !errors.Is(err, errValue) {
			t.Errorf("%q as %s: err = %v", c.in, c.typ, err)
		}
	}
}

func TestParseStats(t *testing.T) {
	ts, err := parseSchema(`{"type":"struct","fields":[
	 {"name":"i","type":"long","metadata":{}},
	 {"name":"f","type":"double","metadata":{}},
	 {"name":"s","type":"string","metadata":{}},
	 {"name":"ts","type":"timestamp","metadata":{}},
	 {"name":"n","type":{"type":"struct","fields":[{"name":"d","type":"date","metadata":{}}]},"metadata":{}},
	 {"name":"dec","type":"decimal(5,2)","metadata":{}}]}`, mappingNone)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("z", 40)
	st := parseStats(`{"numRecords":10,"minValues":{"i":-3,"f":0.5,"s":"abc","ts":"2026-01-01T00:00:00.123Z","n":{"d":"2026-02-03"},"dec":1.25},
	  "maxValues":{"i":9,"f":"NaN","s":"`+long+`","ts":"2026-01-01T01:00:00.000+01:00","n":{"d":"2026-02-04"},"dec":999.99},
	  "nullCount":{"i":0,"f":2,"s":10,"n":{"d":1},"unknown":3}}`, ts, false)
	check := func(col string, want filter.ColumnStats) {
		t.Helper()
		got, ok := st.ColumnStats(col)
		if !ok {
			t.Errorf("%s: no stats", col)
			return
		}
		str := func(s scalar.Scalar) string {
			if s == nil {
				return "<nil>"
			}
			return s.String()
		}
		if str(got.Min) != str(want.Min) || str(got.Max) != str(want.Max) || got.Nulls != want.Nulls || got.Rows != want.Rows || got.NaN != want.NaN {
			t.Errorf("%s: min %s max %s nulls %d rows %d nan %v, want min %s max %s nulls %d rows %d nan %v", col,
				str(got.Min), str(got.Max), got.Nulls, got.Rows, got.NaN, str(want.Min), str(want.Max), want.Nulls, want.Rows, want.NaN)
		}
	}
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	dec := &arrow.Decimal128Type{Precision: 5, Scale: 2}
	mustScalar := func(s string, typ arrow.DataType) scalar.Scalar {
		v, err := parsePartitionValue(s, typ)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check("i", filter.ColumnStats{Min: scalar.NewInt64Scalar(-3), Max: scalar.NewInt64Scalar(9), Nulls: 0, Rows: 10})
	check("f", filter.ColumnStats{Min: scalar.NewFloat64Scalar(0.5), Nulls: 2, Rows: 10, NaN: true})
	check("s", filter.ColumnStats{Min: scalar.NewStringScalar("abc"), Nulls: 10, Rows: 10})
	check("ts", filter.ColumnStats{Min: mustScalar("2026-01-01 00:00:00.123", utc), Max: mustScalar("2026-01-01 00:00:00.000999", utc), Nulls: -1, Rows: 10})
	check("n.d", filter.ColumnStats{Min: mustScalar("2026-02-03", arrow.FixedWidthTypes.Date32), Max: mustScalar("2026-02-04", arrow.FixedWidthTypes.Date32), Nulls: 1, Rows: 10})
	check("dec", filter.ColumnStats{Min: mustScalar("1.25", dec), Max: mustScalar("999.99", dec), Nulls: -1, Rows: 10})
	if _, ok := st.ColumnStats("unknown"); ok {
		t.Error("stats for a column the schema lacks")
	}

	// With a deletion vector: rows unknown, only zero null counts kept.
	st = parseStats(`{"numRecords":10,"minValues":{"i":1},"nullCount":{"i":0,"f":3,"s":10}}`, ts, true)
	check("i", filter.ColumnStats{Min: scalar.NewInt64Scalar(1), Nulls: 0, Rows: -1})
	if _, ok := st.ColumnStats("f"); ok {
		t.Error("a non-zero null count kept under a deletion vector")
	}
	// Wide bounds: likewise for null counts.
	st = parseStats(`{"numRecords":10,"tightBounds":false,"nullCount":{"i":0,"f":3}}`, ts, false)
	check("i", filter.ColumnStats{Nulls: 0, Rows: 10})
	if _, ok := st.ColumnStats("f"); ok {
		t.Error("a non-zero null count kept under wide bounds")
	}
	for _, bad := range []string{"", "{", "[]", `{"numRecords":"x"}`, `{"minValues":{"i":"1","dec":1.234}}`, `{"minValues":{"i":1.5}}`} {
		if st := parseStats(bad, ts, false); st != nil && len(st) != 0 {
			t.Errorf("%q: %v", bad, st)
		}
	}
}

func TestCheckProtocol(t *testing.T) {
	ok := []*protocolAction{
		{MinReaderVersion: 1}, {MinReaderVersion: 2},
		{MinReaderVersion: 3, ReaderFeatures: []string{"columnMapping", "deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck"}},
	}
	for _, p := range ok {
		if err := checkProtocol(p); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	var se *source.Error
	if err := checkProtocol(&protocolAction{MinReaderVersion: 3, ReaderFeatures: []string{"deletionVectors", "typeWidening"}}); !errors.As(err, &se) || se.Kind != source.Unimplemented || !strings.Contains(se.Msg, "typeWidening") {
		t.Errorf("typeWidening: %v", err)
	}
	if err := checkProtocol(&protocolAction{MinReaderVersion: 4}); !errors.As(err, &se) || se.Kind != source.Unimplemented {
		t.Errorf("reader 4: %v", err)
	}
	// Column mapping is honoured only where the protocol supports it.
	m := &metadataAction{Configuration: map[string]string{"delta.columnMapping.mode": "name"}}
	for _, c := range []struct {
		p    *protocolAction
		want string
	}{
		{&protocolAction{MinReaderVersion: 1}, mappingNone},
		{&protocolAction{MinReaderVersion: 2}, mappingName},
		{&protocolAction{MinReaderVersion: 3}, mappingNone},
		{&protocolAction{MinReaderVersion: 3, ReaderFeatures: []string{"columnMapping"}}, mappingName},
	} {
		if got := mappingMode(c.p, m); got != c.want {
			t.Errorf("%+v: %s, want %s", c.p, got, c.want)
		}
	}
}
