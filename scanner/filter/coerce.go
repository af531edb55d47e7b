package filter

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones in TIMESTAMP literals must not depend on the host having zoneinfo (distroless images lack it)
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Coercion is what Bind does to a literal that meets a column: it becomes
// a scalar of the column's value type (valueType), or an *Error. A
// coercion that would change the comparison's meaning is an error, never a
// rounding; a number or instant that lies between two values of the
// column (or beyond them) is not coerced at all: Bind rewrites its
// comparison into one with those values (exact.go), so these rules apply
// to the literals a column can hold:
//
//	literal             column types             rule
//	NULL                any                      null scalar of the value type
//	TRUE/FALSE          bool                     as is
//	Number              int8..int64, uint8..64   integral and in range (else exact.go)
//	Number              float32, float64         nearest float (every decimal literal rounds); overflow is an error
//	Number              decimal128/256(p, s)     at most s fractional digits and p digits (else exact.go)
//	'string'            utf8, large_utf8, views  as is (bytes)
//	'string'            binary types             its UTF-8 bytes; fixed_size_binary needs the exact width
//	'string'            date32/64, timestamp     read as DATE/TIMESTAMP text, as BigQuery and DuckDB do
//	X'bytes'            binary types             as is; to string columns only when valid UTF-8
//	DATE                date32, date64           the day
//	DATE                timestamp (any unit)     its midnight (midnight UTC for a zoned column)
//	TIMESTAMP, no zone  timestamp                wall clock (read as UTC for a zoned column); finer than the unit: exact.go
//	TIMESTAMP, zoned    timestamp with a zone    the instant; against a column without zone: error
//	TIMESTAMP           date32, date64           without zone; not at midnight: exact.go
//	scalar.Scalar       any                      the same type as is; else cast only when exact, by the rules above
//
// Anything else ('abc' or '42' against an int column, a number against a
// string column, TRUE against an int) is an error naming the column, its
// type, the literal and its kind.

// valueType is the type a column's values are compared as, and so the type
// of every literal bound against it. It is the column's own type except for
// encodings that arrow-go's kernels (and scalars) do not take directly:
//   - a dictionary compares as its value type (Eval decodes it);
//   - string_view and binary_view compare as utf8 and binary: arrow-go has
//     no view scalars and no view comparison kernels, so Eval casts views.
func valueType(dt arrow.DataType) arrow.DataType { return ValueType(dt) }

// ValueType is the type a column's bound literals and statistics have:
// its own, but a dictionary's value type, and utf8 or binary for views
// (arrow-go has no view scalars).
func ValueType(dt arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return ValueType(t.ValueType)
	case *arrow.StringViewType:
		return arrow.BinaryTypes.String
	case *arrow.BinaryViewType:
		return arrow.BinaryTypes.Binary
	}
	return dt
}

// target is the column a literal is coerced for: its name and type for
// messages, and the value type the literal's scalar must have.
type target struct {
	name string
	dt   arrow.DataType // the column's type, as the schema says
	vt   arrow.DataType // valueType(dt)
}

func newTarget(name string, dt arrow.DataType) target {
	return target{name: name, dt: dt, vt: valueType(dt)}
}

// coerce turns lit into a Literal whose Value is a scalar of t.vt, or fails
// with an *Error when no value of that type stands for lit.
func (t target) coerce(lit *Literal) (*Literal, error) {
	sc, err := t.value(lit)
	if err != nil {
		return nil, err
	}
	return &Literal{Value: sc}, nil
}

func (t target) value(lit *Literal) (scalar.Scalar, error) {
	switch v := lit.Value.(type) {
	case nil:
		return scalar.MakeNullScalar(t.vt), nil
	case bool:
		if t.vt.ID() == arrow.BOOL {
			return scalar.NewBooleanScalar(v), nil
		}
	case Number:
		return t.number(lit, string(v))
	case string:
		return t.text(lit, v)
	case []byte:
		return t.bytes(lit, v)
	case Date:
		return t.date(lit, string(v))
	case Timestamp:
		return t.timestamp(lit, string(v))
	case scalar.Scalar:
		return t.typed(lit, v)
	}
	return nil, t.mismatch(lit)
}

