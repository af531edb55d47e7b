package filter

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

func binScalar(b string, t arrow.DataType) scalar.Scalar {
	buf := memory.NewBufferBytes([]byte(b))
	switch t.ID() {
	case arrow.FIXED_SIZE_BINARY:
		return scalar.NewFixedSizeBinaryScalar(buf, t)
	case arrow.LARGE_BINARY:
		return scalar.NewLargeBinaryScalar(buf)
	case arrow.LARGE_STRING:
		return scalar.NewLargeStringScalarFromBuffer(buf)
	case arrow.STRING:
		return scalar.NewStringScalarFromBuffer(buf)
	}
	return scalar.NewBinaryScalar(buf, t)
}

type compareCase struct {
	name string
	a, b scalar.Scalar
	want int
	ok   bool
}

// compareCases covers each ordered type, and each reason not to order.
func compareCases() []compareCase {
	ms := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	us := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	naive := &arrow.TimestampType{Unit: arrow.Millisecond}
	d10 := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	d10s3 := &arrow.Decimal128Type{Precision: 10, Scale: 3}
	d50 := &arrow.Decimal256Type{Precision: 50, Scale: 2}
	t32 := &arrow.Time32Type{Unit: arrow.Millisecond}
	t64 := &arrow.Time64Type{Unit: arrow.Nanosecond}
	fsb := &arrow.FixedSizeBinaryType{ByteWidth: 2}
	return []compareCase{
		{"int8", scalar.NewInt8Scalar(-3), scalar.NewInt8Scalar(2), -1, true},
		{"int16", scalar.NewInt16Scalar(7), scalar.NewInt16Scalar(7), 0, true},
		{"int32", scalar.NewInt32Scalar(9), scalar.NewInt32Scalar(-9), 1, true},
		{"int64", scalar.NewInt64Scalar(math.MinInt64), scalar.NewInt64Scalar(math.MaxInt64), -1, true},
		{"uint8", scalar.NewUint8Scalar(200), scalar.NewUint8Scalar(100), 1, true},
		{"uint16", scalar.NewUint16Scalar(1), scalar.NewUint16Scalar(65535), -1, true},
		{"uint32 high bit", scalar.NewUint32Scalar(1 << 31), scalar.NewUint32Scalar(1), 1, true},
		{"uint64 high bit", scalar.NewUint64Scalar(1 << 63), scalar.NewUint64Scalar(1), 1, true},
		{"float16", scalar.NewFloat16Scalar(float16.New(1.5)), scalar.NewFloat16Scalar(float16.New(-2)), 1, true},
		{"float32", scalar.NewFloat32Scalar(1), scalar.NewFloat32Scalar(2), -1, true},
		{"float64", scalar.NewFloat64Scalar(math.Inf(-1)), scalar.NewFloat64Scalar(-1e308), -1, true},
		{"-0 == +0", scalar.NewFloat64Scalar(math.Copysign(0, -1)), scalar.NewFloat64Scalar(0), 0, true},
		{"NaN", scalar.NewFloat64Scalar(math.NaN()), scalar.NewFloat64Scalar(0), 0, false},
		{"float16 NaN", scalar.NewFloat16Scalar(float16.NaN()), scalar.NewFloat16Scalar(float16.New(0)), 0, false},
		{"decimal128", scalar.NewDecimal128Scalar(decimal128.FromI64(-5), d10), scalar.NewDecimal128Scalar(decimal128.FromI64(3), d10), -1, true},
		{"decimal128 scales differ", scalar.NewDecimal128Scalar(decimal128.FromI64(5), d10), scalar.NewDecimal128Scalar(decimal128.FromI64(3), d10s3), 0, false},
		{"decimal256", scalar.NewDecimal256Scalar(decimal256.FromI64(7), d50), scalar.NewDecimal256Scalar(decimal256.FromI64(-7), d50), 1, true},
		{"date32", scalar.NewDate32Scalar(10), scalar.NewDate32Scalar(11), -1, true},
		{"date64", scalar.NewDate64Scalar(86400000), scalar.NewDate64Scalar(0), 1, true},
		{"time32", scalar.NewTime32Scalar(5, t32), scalar.NewTime32Scalar(5, t32), 0, true},
		{"time64", scalar.NewTime64Scalar(1, t64), scalar.NewTime64Scalar(2, t64), -1, true},
		{"timestamp", scalar.NewTimestampScalar(-1, ms), scalar.NewTimestampScalar(1, ms), -1, true},
		{"timestamp units differ", scalar.NewTimestampScalar(1, ms), scalar.NewTimestampScalar(1, us), 0, false},
		{"timestamp zones differ", scalar.NewTimestampScalar(1, ms), scalar.NewTimestampScalar(1, naive), 0, false},
		{"string bytes", scalar.NewStringScalar("é"), scalar.NewStringScalar("z"), 1, true},
		{"string prefix", scalar.NewStringScalar("ab"), scalar.NewStringScalar("abc"), -1, true},
		{"large_string", binScalar("b", arrow.BinaryTypes.LargeString), binScalar("a", arrow.BinaryTypes.LargeString), 1, true},
		{"binary unsigned", binScalar("\xff", arrow.BinaryTypes.Binary), binScalar("\x01", arrow.BinaryTypes.Binary), 1, true},
		{"large_binary", binScalar("", arrow.BinaryTypes.LargeBinary), binScalar("\x00", arrow.BinaryTypes.LargeBinary), -1, true},
		{"fixed_size_binary", binScalar("\x00\xff", fsb), binScalar("\x01\x00", fsb), -1, true},
		{"bool", scalar.NewBooleanScalar(false), scalar.NewBooleanScalar(true), -1, true},
		{"types differ", scalar.NewInt32Scalar(1), scalar.NewInt64Scalar(1), 0, false},
		{"string vs binary", scalar.NewStringScalar("a"), binScalar("a", arrow.BinaryTypes.Binary), 0, false},
		{"null", scalar.MakeNullScalar(arrow.PrimitiveTypes.Int64), scalar.NewInt64Scalar(1), 0, false},
		{"nil", nil, scalar.NewInt64Scalar(1), 0, false},
		{"interval (unordered)", scalar.NewMonthIntervalScalar(1), scalar.NewMonthIntervalScalar(2), 0, false},
	}
}

