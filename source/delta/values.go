package delta

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// errValue marks a partition value or statistic that does not parse as
// its column's type.
var errValue = errors.New("invalid value")

// parsePartitionValue parses a serialized partition value (PROTOCOL.md,
// "Partition Value Serialization") as typ. An empty string is null (nil).
func parsePartitionValue(s string, typ arrow.DataType) (scalar.Scalar, error) {
	if s == "" {
		return nil, nil
	}
	switch t := typ.(type) {
	case *arrow.StringType:
		return scalar.NewStringScalar(s), nil
	case *arrow.BinaryType:
		return scalar.NewBinaryScalar(memory.NewBufferBytes([]byte(s)), t), nil
	case *arrow.BooleanType:
		switch strings.ToLower(s) {
		case "true":
			return scalar.NewBooleanScalar(true), nil
		case "false":
			return scalar.NewBooleanScalar(false), nil
		}
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		v, err := strconv.ParseInt(s, 10, intBits(typ))
		if err == nil {
			return intScalar(v, typ), nil
		}
	case *arrow.Float32Type:
		if v, err := strconv.ParseFloat(s, 32); err == nil {
			return scalar.NewFloat32Scalar(float32(v)), nil
		}
	case *arrow.Float64Type:
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return scalar.NewFloat64Scalar(v), nil
		}
	case *arrow.Date32Type:
		if d, err := time.Parse("2006-01-02", s); err == nil {
			return scalar.NewDate32Scalar(arrow.Date32FromTime(d)), nil
		}
	case *arrow.TimestampType:
		if ts, ok := parseTimestamp(s, t.TimeZone != ""); ok {
			return scalar.NewTimestampScalar(arrow.Timestamp(ts), t), nil
		}
	case *arrow.Decimal128Type:
		if d, err := decimal128.FromString(s, t.Precision, t.Scale); err == nil && d.FitsInPrecision(t.Precision) && exactDecimal(s, t.Scale) {
			return scalar.NewDecimal128Scalar(d, t), nil
		}
	default:
		return nil, fmt.Errorf("partition column of type %s: %w", typ, errUnsupportedType)
	}
	return nil, fmt.Errorf("%q is not a %s: %w", truncate(s, 60), typ, errValue)
}

func intBits(typ arrow.DataType) int {
	return typ.(arrow.FixedWidthDataType).BitWidth()
}

func intScalar(v int64, typ arrow.DataType) scalar.Scalar {
	switch typ.ID() {
	case arrow.INT8:
		return scalar.NewInt8Scalar(int8(v))
	case arrow.INT16:
		return scalar.NewInt16Scalar(int16(v))
	case arrow.INT32:
		return scalar.NewInt32Scalar(int32(v))
	}
	return scalar.NewInt64Scalar(v)
}

// exactDecimal reports whether s has no more fractional digits than scale
// (decimal128.FromString rounds them away).
func exactDecimal(s string, scale int32) bool {
	s = strings.TrimLeft(s, "+-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		return true // exponent form: FitsInPrecision is the check left
	}
	_, frac, _ := strings.Cut(s, ".")
	return int32(len(strings.TrimRight(frac, "0"))) <= scale
}

// timestampLayouts are the spellings partition values and statistics use:
// "2006-01-02 15:04:05[.ffffff]" (Spark's partition values), ISO 8601
// with a zone ("...T...Z", "+01:00"), and ISO 8601 without one
// (statistics of timestamp_ntz).
var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z0700",
}

// parseTimestamp parses s as microseconds since the epoch. A spelling
// without a zone is UTC for a timestamp (PROTOCOL.md leaves it to the
// writer's zone; modern writers write UTC) and wall time for a
// timestamp_ntz. A zone given on a timestamp_ntz is refused.
func parseTimestamp(s string, utc bool) (int64, bool) {
	for i, layout := range timestampLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if i >= 2 && !utc {
			return 0, false
		}
		if t.Year() < -290000 || t.Year() > 290000 {
			return 0, false
		}
		return t.UnixMicro(), true
	}
	return 0, false
}

// floatBound is a statistic of a floating-point column as a bound: NaN
// and infinities carry no bound scand uses.
func floatBound(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}
