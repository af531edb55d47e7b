package substrait

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/scand/scand/scanner/filter"
)

// literal translates a Substrait literal to an arrow scalar of the
// matching type. Substrait's timestamp and timestamp_tz are microseconds
// (timestamp_tz is an instant, read as UTC); precision_timestamp carries
// its unit.
func (t *translator) literal(l *substraitpb.Expression_Literal) (scalar.Scalar, error) {
	switch v := l.GetLiteralType().(type) {
	case *substraitpb.Expression_Literal_Boolean:
		return scalar.NewBooleanScalar(v.Boolean), nil
	case *substraitpb.Expression_Literal_I8:
		if v.I8 < math.MinInt8 || v.I8 > math.MaxInt8 {
			return nil, filter.Errorf("Substrait i8 literal %d is out of range", v.I8)
		}
		return scalar.NewInt8Scalar(int8(v.I8)), nil
	case *substraitpb.Expression_Literal_I16:
		if v.I16 < math.MinInt16 || v.I16 > math.MaxInt16 {
			return nil, filter.Errorf("Substrait i16 literal %d is out of range", v.I16)
		}
		return scalar.NewInt16Scalar(int16(v.I16)), nil
	case *substraitpb.Expression_Literal_I32:
		return scalar.NewInt32Scalar(v.I32), nil
	case *substraitpb.Expression_Literal_I64:
		return scalar.NewInt64Scalar(v.I64), nil
	case *substraitpb.Expression_Literal_Fp32:
		return scalar.NewFloat32Scalar(v.Fp32), nil
	case *substraitpb.Expression_Literal_Fp64:
		return scalar.NewFloat64Scalar(v.Fp64), nil
	case *substraitpb.Expression_Literal_String_, *substraitpb.Expression_Literal_VarChar_,
		*substraitpb.Expression_Literal_FixedChar:
		s, _ := literalText(l)
		return scalar.NewStringScalar(s), nil
	case *substraitpb.Expression_Literal_Binary:
		return scalar.NewBinaryScalar(memory.NewBufferBytes(v.Binary), arrow.BinaryTypes.Binary), nil
	case *substraitpb.Expression_Literal_FixedBinary:
		typ := &arrow.FixedSizeBinaryType{ByteWidth: len(v.FixedBinary)}
		return scalar.NewFixedSizeBinaryScalar(memory.NewBufferBytes(v.FixedBinary), typ), nil
	case *substraitpb.Expression_Literal_Date:
		return scalar.NewDate32Scalar(arrow.Date32(v.Date)), nil
	case *substraitpb.Expression_Literal_Time:
		return scalar.NewTime64Scalar(arrow.Time64(v.Time), arrow.FixedWidthTypes.Time64us), nil
	}
	return t.literal2(l)
}

// literal2 is literal's second half: the types that need checking.
func (t *translator) literal2(l *substraitpb.Expression_Literal) (scalar.Scalar, error) {
	switch v := l.GetLiteralType().(type) {
	case *substraitpb.Expression_Literal_Timestamp:
		return timestamp(v.Timestamp, arrow.Microsecond, ""), nil
	case *substraitpb.Expression_Literal_TimestampTz:
		return timestamp(v.TimestampTz, arrow.Microsecond, "UTC"), nil
	case *substraitpb.Expression_Literal_PrecisionTimestamp_:
		return precisionTimestamp(v.PrecisionTimestamp, "")
	case *substraitpb.Expression_Literal_PrecisionTimestampTz:
		return precisionTimestamp(v.PrecisionTimestampTz, "UTC")
	case *substraitpb.Expression_Literal_Decimal_:
		return decimal(v.Decimal)
	case *substraitpb.Expression_Literal_Null:
		typ, err := t.arrowType(v.Null)
		if err != nil {
			return nil, err
		}
		return scalar.MakeNullScalar(typ), nil
	case *substraitpb.Expression_Literal_UserDefined_:
		return t.userDefined(v.UserDefined)
	}
	return nil, filter.Errorf("Substrait literal of kind %q is not supported", literalKind(l))
}

func literalKind(l *substraitpb.Expression_Literal) string {
	m := l.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("literal_type")); fd != nil {
		return string(fd.Name())
	}
	return "none"
}