func TestCompareScalars(t *testing.T) {
	cases := compareCases()
	for _, c := range cases {
		got, ok := CompareScalars(c.a, c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: CompareScalars = %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
		if c.ok {
			if back, _ := CompareScalars(c.b, c.a); back != -c.want {
				t.Errorf("%s: reversed = %d, want %d", c.name, back, -c.want)
			}
		}
	}
}

func TestMergeStats(t *testing.T) {
	a := ColumnStats{Min: i64(1), Max: i64(5), Nulls: 1, Rows: 10}
	b := ColumnStats{Min: i64(-3), Max: i64(4), Nulls: 0, Rows: 5, NaN: true}
	nulls := ColumnStats{Nulls: 4, Rows: 4, NaN: true}
	empty := ColumnStats{Nulls: 0, Rows: 0}
	cases := []struct {
		name string
		a, b ColumnStats
		want ColumnStats
	}{
		{"bounds widen, counts add", a, b, ColumnStats{Min: i64(-3), Max: i64(5), Nulls: 1, Rows: 15, NaN: true}},
		{"unknown bound", a, ColumnStats{Max: i64(9), Nulls: 0, Rows: 1}, ColumnStats{Max: i64(9), Nulls: 1, Rows: 11}},
		{"unknown counts", a, ColumnStats{Min: i64(0), Max: i64(1), Nulls: -1, Rows: -1}, ColumnStats{Min: i64(0), Max: i64(5), Nulls: -1, Rows: -1}},
		{"all-null side gives no bounds", a, nulls, ColumnStats{Min: i64(1), Max: i64(5), Nulls: 5, Rows: 14}},
		{"empty start", empty, b, b},
		{"uncomparable bounds", a, ColumnStats{Min: str("a"), Max: str("b"), Nulls: 0, Rows: 1}, ColumnStats{Nulls: 1, Rows: 11}},
	}
	for _, c := range cases {
		for _, got := range []ColumnStats{MergeStats(c.a, c.b), MergeStats(c.b, c.a)} {
			if !sameStats(got, c.want) {
				t.Errorf("%s: MergeStats = %+v, want %+v", c.name, got, c.want)
			}
		}
	}
}

func sameStats(a, b ColumnStats) bool {
	eq := func(x, y scalar.Scalar) bool {
		if x == nil || y == nil {
			return x == nil && y == nil
		}
		c, ok := CompareScalars(x, y)
		return ok && c == 0
	}
	return eq(a.Min, b.Min) && eq(a.Max, b.Max) && a.Nulls == b.Nulls && a.Rows == b.Rows && a.NaN == b.NaN
}
