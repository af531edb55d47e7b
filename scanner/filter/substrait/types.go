package substrait

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/scand/scand/scanner/filter"
)

// arrowType is the arrow type of a Substrait type, for typed null
// literals and cast targets: the scalar types and the Arrow extension
// types pyarrow declares (u8..u64, large_string, large_binary,
// date_millis).
func (t *translator) arrowType(typ *substraitpb.Type) (arrow.DataType, error) {
	switch k := typ.GetKind().(type) {
	case *substraitpb.Type_Bool:
		return arrow.FixedWidthTypes.Boolean, nil
	case *substraitpb.Type_I8_:
		return arrow.PrimitiveTypes.Int8, nil
	case *substraitpb.Type_I16_:
		return arrow.PrimitiveTypes.Int16, nil
	case *substraitpb.Type_I32_:
		return arrow.PrimitiveTypes.Int32, nil
	case *substraitpb.Type_I64_:
		return arrow.PrimitiveTypes.Int64, nil
	case *substraitpb.Type_Fp32:
		return arrow.PrimitiveTypes.Float32, nil
	case *substraitpb.Type_Fp64:
		return arrow.PrimitiveTypes.Float64, nil
	case *substraitpb.Type_String_, *substraitpb.Type_Varchar, *substraitpb.Type_FixedChar_:
		return arrow.BinaryTypes.String, nil
	case *substraitpb.Type_Binary_:
		return arrow.BinaryTypes.Binary, nil
	case *substraitpb.Type_FixedBinary_:
		if n := k.FixedBinary.GetLength(); n > 0 {
			return &arrow.FixedSizeBinaryType{ByteWidth: int(n)}, nil
		}
	case *substraitpb.Type_Date_:
		return arrow.FixedWidthTypes.Date32, nil
	case *substraitpb.Type_Time_:
		return arrow.FixedWidthTypes.Time64us, nil
	case *substraitpb.Type_Decimal_:
		return decimalType(k.Decimal.GetPrecision(), k.Decimal.GetScale())
	}
	return t.arrowType2(typ)
}

// arrowType2 is arrowType's second half: timestamps and extension types.
func (t *translator) arrowType2(typ *substraitpb.Type) (arrow.DataType, error) {
	switch k := typ.GetKind().(type) {
	case *substraitpb.Type_Timestamp_:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	case *substraitpb.Type_TimestampTz:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case *substraitpb.Type_PrecisionTimestamp_:
		unit, err := timeUnit(k.PrecisionTimestamp.GetPrecision())
		return &arrow.TimestampType{Unit: unit}, err
	case *substraitpb.Type_PrecisionTimestampTz:
		unit, err := timeUnit(k.PrecisionTimestampTz.GetPrecision())
		return &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}, err
	case *substraitpb.Type_UserDefined_:
		if dt, ok := extensionTypes[t.types[k.UserDefined.GetTypeReference()]]; ok {
			return dt, nil
		}
	}
	return nil, filter.Errorf("Substrait type %s is not supported here", typeName(typ))
}

// extensionTypes are Arrow's Substrait extension types
// (format/substrait/extension_types.yaml) that scand can compare.
var extensionTypes = map[string]arrow.DataType{
	"u8": arrow.PrimitiveTypes.Uint8, "u16": arrow.PrimitiveTypes.Uint16,
	"u32": arrow.PrimitiveTypes.Uint32, "u64": arrow.PrimitiveTypes.Uint64,
	"large_string": arrow.BinaryTypes.LargeString, "large_binary": arrow.BinaryTypes.LargeBinary,
	"date_millis": arrow.FixedWidthTypes.Date64,
}

// typeName names the kind of typ, as the Substrait proto spells it.
func typeName(typ *substraitpb.Type) string {
	if typ == nil {
		return "(none)"
	}
	m := typ.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("kind")); fd != nil {
		return string(fd.Name())
	}
	return "(none)"
}
