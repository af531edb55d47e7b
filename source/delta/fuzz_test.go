package delta

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func FuzzParseCommit(f *testing.F) {
	for _, s := range []string{
		protoV1 + "\n" + metaV1,
		`{"add":{"path":"p=a/f%20g.parquet","partitionValues":{"p":"1"},"size":10,"stats":"{\"numRecords\":3,\"minValues\":{\"a\":1},\"maxValues\":{\"a\":9},\"nullCount\":{\"a\":0}}","deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":40,"cardinality":6}}}`,
		`{"add":{"path":"x","size":1,"deletionVector":{"storageType":"i","pathOrInlineDv":"` + specInlineDV + `","sizeInBytes":40,"cardinality":6}}}`,
		`{"remove":{"path":"x","deletionVector":{"storageType":"p","pathOrInlineDv":"s3://b/dv.bin","sizeInBytes":40,"cardinality":6}}}`,
		`{"commitInfo":{"inCommitTimestamp":1}}` + "\n\n" + `{"sidecar":{"path":"a.parquet","sizeInBytes":1}}`,
		`{"add":{"path":1}}`, "{", "",
	} {
		f.Add([]byte(s))
	}
	ts, err := parseSchema(`{"type":"struct","fields":[{"name":"a","type":"long","metadata":{}},{"name":"p","type":"integer","metadata":{}}]}`, mappingNone)
	if err != nil {
		f.Fatal(err)
	}
	tbl := &Table{location: "t"}
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := parseCommit(data)
		if err != nil {
			return
		}
		s := newSnapshot(nil)
		_ = s.apply(0, acts)
		for _, a := range acts {
			if a.Add == nil {
				continue
			}
			_, _ = tbl.resolve(a.Add.Path, true)
			parseStats(a.Add.Stats, ts, a.Add.DeletionVector != nil)
			if v := a.Add.PartitionValues["p"]; v != nil {
				_, _ = parsePartitionValue(*v, arrow.PrimitiveTypes.Int32)
			}
			if a.Add.DeletionVector != nil {
				_, _ = dvDelete(a.Add.DeletionVector, tbl.resolve)
			}
		}
	})
}

func FuzzDeletionVectorPath(f *testing.F) {
	for _, s := range []string{specRelativeDV, specRelativeDV[2:], specInlineDV, "#####", "", "0000000000"} {
		f.Add(s, int64(40))
	}
	tbl := &Table{location: "t"}
	f.Fuzz(func(t *testing.T, s string, size int64) {
		if b, err := z85Decode(s); err == nil && len(b) != len(s)/5*4 {
			t.Fatalf("z85 %q decoded to %d bytes", s, len(b))
		}
		if name, err := dvFileName(s); err == nil && len(name) < len("deletion_vector_.bin")+36 {
			t.Fatalf("dvFileName(%q) = %q", s, name)
		}
		for _, st := range []string{"u", "i", "p"} {
			d := &dvDescriptor{StorageType: st, PathOrInlineDv: s, SizeInBytes: size, Cardinality: 1}
			if d.check() != nil {
				continue
			}
			del, err := dvDelete(d, tbl.resolve)
			if err == nil && st == "i" && len(del.Inline) < 12 {
				t.Fatalf("inline %q framed to %d bytes", s, len(del.Inline))
			}
		}
		if b, err := z85Decode(s); err == nil {
			_, _ = nativeToPortable(b)
		}
	})
}

func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{mappedSchema, `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}`, `{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"decimal(3,1)"}}}]}`, `[]`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, mode := range []string{mappingNone, mappingName, mappingID} {
			ts, err := parseSchema(s, mode)
			if err == nil && ts.arrow == nil {
				t.Fatal("no schema and no error")
			}
		}
	})
}

func FuzzPartitionValue(f *testing.F) {
	for _, s := range []string{"1", "-0.5", "2026-01-01", "2026-01-01 00:00:00.000001", "1970-01-01T00:00:00Z", "true", "NaN", ""} {
		f.Add(s)
	}
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float32, arrow.FixedWidthTypes.Boolean,
		arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		&arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.Decimal128Type{Precision: 5, Scale: 2}, arrow.BinaryTypes.String,
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range types {
			v, err := parsePartitionValue(s, typ)
			if err == nil && v != nil && !arrow.TypeEqual(v.DataType(), typ) {
				t.Fatalf("%q as %s gave %s", s, typ, v.DataType())
			}
		}
	})
}

// FuzzStatsDecoders checks that scanStats, where it decides, decodes as
// encoding/json does.
func FuzzStatsDecoders(f *testing.F) {
	for _, s := range []string{
		`{"numRecords":4,"minValues":{"id":100,"v":0.0,"s":"a","n":{"d":"2026-01-01"}},"maxValues":{"id":103,"v":3.0},"nullCount":{"id":0,"v":0,"n":{"d":1}}}`,
		`{"numRecords":null,"tightBounds":false,"minValues":null,"other":[1,{"x":true},"y",null,-1.5e3]}`,
		` { "numRecords" : 1 , "minValues" : { "a" : [ ] } } trailing`,
		`{"numRecords":1.0}`, `{"minValues":{"a":1,"a":2}}`, `{"NumRecords":3}`, `null`, `{"minValues":{"s":"\u00e9"}}`, `{`, `[]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := scanStats(s)
		if !ok {
			return
		}
		ref, ok := decodeStats(s)
		if !ok {
			t.Fatalf("scanStats took %q, encoding/json refuses it", s)
		}
		eq := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
		if !eq(fast.numRecords, ref.numRecords) || (fast.tightBounds == nil) != (ref.tightBounds == nil) ||
			fast.tightBounds != nil && *fast.tightBounds != *ref.tightBounds {
			t.Fatalf("%q: numRecords/tightBounds differ", s)
		}
		key := func(e statEntry) string { return fmt.Sprintf("%d\x00%s\x00%s", e.section, e.name, e.raw) }
		var a, b []string
		for _, e := range fast.entries {
			a = append(a, key(e))
		}
		for _, e := range ref.entries {
			b = append(b, key(e))
		}
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("%q: entries\n%q\nencoding/json\n%q", s, a, b)
		}
	})
}