// mismatch is the error for a literal whose kind the column's type cannot
// hold at all.
func (t target) mismatch(lit *Literal) error {
	return Errorf("cannot compare column %q (%s) with %s (%s)", t.name, t.dt, lit, literalKind(lit.Value))
}

func literalKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case Number:
		return "number"
	case string:
		return "string"
	case []byte:
		return "binary"
	case Date:
		return "date"
	case Timestamp:
		return "timestamp"
	case scalar.Scalar:
		return v.DataType().String()
	}
	return fmt.Sprintf("%T", v)
}

// number coerces a numeric literal's text. Against a float column the text
// is rounded to the nearest float of the column's width, as every float
// literal is (0.1 has no exact binary form); against integer and decimal
// columns it must be exact, or the comparison would change meaning.
func (t target) number(lit *Literal, text string) (scalar.Scalar, error) {
	if isFloat(t.vt) {
		return t.parseFloat(lit, text)
	}
	if !isExactNumeric(t.vt) {
		return nil, t.mismatch(lit)
	}
	r, ok := parseRat(text)
	if !ok {
		shown := text
		if len(shown) > 64 { // a message must not echo a megabyte of digits
			shown = fmt.Sprintf("%s... (%d characters)", shown[:40], len(text))
		}
		return nil, Errorf("literal %s is not a number that column %q (%s) can hold", shown, t.name, t.dt)
	}
	return t.exact(r, text)
}

// maxNumberText bounds the number text parseRat reads: big.Rat takes
// seconds to read a number of a million digits, and no column holds more
// than 76 of them.
const maxNumberText = 4096

// parseRat reads decimal text exactly. big.Rat also reads "1/3", which is
// not a number literal, so it is refused here.
func parseRat(text string) (*big.Rat, bool) {
	if len(text) > maxNumberText || strings.ContainsAny(text, "/_") {
		return nil, false
	}
	return new(big.Rat).SetString(text)
}

func isFloat(dt arrow.DataType) bool {
	return dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64
}

func isExactNumeric(dt arrow.DataType) bool {
	return arrow.IsInteger(dt.ID()) || dt.ID() == arrow.DECIMAL128 || dt.ID() == arrow.DECIMAL256
}

func (t target) parseFloat(lit *Literal, text string) (scalar.Scalar, error) {
	bits := 64
	if t.vt.ID() == arrow.FLOAT32 {
		bits = 32
	}
	f, err := strconv.ParseFloat(text, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, t.outOfRange(text)
		}
		return nil, t.mismatch(lit)
	}
	return floatScalar(t.vt, f), nil
}

func floatScalar(dt arrow.DataType, f float64) scalar.Scalar {
	if dt.ID() == arrow.FLOAT32 {
		return scalar.NewFloat32Scalar(float32(f))
	}
	return scalar.NewFloat64Scalar(f)
}

func (t target) outOfRange(text string) error {
	return Errorf("literal %s is out of range for column %s (%s)", text, t.name, t.dt)
}

// exact coerces an exactly known number to an integer, decimal or float
// column, refusing any rounding.
func (t target) exact(r *big.Rat, text string) (scalar.Scalar, error) {
	switch {
	case arrow.IsInteger(t.vt.ID()):
		return t.integer(r, text)
	case t.vt.ID() == arrow.DECIMAL128 || t.vt.ID() == arrow.DECIMAL256:
		return t.decimal(r, text)
	case isFloat(t.vt):
		f, exact := r.Float64()
		if t.vt.ID() == arrow.FLOAT32 {
			f32, exact32 := r.Float32()
			f, exact = float64(f32), exact32
		}
		if !exact {
			return nil, Errorf("literal %s has no exact value in column %q (%s)", text, t.name, t.dt)
		}
		return floatScalar(t.vt, f), nil
	}
	return nil, Errorf("cannot compare column %q (%s) with %s (number)", t.name, t.dt, text)
}

