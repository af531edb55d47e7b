package parquet

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// Column chunk statistics, as filter.ColumnStats.
//
// The statistics are read from the footer's Thrift structs directly
// rather than through metadata.ColumnChunkMetaData.Statistics: that API
// picks min_value/max_value or the deprecated min/max by column order
// alone, hides which one it used, fills a missing min or max with a zero
// value, and drops nan_count. What is trusted, and why:
//
//   - min_value/max_value only under the type-defined column order (the
//     spec leaves them undefined without column_orders); the deprecated
//     min/max only for types whose deprecated (signed) order is their
//     order: booleans, floats and signed integers (dates, times and
//     timestamps among them). Not for byte arrays, fixed-length byte
//     arrays, decimals or unsigned integers, which old writers compared as
//     signed.
//   - Both bounds or neither; a NaN bound (nan_in_stats.parquet, pyarrow
//     0.8) or a min above the max drops both.
//   - NaN: floats may hold NaN unless nan_count says there is none.
//   - Writers with known bugs: parquet-mr before 1.8.0 compared strings as
//     signed bytes (PARQUET-251), before 1.10.0 (and parquet-cpp before
//     1.3.0) every type whose order is not signed; parquet-cpp, and
//     parquet-cpp-arrow before 4.0.0, compared decimals in byte arrays
//     wrongly (PARQUET-1655). Their bounds are dropped, as arrow-go's
//     HasCorrectStatistics does.
//   - INT96, intervals, geometry and every type without a defined order
//     (or whose Arrow type scand does not order) have counts only.
//
// Truncated bounds (binary_truncated_min_max.parquet: a prefix for the
// min, a prefix with its last byte raised for the max) are still bounds,
// and filter.MayMatch only ever uses them as bounds.

var _ scanner.Statistics = (*File)(nil)

// statsCache holds the statistics of a file's row groups, decoded on the
// first call and immutable afterwards.
type statsCache struct {
	leaves []statLeaf
	groups []filter.StatsMap // nil until decoded
	whole  filter.StatsMap
}

// statLeaf is a leaf column statistics are given for: a top-level column or
// a field of structs (columns under lists and maps have one value per
// element, not per row, and are skipped).
type statLeaf struct {
	name   string         // dotted path
	col    int            // leaf column index
	typ    arrow.DataType // of the bounds: the column's, a dictionary's values
	float  bool           // may hold NaN
	decode decoder        // nil: no bounds
	useNew bool           // min_value/max_value are in the type's order
	useOld bool           // the deprecated min/max are too
	// phys and bloomDecode are for bloom filter lookups (bloom.go).
	phys        parquet.Type
	bloomDecode decoder
}

// decoder turns a PLAIN-encoded statistics value into a scalar of the
// column's Arrow type; ok is false when the value does not fit it.
type decoder func(b []byte) (s scalar.Scalar, ok bool)

// GroupStats implements scanner.Statistics: row group g's statistics, or
// the whole file's for g = -1; an empty source (everything unknown) for
// any other g. Like File, it is not safe for concurrent use; the source it
// returns is immutable and may be shared.
func (f *File) GroupStats(g int) (src filter.StatsSource) {
	defer func() {
		if r := recover(); r != nil {
			src = filter.StatsMap(nil) // a malformed footer: nothing known
		}
	}()
	md := f.pf.MetaData()
	if f.stats == nil {
		f.stats = &statsCache{leaves: statLeaves(f.manifest, md), groups: make([]filter.StatsMap, md.NumRowGroups())}
	}
	c := f.stats
	switch {
	case g == -1:
		if c.whole == nil {
			c.whole = c.file(md)
		}
		return c.whole
	case g < 0 || g >= len(c.groups):
		return filter.StatsMap(nil)
	}
	if c.groups[g] == nil {
		c.groups[g] = c.group(md, g)
	}
	return c.groups[g]
}

// file merges every row group's statistics.
func (c *statsCache) file(md *metadata.FileMetaData) filter.StatsMap {
	whole := make(filter.StatsMap, len(c.leaves))
	for _, l := range c.leaves {
		whole[l.name] = filter.ColumnStats{Rows: 0, Nulls: 0} // no row groups: no rows
	}
	for g := range c.groups {
		if c.groups[g] == nil {
			c.groups[g] = c.group(md, g)
		}
		for name, s := range c.groups[g] {
			// The empty start holds only nulls: it gives no bounds.
			whole[name] = filter.MergeStats(whole[name], s)
		}
	}
	return whole
}

