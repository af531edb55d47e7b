package parquet

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Which columns the native reader decodes, and how their stored values
// become Arrow's.
//
// A column's values are stored at one width (stored: 4 for INT32, 12 for
// INT96, the type length for FIXED_LEN_BYTE_ARRAY) and output at another
// (width). Where the two layouts agree bit for bit (integers, floats,
// dates, float16, fixed-size binary) conv is nil and a PLAIN page can be
// sliced into an array without a copy. Otherwise conv rewrites values as
// they are copied, the way pqarrow does:
//
//   - decimals stored as INT32 or INT64 are sign-extended to decimal128
//     (or decimal256), little-endian;
//   - decimals stored as FIXED_LEN_BYTE_ARRAY hold big-endian two's
//     complement in the fewest bytes the precision needs; they are
//     reversed and sign-extended;
//   - INT96 timestamps become int64 in the output's unit, wrapping around
//     as pyarrow does (toTimestamp in types.go has the arithmetic);
//   - 8- and 16-bit integers, stored as INT32, keep their low bytes.
//
// Dictionary pages are converted once, when they are loaded, so that
// gathering from them stays a copy of width bytes.

// nativeKind is how the native reader lays a column's values out.
type nativeKind uint8

const (
	kindFixed nativeKind = iota // width bytes a value
	kindBytes                   // BYTE_ARRAY: offsets and data
	kindBool                    // one bit a value
)

// nativePlan returns how the native reader decodes column c into Arrow
// type t, or false when it does not.
func nativePlan(c *schema.Column, t arrow.DataType) (nativeColumn, bool) {
	col := nativeColumn{typ: t, maxDef: c.MaxDefinitionLevel()}
	phys, lt := c.PhysicalType(), c.LogicalType()
	if dec, ok := lt.(schema.DecimalLogicalType); ok {
		return decimalPlan(col, phys, c.TypeLength(), dec)
	}
	switch phys {
	case parquet.Types.Boolean:
		col.kind = kindBool
		return col, t.ID() == arrow.BOOL
	case parquet.Types.Int96:
		ts, ok := t.(*arrow.TimestampType)
		if !ok {
			return col, false
		}
		col.stored, col.width, col.conv = 12, 8, int96Converter(ts.Unit)
		return col, true
	case parquet.Types.FixedLenByteArray:
		return fixedPlan(col, c.TypeLength(), lt, t)
	case parquet.Types.Int32:
		if w := narrowWidth(t); w > 0 {
			col.stored, col.width, col.conv = 4, w, narrower(w)
			return col, true
		}
	}
	w, ok := nativeWidth(phys, lt, t)
	if w == 0 {
		col.kind = kindBytes
	}
	col.stored, col.width = w, w
	return col, ok
}

// fixedPlan: FIXED_LEN_BYTE_ARRAY columns that Arrow lays out the same
// way (fixed-size binary, float16, uuid).
func fixedPlan(col nativeColumn, n int, lt schema.LogicalType, t arrow.DataType) (nativeColumn, bool) {
	col.stored, col.width = n, n
	if n <= 0 {
		return col, false
	}
	switch t := t.(type) {
	case *arrow.FixedSizeBinaryType:
		return col, t.ByteWidth == n && (lt == nil || lt.Equals(schema.NoLogicalType{}))
	case *arrow.Float16Type:
		_, ok := lt.(schema.Float16LogicalType)
		return col, ok && n == 2
	case arrow.ExtensionType:
		st, ok := t.StorageType().(*arrow.FixedSizeBinaryType)
		_, uuid := lt.(schema.UUIDLogicalType)
		return col, ok && uuid && t.ExtensionName() == "arrow.uuid" && st.ByteWidth == n
	}
	return col, false
}

// decimalPlan: decimals stored as INT32, INT64 or FIXED_LEN_BYTE_ARRAY,
// output as decimal128 or decimal256.
func decimalPlan(col nativeColumn, phys parquet.Type, typeLen int, dec schema.DecimalLogicalType) (nativeColumn, bool) {
	switch col.typ.ID() {
	case arrow.DECIMAL128:
		col.width = 16
	case arrow.DECIMAL256:
		col.width = 32
	default:
		return col, false
	}
	switch phys {
	case parquet.Types.Int32:
		col.stored, col.conv = 4, signExtender(4, col.width, false)
	case parquet.Types.Int64:
		col.stored, col.conv = 8, signExtender(8, col.width, false)
	case parquet.Types.FixedLenByteArray:
		if typeLen <= 0 || typeLen > col.width {
			return col, false
		}
		col.stored, col.conv = typeLen, signExtender(typeLen, col.width, true)
	default:
		return col, false
	}
	return col, true
}