func (t target) integer(r *big.Rat, text string) (scalar.Scalar, error) {
	if !r.IsInt() {
		return nil, Errorf("literal %s is not an integer, and column %q (%s) holds only integers", text, t.name, t.dt)
	}
	n := r.Num()
	bits := t.vt.(arrow.FixedWidthDataType).BitWidth()
	if arrow.IsUnsignedInteger(t.vt.ID()) {
		if n.Sign() < 0 || n.BitLen() > bits {
			return nil, t.outOfRange(text)
		}
		return unsignedScalar(t.vt.ID(), n.Uint64()), nil
	}
	limit := new(big.Int).Lsh(big.NewInt(1), uint(bits-1)) // 2^(bits-1)
	if n.Cmp(limit) >= 0 || n.Cmp(new(big.Int).Neg(limit)) < 0 {
		return nil, t.outOfRange(text)
	}
	return signedScalar(t.vt.ID(), n.Int64()), nil
}

func signedScalar(id arrow.Type, v int64) scalar.Scalar {
	switch id {
	case arrow.INT8:
		return scalar.NewInt8Scalar(int8(v))
	case arrow.INT16:
		return scalar.NewInt16Scalar(int16(v))
	case arrow.INT32:
		return scalar.NewInt32Scalar(int32(v))
	}
	return scalar.NewInt64Scalar(v)
}

func unsignedScalar(id arrow.Type, v uint64) scalar.Scalar {
	switch id {
	case arrow.UINT8:
		return scalar.NewUint8Scalar(uint8(v))
	case arrow.UINT16:
		return scalar.NewUint16Scalar(uint16(v))
	case arrow.UINT32:
		return scalar.NewUint32Scalar(uint32(v))
	}
	return scalar.NewUint64Scalar(v)
}

// decimal scales r to the column's scale; a literal with more fractional
// digits than the scale, or more digits than the precision, has no value in
// the column and is refused rather than rounded.
func (t target) decimal(r *big.Rat, text string) (scalar.Scalar, error) {
	dec := t.vt.(arrow.DecimalType)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec.GetScale())), nil)
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	if !scaled.IsInt() {
		return nil, Errorf("literal %s has more fractional digits than column %q (%s) holds (scale %d)",
			text, t.name, t.dt, dec.GetScale())
	}
	n := scaled.Num()
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec.GetPrecision())), nil)
	if new(big.Int).Abs(n).Cmp(limit) >= 0 {
		return nil, Errorf("literal %s has more digits than column %q (%s) holds (precision %d)",
			text, t.name, t.dt, dec.GetPrecision())
	}
	if t.vt.ID() == arrow.DECIMAL128 {
		return scalar.NewDecimal128Scalar(decimal128.FromBigInt(n), t.vt), nil
	}
	return scalar.NewDecimal256Scalar(decimal256.FromBigInt(n), t.vt), nil
}

// text coerces a character string: to string and binary columns as its
// bytes, and to date and timestamp columns as DATE or TIMESTAMP text, as
// BigQuery and DuckDB read a string compared with a date. It never becomes
// a number: '42' against an int column is an error, like 'abc'.
func (t target) text(lit *Literal, s string) (scalar.Scalar, error) {
	switch t.vt.ID() {
	case arrow.STRING:
		return scalar.NewStringScalar(s), nil
	case arrow.LARGE_STRING:
		return scalar.NewLargeStringScalar(s), nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return t.bytes(lit, []byte(s))
	case arrow.DATE32, arrow.DATE64:
		if v, err := t.date(lit, s); err == nil {
			return v, nil
		}
		v, err := t.timestamp(lit, s) // a midnight timestamp is a date too
		if err != nil {
			return nil, Errorf("cannot compare column %q (%s) with %s: not a date; write 'YYYY-MM-DD' or DATE 'YYYY-MM-DD'", t.name, t.dt, lit)
		}
		return v, nil
	case arrow.TIMESTAMP:
		v, err := t.timestamp(lit, s)
		if err != nil {
			return nil, Errorf("column %q (%s) with %s: %v", t.name, t.dt, lit, detail(err))
		}
		return v, nil
	}
	return nil, t.mismatch(lit)
}

// detail is an error's message without the package's prefix, to nest it.
func detail(err error) string {
	if fe, ok := err.(*Error); ok {
		return fe.Msg
	}
	return err.Error()
}