func (c *statsCache) group(md *metadata.FileMetaData, g int) filter.StatsMap {
	out := make(filter.StatsMap, len(c.leaves))
	for _, l := range c.leaves {
		out[l.name] = l.stats(rawOf(md, g, l.col))
	}
	return out
}

// rawStats is what a column chunk's footer entry says.
type rawStats struct {
	rows           int64 // -1: unknown
	nulls, nans    int64 // -1: not written
	min, max       []byte
	oldMin, oldMax []byte // the deprecated fields
	// exact: the footer says min and max are not truncated
	// (is_min_value_exact, is_max_value_exact).
	exact bool
}

// rawOf reads column chunk col of row group g from arrow-go's Thrift
// structs (whose types live in an internal package: they can be reached,
// not named).
func rawOf(md *metadata.FileMetaData, g, col int) rawStats {
	r := rawStats{rows: -1, nulls: -1, nans: -1}
	rg := md.RowGroups[g]
	if col >= len(rg.Columns) || rg.Columns[col] == nil {
		return r
	}
	cc := rg.Columns[col]
	m := cc.MetaData
	if m == nil || cc.CryptoMetadata != nil {
		// Encrypted columns' statistics are encrypted too, or
		// stripped from the plaintext copy.
		return r
	}
	// A leaf outside lists has one value, null or not, per row; a chunk
	// that says otherwise does not get its rows counted.
	if m.NumValues == rg.NumRows {
		r.rows = rg.NumRows
	}
	st := m.Statistics
	if st == nil {
		return r
	}
	if st.NullCount != nil && *st.NullCount >= 0 && (r.rows < 0 || *st.NullCount <= r.rows) {
		r.nulls = *st.NullCount
	}
	if st.NanCount != nil && *st.NanCount >= 0 {
		r.nans = *st.NanCount
	}
	if st.MinValue != nil && st.MaxValue != nil {
		r.min, r.max = st.MinValue, st.MaxValue
		r.exact = st.IsMinValueExact != nil && *st.IsMinValueExact && st.IsMaxValueExact != nil && *st.IsMaxValueExact
	}
	if st.Min != nil && st.Max != nil {
		r.oldMin, r.oldMax = st.Min, st.Max
	}
	return r
}

// stats turns a chunk's raw statistics into what filter trusts.
func (l *statLeaf) stats(r rawStats) filter.ColumnStats {
	s := filter.ColumnStats{Nulls: r.nulls, Rows: r.rows, NaN: l.float && r.nans != 0}
	if l.decode == nil {
		return s
	}
	lo, hi := r.min, r.max
	if !l.useNew || lo == nil {
		lo, hi = nil, nil
		if l.useOld {
			lo, hi = r.oldMin, r.oldMax
		}
	}
	exact := r.exact && l.useNew
	if lo == nil {
		return s
	}
	min, okMin := l.decode(lo)
	max, okMax := l.decode(hi)
	if !okMin || !okMax || filter.IsNaN(min) || filter.IsNaN(max) {
		return s // one bound is no use, and a NaN one says nothing
	}
	if c, ok := filter.CompareScalars(min, max); !ok || c > 0 {
		return s // a min above the max: the footer is wrong
	}
	s.Min, s.Max = min, max
	s.Exact = exactBounds(l.phys, exact, min, max)
	return s
}

// exactBounds says whether a chunk's decoded bounds are its values: a
// writer truncates only byte arrays, so the other types' are, unless a
// float bound is zero (writers write -0 as the least and +0 as the
// greatest whenever a zero of either sign is there, so the sign may not
// be the data's); a byte array's are when the footer says so.
func exactBounds(phys parquet.Type, flagged bool, min, max scalar.Scalar) bool {
	switch phys {
	case parquet.Types.ByteArray, parquet.Types.FixedLenByteArray:
		return flagged
	case parquet.Types.Float, parquet.Types.Double:
		return !isZero(min) && !isZero(max)
	}
	return true
}