// signExtender returns a conv that widens values of from bytes
// (little-endian, or big-endian when bigEndian) to little-endian two's
// complement of to bytes (a multiple of 8).
func signExtender(from, to int, bigEndian bool) func(dst, src []byte) {
	if from <= 8 {
		// The common case (precision up to 18): the value fits an int64,
		// sign-extended by shifts; the higher words are its sign.
		shift := uint(64 - 8*from)
		return func(dst, src []byte) {
			for i := 0; i < len(src)/from; i++ {
				s := src[i*from : (i+1)*from]
				var u uint64
				if bigEndian {
					for _, b := range s {
						u = u<<8 | uint64(b)
					}
				} else {
					for j := from - 1; j >= 0; j-- {
						u = u<<8 | uint64(s[j])
					}
				}
				v := int64(u<<shift) >> shift
				d := dst[i*to : (i+1)*to]
				binary.LittleEndian.PutUint64(d, uint64(v))
				for w := 8; w < to; w += 8 {
					binary.LittleEndian.PutUint64(d[w:], uint64(v>>63))
				}
			}
		}
	}
	return func(dst, src []byte) {
		for i := 0; i < len(src)/from; i++ {
			s, d := src[i*from:(i+1)*from], dst[i*to:(i+1)*to]
			var sign byte
			if bigEndian {
				if s[0]&0x80 != 0 {
					sign = 0xff
				}
				for j := range from {
					d[j] = s[from-1-j]
				}
			} else {
				if s[from-1]&0x80 != 0 {
					sign = 0xff
				}
				copy(d, s)
			}
			for j := from; j < to; j++ {
				d[j] = sign
			}
		}
	}
}

// narrowWidth is the width of the 8- and 16-bit integer types, which
// Parquet stores as INT32; 0 for any other type.
func narrowWidth(t arrow.DataType) int {
	switch t.ID() {
	case arrow.INT8, arrow.UINT8:
		return 1
	case arrow.INT16, arrow.UINT16:
		return 2
	}
	return 0
}

// narrower returns a conv from INT32 to integers of w bytes (1 or 2): the
// low bytes of each value, a truncating cast, as pqarrow converts them
// (a writer's value out of the type's range wraps the same way).
func narrower(w int) func(dst, src []byte) {
	if w == 1 {
		return func(dst, src []byte) {
			dst = dst[:len(src)/4]
			for i := range dst {
				dst[i] = src[4*i]
			}
		}
	}
	return func(dst, src []byte) {
		n := len(src) / 4
		dst = dst[:2*n]
		for i := range n {
			dst[2*i], dst[2*i+1] = src[4*i], src[4*i+1]
		}
	}
}

// int96Converter returns a conv from INT96 to int64 timestamps of unit u.
func int96Converter(u arrow.TimeUnit) func(dst, src []byte) {
	perDay, nanosPer := int96Units(u)
	return func(dst, src []byte) {
		for i := 0; i < len(src)/12; i++ {
			v := src[12*i:]
			nanos := binary.LittleEndian.Uint64(v)
			days := uint64(binary.LittleEndian.Uint32(v[8:])) - julianUnixEpoch
			binary.LittleEndian.PutUint64(dst[8*i:], days*perDay+nanos/nanosPer)
		}
	}
}

// put writes src, stored values, into dst as the column's Arrow values.
func (c *columnCursor) put(dst, src []byte) {
	if c.col.conv == nil {
		copy(dst, src)
		return
	}
	c.col.conv(dst, src)
}

// convertDict rewrites a fixed-width dictionary's values as Arrow's, once,
// into a buffer charged to the read's budget, so that gathering from it is
// a plain copy.
func (c *columnCursor) convertDict(d *nativeDict) error {
	if c.col.conv == nil {
		return nil
	}
	n := int64(d.n) * int64(c.col.width)
	if err := c.acct.reserve(n, "dictionary of "+c.name); err != nil {
		return err
	}
	d.charged += n
	out := make([]byte, n)
	c.col.conv(out, d.values)
	d.values = out
	return nil
}