// bytes coerces a binary string. A string column takes it only when it is
// valid UTF-8, since a string column holds nothing else.
func (t target) bytes(lit *Literal, b []byte) (scalar.Scalar, error) {
	buf := memory.NewBufferBytes(b)
	switch t.vt.ID() {
	case arrow.BINARY:
		return scalar.NewBinaryScalar(buf, arrow.BinaryTypes.Binary), nil
	case arrow.LARGE_BINARY:
		return scalar.NewLargeBinaryScalar(buf), nil
	case arrow.FIXED_SIZE_BINARY:
		if w := t.vt.(*arrow.FixedSizeBinaryType).ByteWidth; len(b) != w {
			return nil, Errorf("literal %s is %d bytes, but column %q (%s) holds %d-byte values", lit, len(b), t.name, t.dt, w)
		}
		return scalar.NewFixedSizeBinaryScalar(buf, t.vt), nil
	case arrow.STRING, arrow.LARGE_STRING:
		if !utf8.Valid(b) {
			return nil, Errorf("literal %s is not UTF-8, and column %q (%s) holds only UTF-8", lit, t.name, t.dt)
		}
		return t.text(lit, string(b))
	}
	return nil, t.mismatch(lit)
}

func (t target) date(lit *Literal, text string) (scalar.Scalar, error) {
	if !isTemporal(t.vt) {
		return nil, t.mismatch(lit)
	}
	w, err := parseDate(text)
	if err != nil {
		return nil, Errorf("%s: %v", lit, err)
	}
	return t.instant(lit, w, false)
}

func (t target) timestamp(lit *Literal, text string) (scalar.Scalar, error) {
	if !isTemporal(t.vt) {
		return nil, t.mismatch(lit)
	}
	w, zoned, err := parseTimestamp(text)
	if err != nil {
		return nil, Errorf("%s: %v", lit, err)
	}
	return t.instant(lit, w, zoned)
}

func isTemporal(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// instant builds a date or timestamp scalar from w: a wall clock read as
// UTC, or, when zoned, the UTC form of an instant the literal named.
func (t target) instant(lit *Literal, w time.Time, zoned bool) (scalar.Scalar, error) {
	if ts, ok := t.vt.(*arrow.TimestampType); ok {
		return t.timestampValue(lit, ts, w, zoned)
	}
	// Dates are calendar days with no zone: an instant has no day until a
	// zone is chosen, and a time of day other than midnight no date at all.
	if zoned {
		return nil, Errorf("%s names an instant, but column %q (%s) holds calendar dates; drop the zone", lit, t.name, t.dt)
	}
	if w.Hour() != 0 || w.Minute() != 0 || w.Second() != 0 || w.Nanosecond() != 0 {
		return nil, Errorf("%s is not at midnight, and column %q (%s) holds dates", lit, t.name, t.dt)
	}
	days := w.Unix() / 86400 // exact: w is a UTC midnight
	if t.vt.ID() == arrow.DATE64 {
		return scalar.NewDate64Scalar(arrow.Date64(days * 86_400_000)), nil
	}
	if days < math.MinInt32 || days > math.MaxInt32 {
		return nil, t.outOfRange(lit.String())
	}
	return scalar.NewDate32Scalar(arrow.Date32(days)), nil
}

// timestampValue counts w in the column's unit. A zoned literal names an
// instant; a column without a zone holds wall clocks of an unknown zone, so
// comparing the two would pick a zone for the user: refused (as BigQuery
// refuses DATETIME against TIMESTAMP).
func (t target) timestampValue(lit *Literal, ts *arrow.TimestampType, w time.Time, zoned bool) (scalar.Scalar, error) {
	if zoned && ts.TimeZone == "" {
		return nil, Errorf("%s names an instant, but column %q (%s) has no time zone; drop the zone to compare wall clocks",
			lit, t.name, t.dt)
	}
	step := int64(ts.Unit.Multiplier()) // nanoseconds per unit
	ns := int64(w.Nanosecond())
	if ns%step != 0 {
		return nil, Errorf("%s is more precise than column %q (%s) holds", lit, t.name, t.dt)
	}
	v := new(big.Int).Mul(big.NewInt(w.Unix()), big.NewInt(int64(time.Second)/step))
	v.Add(v, big.NewInt(ns/step))
	if !v.IsInt64() {
		return nil, t.outOfRange(lit.String())
	}
	return scalar.NewTimestampScalar(arrow.Timestamp(v.Int64()), t.vt), nil
}

var (
	dateText      = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})$`)
	timestampText = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(.*)$`)
	offsetText    = regexp.MustCompile(`^([+-])(\d{2})(?::?(\d{2}))?$`)
)