func isZero(v scalar.Scalar) bool {
	switch v := v.(type) {
	case *scalar.Float32:
		return v.Value == 0
	case *scalar.Float64:
		return v.Value == 0
	case *scalar.Float16:
		return v.Value.Float32() == 0
	}
	return false
}

// statLeaves lists the columns of the manifest statistics are given for.
func statLeaves(m *pqarrow.SchemaManifest, md *metadata.FileMetaData) []statLeaf {
	// Not md.WriterVersion(): it caches into the footer, which Open may
	// share between files through the metadata cache.
	writer := metadata.NewAppVersion(md.GetCreatedBy())
	var out []statLeaf
	var walk func(prefix string, f *pqarrow.SchemaField)
	walk = func(prefix string, f *pqarrow.SchemaField) {
		name := prefix + f.Field.Name
		if f.IsLeaf() {
			if d := md.Schema.Column(f.ColIndex); d.MaxRepetitionLevel() == 0 {
				out = append(out, newStatLeaf(name, f.ColIndex, d, f.Field.Type, writer))
			}
			return
		}
		if f.Field.Type.ID() == arrow.STRUCT {
			for i := range f.Children {
				walk(name+".", &f.Children[i])
			}
		}
	}
	for i := range m.Fields {
		walk("", &m.Fields[i])
	}
	return out
}

func newStatLeaf(name string, col int, d *schema.Column, typ arrow.DataType, writer *metadata.AppVersion) statLeaf {
	// Bind types a dictionary column's literals as its values.
	if dt, ok := typ.(*arrow.DictionaryType); ok {
		typ = dt.ValueType
	}
	l := statLeaf{name: name, col: col, typ: typ, phys: d.PhysicalType(), bloomDecode: bloomDecoder(d, typ)}
	switch typ.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		l.float = true
	}
	if !trustedWriter(writer, d) {
		return l
	}
	l.decode = decoderFor(d, typ)
	l.useNew = d.ColumnOrder() == parquet.ColumnOrders.TypeDefinedOrder
	l.useOld = signedDeprecatedOrder(d)
	return l
}

var (
	parquetMR180  = metadata.NewAppVersionExplicit("parquet-mr", 1, 8, 0)
	parquetMR1100 = metadata.NewAppVersionExplicit("parquet-mr", 1, 10, 0)
	parquetCPP130 = metadata.NewAppVersionExplicit("parquet-cpp", 1, 3, 0)
	cppArrow400   = metadata.NewAppVersionExplicit("parquet-cpp-arrow", 4, 0, 0)
)

// trustedWriter says whether the writer computed this column's bounds
// correctly (see the list at the top of this file).
func trustedWriter(w *metadata.AppVersion, d *schema.Column) bool {
	sort := d.SortOrder()
	if sort == schema.SortUNKNOWN {
		return false
	}
	phys := d.PhysicalType()
	bytesLike := phys == parquet.Types.ByteArray || phys == parquet.Types.FixedLenByteArray
	_, decimal := d.LogicalType().(schema.DecimalLogicalType)
	switch w.App {
	case "parquet-mr":
		return !(bytesLike && w.LessThan(parquetMR180)) && !(sort != schema.SortSIGNED && w.LessThan(parquetMR1100))
	case "parquet-cpp":
		return !(sort != schema.SortSIGNED && w.LessThan(parquetCPP130)) && !(decimal && bytesLike)
	case "parquet-cpp-arrow":
		return !(decimal && bytesLike && w.LessThan(cppArrow400))
	}
	return true
}

// signedDeprecatedOrder says whether the deprecated min/max, which writers
// compared as signed values of the physical type, are in the column's own
// order.
func signedDeprecatedOrder(d *schema.Column) bool {
	switch d.PhysicalType() {
	case parquet.Types.Boolean, parquet.Types.Float, parquet.Types.Double:
		return d.LogicalType() == nil || d.LogicalType().IsNone()
	case parquet.Types.Int32, parquet.Types.Int64:
		switch lt := d.LogicalType().(type) {
		case nil, schema.NoLogicalType, schema.DateLogicalType, schema.TimeLogicalType, schema.TimestampLogicalType:
			return true
		case schema.IntLogicalType:
			return lt.IsSigned()
		}
	}
	return false
}

