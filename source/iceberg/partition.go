package iceberg

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	ice "github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// partitionScalar converts an identity partition value, as iceberg-go
// decodes it from a manifest, to a scalar of its column's Arrow type. A
// nil value is a null scalar.
func partitionScalar(v any, dt arrow.DataType) (scalar.Scalar, error) {
	if v == nil {
		return scalar.MakeNullScalar(dt), nil
	}
	var s scalar.Scalar
	switch x := v.(type) {
	case bool:
		s = scalar.NewBooleanScalar(x)
	case int32:
		s = scalar.NewInt32Scalar(x)
	case int64:
		s = scalar.NewInt64Scalar(x)
	case int:
		s = scalar.NewInt64Scalar(int64(x))
	case float32:
		s = scalar.NewFloat32Scalar(x)
	case float64:
		s = scalar.NewFloat64Scalar(x)
	case string:
		s = scalar.NewStringScalar(x)
	case []byte:
		s = scalar.NewBinaryScalar(memory.NewBufferBytes(x), arrow.BinaryTypes.Binary)
	case ice.Date:
		s = scalar.NewDate32Scalar(arrow.Date32(x))
	case ice.Time:
		s = scalar.NewTime64Scalar(arrow.Time64(x), arrow.FixedWidthTypes.Time64us)
	case ice.Timestamp:
		s = scalar.NewTimestampScalar(arrow.Timestamp(x), &arrow.TimestampType{Unit: arrow.Microsecond})
	case ice.TimestampNano:
		s = scalar.NewTimestampScalar(arrow.Timestamp(x), &arrow.TimestampType{Unit: arrow.Nanosecond})
	case ice.Decimal:
		t, ok := dt.(*arrow.Decimal128Type)
		if !ok || int(t.Scale) != x.Scale {
			return nil, fmt.Errorf("decimal of scale %d for a column of type %s", x.Scale, dt)
		}
		return scalar.NewDecimal128Scalar(decimal128.Num(x.Val), dt), nil
	case uuid.UUID:
		b := x
		s = scalar.NewFixedSizeBinaryScalar(memory.NewBufferBytes(b[:]), &arrow.FixedSizeBinaryType{ByteWidth: 16})
	default:
		return nil, fmt.Errorf("partition value %v of Go type %T", v, v)
	}
	if arrow.TypeEqual(s.DataType(), dt) {
		return s, nil
	}
	out, err := s.CastTo(dt)
	if err != nil {
		return nil, fmt.Errorf("partition value %v as %s: %w", v, dt, err)
	}
	return out, nil
}