// parseDate reads DATE text, YYYY-MM-DD, as UTC midnight.
func parseDate(text string) (time.Time, error) {
	m := dateText.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return time.Time{}, fmt.Errorf("not a date; write YYYY-MM-DD")
	}
	return civil(m[1:4], nil, "", time.UTC)
}

// parseTimestamp reads TIMESTAMP text: a date, an optional time of day
// (HH:MM[:SS[.fraction]], after a space or T) and an optional zone (Z, an
// offset +HH[:MM], or an IANA name). Without a zone the wall clock is
// returned as UTC and zoned is false.
func parseTimestamp(text string) (w time.Time, zoned bool, err error) {
	m := timestampText.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return time.Time{}, false, fmt.Errorf("not a timestamp; write YYYY-MM-DD HH:MM:SS[.fraction][zone]")
	}
	loc, err := zone(m[8])
	if err != nil {
		return time.Time{}, false, err
	}
	w, err = civil(m[1:4], m[4:7], m[7], loc)
	if err != nil {
		return time.Time{}, false, err
	}
	return w.UTC(), m[8] != "", nil
}

// zone reads a timestamp's zone: "" is none (UTC here, the caller knows),
// "Z", an offset, or an IANA name. "Local" is refused: the server's zone is
// not the user's.
func zone(s string) (*time.Location, error) {
	switch {
	case s == "":
		return time.UTC, nil
	case s == "Z" || s == "z":
		return time.UTC, nil
	case s == "Local":
		return nil, fmt.Errorf("zone Local is the server's; name the zone")
	}
	if m := offsetText.FindStringSubmatch(s); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins, _ := strconv.Atoi(m[3] + "0")
		mins /= 10 // m[3] may be empty
		if h > 23 || mins > 59 {
			return nil, fmt.Errorf("zone offset %s is out of range", s)
		}
		off := h*3600 + mins*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(s, off), nil
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", s)
	}
	return loc, nil
}

// civil builds the time from its text fields, refusing what time.Date
// would silently normalize (February 30, 25:00, :60 seconds).
func civil(ymd, hms []string, frac string, loc *time.Location) (time.Time, error) {
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	y, mo, d := n(ymd[0]), n(ymd[1]), n(ymd[2])
	var h, mi, s int
	if hms != nil {
		h, mi, s = n(hms[0]), n(hms[1]), n(hms[2])
	}
	frac = strings.TrimRight(frac, "0") // trailing zeros add no precision
	if len(frac) > 9 {
		return time.Time{}, fmt.Errorf("more than nanosecond precision")
	}
	ns := n((frac + "000000000")[:9])
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59 {
		return time.Time{}, fmt.Errorf("no such date or time of day")
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, ns, loc), nil
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// typed coerces an already typed scalar, as Substrait literals are. It is
// cast to the column's type only when the cast is exact (int64 42 against
// an int32 column); otherwise it is an error, like an untyped literal that
// would change meaning. Strings and binaries follow the untyped rules.
func (t target) typed(lit *Literal, sc scalar.Scalar) (scalar.Scalar, error) {
	if !sc.IsValid() {
		return scalar.MakeNullScalar(t.vt), nil
	}
	if arrow.TypeEqual(sc.DataType(), t.vt) {
		return sc, nil
	}
	switch sc.DataType().ID() {
	case arrow.BOOL:
		if t.vt.ID() == arrow.BOOL {
			return scalar.NewBooleanScalar(sc.(*scalar.Boolean).Value), nil
		}
	case arrow.STRING, arrow.LARGE_STRING:
		return t.text(lit, string(sc.(scalar.BinaryScalar).Data()))
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return t.bytes(lit, sc.(scalar.BinaryScalar).Data())
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		if isTemporal(t.vt) {
			w, zoned := scalarTime(sc)
			return t.instant(lit, w, zoned)
		}
	default:
		if r, f, isF, ok := numericValue(sc); ok {
			return t.typedNumber(lit, r, f, isF)
		}
	}
	return nil, t.mismatch(lit)
}

// numericValue is a numeric scalar's value: exact (r) for integers and
// decimals, f for floats (which may be NaN or infinite).
func numericValue(sc scalar.Scalar) (r *big.Rat, f float64, isF, ok bool) {
	switch v := sc.(type) {
	case *scalar.Int8:
		return big.NewRat(int64(v.Value), 1), 0, false, true
	case *scalar.Int16:
		return big.NewRat(int64(v.Value), 1), 0, false, true
	case *scalar.Int32:
		return big.NewRat(int64(v.Value), 1), 0, false, true
	case *scalar.Int64:
		return big.NewRat(v.Value, 1), 0, false, true
	case *scalar.Uint8:
		return new(big.Rat).SetUint64(uint64(v.Value)), 0, false, true
	case *scalar.Uint16:
		return new(big.Rat).SetUint64(uint64(v.Value)), 0, false, true
	case *scalar.Uint32:
		return new(big.Rat).SetUint64(uint64(v.Value)), 0, false, true
	case *scalar.Uint64:
		return new(big.Rat).SetUint64(v.Value), 0, false, true
	case *scalar.Float32:
		return nil, float64(v.Value), true, true
	case *scalar.Float64:
		return nil, v.Value, true, true
	case *scalar.Decimal128:
		return scaledRat(v.Value.BigInt(), v.DataType()), 0, false, true
	case *scalar.Decimal256:
		return scaledRat(v.Value.BigInt(), v.DataType()), 0, false, true
	}
	return nil, 0, false, false
}

func scaledRat(n *big.Int, dt arrow.DataType) *big.Rat {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dt.(arrow.DecimalType).GetScale())), nil)
	return new(big.Rat).SetFrac(n, scale)
}