// decoderFor is how the column's statistics values become scalars of its
// Arrow type, nil when scand does not map that pair.
func decoderFor(d *schema.Column, typ arrow.DataType) decoder {
	if dec, ok := d.LogicalType().(schema.DecimalLogicalType); ok {
		return decimalDecoder(dec, typ, d.PhysicalType())
	}
	switch d.PhysicalType() {
	case parquet.Types.Boolean:
		if typ.ID() == arrow.BOOL {
			return func(b []byte) (scalar.Scalar, bool) {
				return scalar.NewBooleanScalar(len(b) == 1 && b[0]&1 == 1), len(b) == 1
			}
		}
	case parquet.Types.Int32:
		return intDecoder(d, typ, 4)
	case parquet.Types.Int64:
		return intDecoder(d, typ, 8)
	case parquet.Types.Float, parquet.Types.Double:
		return floatDecoder(typ)
	case parquet.Types.ByteArray:
		return bytesDecoder(typ)
	case parquet.Types.FixedLenByteArray:
		if _, ok := d.LogicalType().(schema.Float16LogicalType); ok {
			return floatDecoder(typ)
		}
		return bytesDecoder(typ)
	}
	return nil // INT96: its order is undefined
}

func floatDecoder(typ arrow.DataType) decoder {
	switch typ.ID() {
	case arrow.FLOAT16:
		return func(b []byte) (scalar.Scalar, bool) {
			if len(b) != 2 {
				return nil, false
			}
			return scalar.NewFloat16Scalar(float16.FromBits(binary.LittleEndian.Uint16(b))), true
		}
	case arrow.FLOAT32:
		return func(b []byte) (scalar.Scalar, bool) {
			if len(b) != 4 {
				return nil, false
			}
			return scalar.NewFloat32Scalar(math.Float32frombits(binary.LittleEndian.Uint32(b))), true
		}
	case arrow.FLOAT64:
		return func(b []byte) (scalar.Scalar, bool) {
			if len(b) != 8 {
				return nil, false
			}
			return scalar.NewFloat64Scalar(math.Float64frombits(binary.LittleEndian.Uint64(b))), true
		}
	}
	return nil
}

// bytesDecoder makes string and binary bounds. They alias the footer's
// bytes, which nothing modifies: old writers' untruncated bounds can be
// whole values, not worth copying.
func bytesDecoder(typ arrow.DataType) decoder {
	wrap := func(mk func(*memory.Buffer) scalar.Scalar) decoder {
		return func(b []byte) (scalar.Scalar, bool) { return mk(memory.NewBufferBytes(b)), true }
	}
	switch typ.ID() {
	case arrow.STRING, arrow.STRING_VIEW: // Bind types view literals as utf8 and binary
		return wrap(func(b *memory.Buffer) scalar.Scalar { return scalar.NewStringScalarFromBuffer(b) })
	case arrow.LARGE_STRING:
		return wrap(func(b *memory.Buffer) scalar.Scalar { return scalar.NewLargeStringScalarFromBuffer(b) })
	case arrow.BINARY, arrow.BINARY_VIEW:
		return wrap(func(b *memory.Buffer) scalar.Scalar { return scalar.NewBinaryScalar(b, arrow.BinaryTypes.Binary) })
	case arrow.LARGE_BINARY:
		return wrap(func(b *memory.Buffer) scalar.Scalar { return scalar.NewLargeBinaryScalar(b) })
	case arrow.FIXED_SIZE_BINARY:
		width := typ.(*arrow.FixedSizeBinaryType).ByteWidth
		return func(b []byte) (scalar.Scalar, bool) {
			if len(b) != width {
				return nil, false
			}
			return scalar.NewFixedSizeBinaryScalar(memory.NewBufferBytes(b), typ), true
		}
	}
	return nil
}

