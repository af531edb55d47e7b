package planner

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

func partitionValuesSeed(t testing.TB, mem memory.Allocator) ([]arrow.Field, []byte) {
	fields := []arrow.Field{
		{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "m", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	}
	values := []scalar.Scalar{
		scalar.NewStringScalar("b c"), scalar.NewDate32Scalar(20454), nil,
		scalar.NewDecimal128Scalar(decimal128.FromI64(1234), fields[3].Type),
	}
	b, err := EncodePartitionValues(fields, values, mem)
	if err != nil {
		t.Fatal(err)
	}
	return fields, b
}

func TestPartitionValuesRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fields, b := partitionValuesSeed(t, mem)
	gotFields, cols, err := DecodePartitionValues(b, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	if !arrow.NewSchema(gotFields, nil).Equal(arrow.NewSchema(fields, nil)) {
		t.Fatalf("fields %v", gotFields)
	}
	got := []string{}
	for i := range fields {
		s, err := scalar.GetScalar(cols[i], 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s.String())
		if r, ok := s.(scalar.Releasable); ok {
			r.Release()
		}
	}
	if want := []string{"b c", "2026-01-01", "null", "12.34"}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("values %q, want %q", got, want)
	}
	// A value of another type than its column is refused.
	if _, err := EncodePartitionValues(fields[:1], []scalar.Scalar{scalar.NewInt64Scalar(1)}, mem); err == nil {
		t.Fatal("int64 value for a string column encoded")
	}
	short := SerializeSchema(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64,
		Metadata: arrow.NewMetadata([]string{partitionValueKey}, []string{"abc"})}}, nil), mem)
	for _, bad := range [][]byte{nil, b[:len(b)/2], short} {
		if _, cols, err := DecodePartitionValues(bad, mem); !errors.Is(err, errBadPartitionValues) {
			for _, c := range cols {
				c.Release()
			}
			t.Errorf("%d bytes: %v", len(bad), err)
		}
	}
}

func FuzzDecodePartitionValues(f *testing.F) {
	_, b := partitionValuesSeed(f, memory.DefaultAllocator)
	f.Add(b)
	f.Add(b[:len(b)-8])
	f.Fuzz(func(t *testing.T, b []byte) {
		_, cols, err := DecodePartitionValues(b, memory.DefaultAllocator)
		if err == nil {
			for _, c := range cols {
				if c.Len() != 1 {
					t.Fatalf("%d values", c.Len())
				}
				c.Release()
			}
		}
	})
}