func (t target) typedNumber(lit *Literal, r *big.Rat, f float64, isF bool) (scalar.Scalar, error) {
	if isF {
		if t.vt.ID() == arrow.FLOAT64 || (t.vt.ID() == arrow.FLOAT32 && (float64(float32(f)) == f || math.IsNaN(f))) {
			return floatScalar(t.vt, f), nil
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, Errorf("literal %s has no value in column %q (%s)", lit, t.name, t.dt)
		}
		r = new(big.Rat).SetFloat64(f)
		if isExactNumeric(t.vt) { // the number the float prints as (exact.go)
			r, _, _ = exactNumber(lit.Value)
		}
	}
	if !isExactNumeric(t.vt) && !isFloat(t.vt) {
		return nil, t.mismatch(lit)
	}
	return t.exact(r, lit.String())
}

// scalarTime is a date or timestamp scalar as a UTC time; zoned says it is
// an instant (a timestamp with a zone) rather than a wall clock or a date.
func scalarTime(sc scalar.Scalar) (w time.Time, zoned bool) {
	switch v := sc.(type) {
	case *scalar.Date32:
		return time.Unix(int64(v.Value)*86400, 0).UTC(), false
	case *scalar.Date64:
		return time.UnixMilli(int64(v.Value)).UTC(), false
	}
	ts := sc.DataType().(*arrow.TimestampType)
	step := int64(ts.Unit.Multiplier())
	per := int64(time.Second) / step
	v := int64(sc.(*scalar.Timestamp).Value)
	sec := v / per
	rem := v % per
	if rem < 0 {
		sec, rem = sec-1, rem+per
	}
	return time.Unix(sec, rem*step).UTC(), ts.TimeZone != ""
}

// comparable says arrow-go has comparison kernels for values of type vt.
func comparable(vt arrow.DataType) bool {
	switch vt.ID() {
	case arrow.BOOL, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return true
	}
	return arrow.IsInteger(vt.ID())
}