// intDecoder reads INT32 and INT64 statistics: signed, or unsigned for
// the unsigned integer types (whose min_value/max_value are in unsigned
// order), as the column's Arrow integer or temporal type.
func intDecoder(d *schema.Column, typ arrow.DataType, width int) decoder {
	unsigned := false
	if it, ok := d.LogicalType().(schema.IntLogicalType); ok {
		unsigned = !it.IsSigned()
	}
	mk := intScalar(d.LogicalType(), typ)
	if mk == nil {
		return nil
	}
	return func(b []byte) (scalar.Scalar, bool) {
		if len(b) != width {
			return nil, false
		}
		var v int64
		switch {
		case width == 4 && unsigned:
			v = int64(binary.LittleEndian.Uint32(b))
		case width == 4:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		case unsigned:
			u := binary.LittleEndian.Uint64(b)
			if u > math.MaxInt64 {
				return uint64Scalar(typ, u)
			}
			v = int64(u)
		default:
			v = int64(binary.LittleEndian.Uint64(b))
		}
		return mk(v)
	}
}

func uint64Scalar(typ arrow.DataType, u uint64) (scalar.Scalar, bool) {
	if typ.ID() != arrow.UINT64 {
		return nil, false
	}
	return scalar.NewUint64Scalar(u), true
}

// intScalar makes a scalar of typ from an integer value of a column of
// logical type lt: integers when it fits the type, temporal values when
// the units agree (an Arrow type read with another unit than the file's,
// through a stored Arrow schema, is left without bounds).
func intScalar(lt schema.LogicalType, typ arrow.DataType) func(int64) (scalar.Scalar, bool) {
	inRange := func(lo, hi int64, mk func(int64) scalar.Scalar) func(int64) (scalar.Scalar, bool) {
		return func(v int64) (scalar.Scalar, bool) {
			if v < lo || v > hi {
				return nil, false
			}
			return mk(v), true
		}
	}
	switch lt.(type) {
	case nil, schema.NoLogicalType, schema.IntLogicalType:
		return integerScalar(typ, inRange)
	case schema.DateLogicalType:
		switch typ.ID() {
		case arrow.DATE32:
			return inRange(math.MinInt32, math.MaxInt32, func(v int64) scalar.Scalar { return scalar.NewDate32Scalar(arrow.Date32(v)) })
		case arrow.DATE64: // days, read as milliseconds
			const day = 86_400_000
			return inRange(math.MinInt64/day, math.MaxInt64/day, func(v int64) scalar.Scalar { return scalar.NewDate64Scalar(arrow.Date64(v * day)) })
		}
	case schema.TimeLogicalType:
		if unit, ok := arrowUnit(lt); ok && typ.ID() == arrow.TIME32 && typ.(*arrow.Time32Type).Unit == unit {
			return inRange(math.MinInt32, math.MaxInt32, func(v int64) scalar.Scalar { return scalar.NewTime32Scalar(arrow.Time32(v), typ) })
		}
		if unit, ok := arrowUnit(lt); ok && typ.ID() == arrow.TIME64 && typ.(*arrow.Time64Type).Unit == unit {
			return inRange(math.MinInt64, math.MaxInt64, func(v int64) scalar.Scalar { return scalar.NewTime64Scalar(arrow.Time64(v), typ) })
		}
	case schema.TimestampLogicalType:
		if unit, ok := arrowUnit(lt); ok && typ.ID() == arrow.TIMESTAMP && typ.(*arrow.TimestampType).Unit == unit {
			return inRange(math.MinInt64, math.MaxInt64, func(v int64) scalar.Scalar { return scalar.NewTimestampScalar(arrow.Timestamp(v), typ) })
		}
	}
	return nil
}

type rangeMaker = func(lo, hi int64, mk func(int64) scalar.Scalar) func(int64) (scalar.Scalar, bool)