func timestamp(v int64, unit arrow.TimeUnit, tz string) scalar.Scalar {
	return scalar.NewTimestampScalar(arrow.Timestamp(v), &arrow.TimestampType{Unit: unit, TimeZone: tz})
}

func precisionTimestamp(p *substraitpb.Expression_Literal_PrecisionTimestamp, tz string) (scalar.Scalar, error) {
	unit, err := timeUnit(p.GetPrecision())
	if err != nil {
		return nil, err
	}
	return timestamp(p.GetValue(), unit, tz), nil
}

// timeUnit is the arrow unit of a Substrait precision (digits after the
// second); arrow has no unit for the others.
func timeUnit(precision int32) (arrow.TimeUnit, error) {
	switch precision {
	case 0:
		return arrow.Second, nil
	case 3:
		return arrow.Millisecond, nil
	case 6:
		return arrow.Microsecond, nil
	case 9:
		return arrow.Nanosecond, nil
	}
	return 0, filter.Errorf("Substrait timestamp precision %d is not supported (0, 3, 6 or 9)", precision)
}

// decimal reads a Substrait decimal: 16 bytes of little-endian two's
// complement.
func decimal(d *substraitpb.Expression_Literal_Decimal) (scalar.Scalar, error) {
	b := d.GetValue()
	if len(b) != 16 {
		return nil, filter.Errorf("Substrait decimal literal has %d bytes, not 16", len(b))
	}
	typ, err := decimalType(d.GetPrecision(), d.GetScale())
	if err != nil {
		return nil, err
	}
	n := decimal128.New(int64(binary.LittleEndian.Uint64(b[8:])), binary.LittleEndian.Uint64(b[:8]))
	if !n.FitsInPrecision(typ.Precision) {
		return nil, filter.Errorf("Substrait decimal literal %s does not fit in precision %d",
			n.ToString(typ.Scale), typ.Precision)
	}
	return scalar.NewDecimal128Scalar(n, typ), nil
}

func decimalType(precision, scale int32) (*arrow.Decimal128Type, error) {
	if precision < 1 || precision > 38 || scale < 0 || scale > precision {
		return nil, filter.Errorf("Substrait decimal(%d, %d) is not supported (precision 1 to 38, scale 0 to precision)",
			precision, scale)
	}
	return &arrow.Decimal128Type{Precision: precision, Scale: scale}, nil
}

// userDefined reads the unsigned integers pyarrow writes as Arrow's
// extension types u8, u16, u32 and u64, holding a google.protobuf
// UInt64Value (or UInt32Value).
func (t *translator) userDefined(u *substraitpb.Expression_Literal_UserDefined) (scalar.Scalar, error) {
	name := t.types[u.GetTypeReference()]
	max, ok := unsignedTypes[name]
	if !ok || u.GetTypeAliasReference() != 0 || len(u.GetTypeParameters()) > 0 {
		return nil, filter.Errorf("Substrait user-defined literal of type %q is not supported (supported: u8, u16, u32, u64)", name)
	}
	var v uint64
	var w32 wrapperspb.UInt32Value
	var w64 wrapperspb.UInt64Value
	switch {
	case u.GetValue().MessageIs(&w64) && u.GetValue().UnmarshalTo(&w64) == nil:
		v = w64.GetValue()
	case u.GetValue().MessageIs(&w32) && u.GetValue().UnmarshalTo(&w32) == nil:
		v = uint64(w32.GetValue())
	default:
		return nil, filter.Errorf("Substrait literal of type %q must hold a google.protobuf.UInt64Value", name)
	}
	if v > max {
		return nil, filter.Errorf("Substrait literal %d is out of range for type %q", v, name)
	}
	switch name {
	case "u8":
		return scalar.NewUint8Scalar(uint8(v)), nil
	case "u16":
		return scalar.NewUint16Scalar(uint16(v)), nil
	case "u32":
		return scalar.NewUint32Scalar(uint32(v)), nil
	}
	return scalar.NewUint64Scalar(v), nil
}

// unsignedTypes are Arrow's Substrait extension types for unsigned
// integers, with their largest value.
var unsignedTypes = map[string]uint64{"u8": math.MaxUint8, "u16": math.MaxUint16, "u32": math.MaxUint32, "u64": math.MaxUint64}