// commonType is the type two columns compare as: a's type when they are
// equal, else the type both cast to exactly (int32 and int64 as int64,
// date32 and date64 as date64, string and large_string as large_string),
// or nil when there is none. It stays small on purpose: comparing columns
// of different types is rare, and every exact pair is one more cast to
// get right.
func commonType(a, b arrow.DataType) arrow.DataType {
	if arrow.TypeEqual(a, b) {
		return a
	}
	if wa, ok := exactWidth(a); ok {
		if wb, ok := exactWidth(b); ok {
			return widerInt(a, wa, b, wb)
		}
	}
	pair := [2]arrow.Type{a.ID(), b.ID()}
	switch pair {
	case [2]arrow.Type{arrow.DATE32, arrow.DATE64}, [2]arrow.Type{arrow.DATE64, arrow.DATE32}:
		return arrow.FixedWidthTypes.Date64
	case [2]arrow.Type{arrow.STRING, arrow.LARGE_STRING}, [2]arrow.Type{arrow.LARGE_STRING, arrow.STRING}:
		return arrow.BinaryTypes.LargeString
	case [2]arrow.Type{arrow.BINARY, arrow.LARGE_BINARY}, [2]arrow.Type{arrow.LARGE_BINARY, arrow.BINARY}:
		return arrow.BinaryTypes.LargeBinary
	case [2]arrow.Type{arrow.FLOAT32, arrow.FLOAT64}, [2]arrow.Type{arrow.FLOAT64, arrow.FLOAT32}:
		return arrow.PrimitiveTypes.Float64
	case [2]arrow.Type{arrow.TIMESTAMP, arrow.TIMESTAMP}:
		ta, tb := a.(*arrow.TimestampType), b.(*arrow.TimestampType)
		if ta.TimeZone == tb.TimeZone {
			return &arrow.TimestampType{Unit: max(ta.Unit, tb.Unit), TimeZone: ta.TimeZone}
		}
	}
	return nil
}

func exactWidth(dt arrow.DataType) (int, bool) {
	if !arrow.IsInteger(dt.ID()) {
		return 0, false
	}
	return dt.(arrow.FixedWidthDataType).BitWidth(), true
}

// widerInt is the narrowest integer type holding every value of both.
func widerInt(a arrow.DataType, wa int, b arrow.DataType, wb int) arrow.DataType {
	ua, ub := arrow.IsUnsignedInteger(a.ID()), arrow.IsUnsignedInteger(b.ID())
	if ua == ub {
		if wa >= wb {
			return a
		}
		return b
	}
	if ua { // make b the unsigned one
		a, wa, b, wb = b, wb, a, wa
	}
	need := max(wa, 2*wb) // a signed type holds an unsigned one of half its width
	switch {
	case need <= 16:
		return arrow.PrimitiveTypes.Int16
	case need <= 32:
		return arrow.PrimitiveTypes.Int32
	case need <= 64:
		return arrow.PrimitiveTypes.Int64
	}
	return nil
}

// foldCompare evaluates a comparison of two literals (WHERE 1 = 1, as
// generated SQL writes) to a boolean Literal. Only literals of one kind
// compare; NULL with anything is unknown.
func foldCompare(c *Compare) (Expr, error) {
	l, r := c.Left.(*Literal).Value, c.Right.(*Literal).Value
	if l == nil || r == nil {
		return &Literal{Value: scalar.MakeNullScalar(arrow.FixedWidthTypes.Boolean)}, nil
	}
	var cmp int
	switch lv := l.(type) {
	case bool:
		rv, ok := r.(bool)
		if !ok {
			return nil, foldError(c)
		}
		cmp = boolCmp(lv, rv)
	case Number:
		rv, ok := r.(Number)
		lr, lok := parseRat(string(lv))
		rr, rok := parseRat(string(rv))
		if !ok || !lok || !rok {
			return nil, foldError(c)
		}
		cmp = lr.Cmp(rr)
	case string:
		rv, ok := r.(string)
		if !ok {
			return nil, foldError(c)
		}
		cmp = strings.Compare(lv, rv)
	default:
		return nil, foldError(c)
	}
	return &Literal{Value: scalar.NewBooleanScalar(opHolds(c.Op, cmp))}, nil
}

func foldError(c *Compare) error {
	return Errorf("cannot compare %s (%s) with %s (%s)", c.Left, literalKind(c.Left.(*Literal).Value),
		c.Right, literalKind(c.Right.(*Literal).Value))
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

func opHolds(op CompareOp, cmp int) bool {
	switch op {
	case Eq:
		return cmp == 0
	case Ne:
		return cmp != 0
	case Lt:
		return cmp < 0
	case Le:
		return cmp <= 0
	case Gt:
		return cmp > 0
	}
	return cmp >= 0
}