// integerScalar is intScalar for the Arrow integer types.
func integerScalar(typ arrow.DataType, inRange rangeMaker) func(int64) (scalar.Scalar, bool) {
	switch typ.ID() {
	case arrow.INT8:
		return inRange(math.MinInt8, math.MaxInt8, func(v int64) scalar.Scalar { return scalar.NewInt8Scalar(int8(v)) })
	case arrow.INT16:
		return inRange(math.MinInt16, math.MaxInt16, func(v int64) scalar.Scalar { return scalar.NewInt16Scalar(int16(v)) })
	case arrow.INT32:
		return inRange(math.MinInt32, math.MaxInt32, func(v int64) scalar.Scalar { return scalar.NewInt32Scalar(int32(v)) })
	case arrow.INT64:
		return inRange(math.MinInt64, math.MaxInt64, func(v int64) scalar.Scalar { return scalar.NewInt64Scalar(v) })
	case arrow.UINT8:
		return inRange(0, math.MaxUint8, func(v int64) scalar.Scalar { return scalar.NewUint8Scalar(uint8(v)) })
	case arrow.UINT16:
		return inRange(0, math.MaxUint16, func(v int64) scalar.Scalar { return scalar.NewUint16Scalar(uint16(v)) })
	case arrow.UINT32:
		return inRange(0, math.MaxUint32, func(v int64) scalar.Scalar { return scalar.NewUint32Scalar(uint32(v)) })
	case arrow.UINT64:
		return inRange(0, math.MaxInt64, func(v int64) scalar.Scalar { return scalar.NewUint64Scalar(uint64(v)) })
	}
	return nil
}

// arrowUnit is the Arrow unit of a Parquet TIME or TIMESTAMP type.
func arrowUnit(lt schema.LogicalType) (arrow.TimeUnit, bool) {
	var u schema.TimeUnitType
	switch t := lt.(type) {
	case schema.TimeLogicalType:
		u = t.TimeUnit()
	case schema.TimestampLogicalType:
		u = t.TimeUnit()
	default:
		return 0, false
	}
	switch u {
	case schema.TimeUnitMillis:
		return arrow.Millisecond, true
	case schema.TimeUnitMicros:
		return arrow.Microsecond, true
	case schema.TimeUnitNanos:
		return arrow.Nanosecond, true
	}
	return 0, false
}

// decimalDecoder reads decimal statistics: INT32 and INT64 as integers,
// byte arrays as big-endian two's complement, into the column's decimal
// type when its scale is the file's.
func decimalDecoder(dec schema.DecimalLogicalType, typ arrow.DataType, phys parquet.Type) decoder {
	dt, ok := typ.(arrow.DecimalType)
	if !ok || dt.GetScale() != dec.Scale() || (typ.ID() != arrow.DECIMAL128 && typ.ID() != arrow.DECIMAL256) {
		return nil
	}
	wide := typ.ID() == arrow.DECIMAL256
	return func(b []byte) (scalar.Scalar, bool) {
		var be [32]byte // sign-extended big-endian
		switch {
		case phys == parquet.Types.Int32 && len(b) == 4:
			binary.BigEndian.PutUint64(be[24:], uint64(int64(int32(binary.LittleEndian.Uint32(b)))))
			signExtend(be[:24], be[24]&0x80 != 0)
		case phys == parquet.Types.Int64 && len(b) == 8:
			binary.BigEndian.PutUint64(be[24:], binary.LittleEndian.Uint64(b))
			signExtend(be[:24], be[24]&0x80 != 0)
		case (phys == parquet.Types.ByteArray || phys == parquet.Types.FixedLenByteArray) && len(b) > 0 && len(b) <= 32:
			copy(be[32-len(b):], b)
			signExtend(be[:32-len(b)], b[0]&0x80 != 0)
		default:
			return nil, false
		}
		if wide {
			w := func(i int) uint64 { return binary.BigEndian.Uint64(be[8*i:]) }
			return scalar.NewDecimal256Scalar(decimal256.New(w(0), w(1), w(2), w(3)), typ), true
		}
		// A 128-bit value: the top 16 bytes must be its sign.
		hi, lo := int64(binary.BigEndian.Uint64(be[16:])), binary.BigEndian.Uint64(be[24:])
		if !sameSign(be[:16], hi < 0) {
			return nil, false
		}
		return scalar.NewDecimal128Scalar(decimal128.New(hi, lo), typ), true
	}
}

func signExtend(b []byte, negative bool) {
	fill := byte(0)
	if negative {
		fill = 0xFF
	}
	for i := range b {
		b[i] = fill
	}
}

func sameSign(b []byte, negative bool) bool {
	fill := byte(0)
	if negative {
		fill = 0xFF
	}
	for _, c := range b {
		if c != fill {
			return false
		}
	}
	return true
}
