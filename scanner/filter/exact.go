package filter

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// A number that no value of an integer or decimal column equals (10.123
// against decimal(10, 2), 1.5 or 1000 against int8, a float) is still
// compared exactly, as pyarrow and DuckDB compare it: the binder rewrites
// the comparison into one with the column's neighbouring values, which it
// can hold.
//
//	column op r, with lo the largest column value below r, hi the least above:
//	  =  r   never true                 x > max    (false, or unknown on NULL)
//	  != r   true but on NULL           x >= min
//	  <  r, <= r                        x <= lo    (never true without lo)
//	  >  r, >= r                        x >= hi    (never true without hi)
//	  IN (.., r, ..)                    r dropped from the list
//
// "Never true" is written `x > max` rather than FALSE so that a NULL stays
// unknown under NOT, as the original comparison is. The rewritten form
// holds only literals of the column's own type, so evaluation and every
// pruning path (statistics, page index, bloom filters) take it as they
// take any comparison, and prune exactly what the original allows.
//
// A float literal (Substrait's fp64, a float a client sent) stands for the
// decimal number it prints as in the shortest form that reads back to it
// (0.1, not 0.1000000000000000055...): the number its writer typed. For a
// column of at most 15 digits that gives pyarrow's answer, which casts the
// decimal to float64 and compares the floats: every such decimal lies
// nearer its own float than any other decimal of 15 digits. NaN equals
// nothing and orders nowhere (only != is true); infinities lie beyond every
// value.

// between is a numeric literal with no exact value in an integer or
// decimal column: its neighbours there, and the column's range.
type between struct {
	lo, hi   scalar.Scalar // nil when the number lies beyond the range (or is NaN)
	min, max scalar.Scalar
	nan      bool
}

// between says whether lit is a number the column cannot hold exactly
// (or an instant finer than a timestamp column's unit, or a time of day
// against a date column), and then its neighbours. It is false for
// anything else (a value the column holds, a string, a float column),
// which coerce handles or refuses.
func (t target) between(lit *Literal) (between, bool) {
	switch {
	case isExactNumeric(t.vt):
		return t.numberBetween(lit)
	case isTemporal(t.vt):
		return t.instantBetween(lit)
	}
	return between{}, false
}

func (t target) numberBetween(lit *Literal) (between, bool) {
	r, special, ok := exactNumber(lit.Value)
	if !ok {
		return between{}, false
	}
	min, max, step := t.domain()
	switch special {
	case "nan":
		return between{min: t.scaled(min), max: t.scaled(max), nan: true}, true
	case "+inf":
		return between{lo: t.scaled(max), min: t.scaled(min), max: t.scaled(max)}, true
	case "-inf":
		return between{hi: t.scaled(min), min: t.scaled(min), max: t.scaled(max)}, true
	}
	return t.around(new(big.Rat).Quo(r, step), min, max)
}

// around is the between of n, a number counted in the column's units,
// for a column holding the integers min..max of them; false when n is one
// of them.
func (t target) around(n *big.Rat, min, max *big.Int) (between, bool) {
	floor := new(big.Int).Quo(n.Num(), n.Denom()) // truncated toward zero
	if n.Sign() < 0 && !n.IsInt() {
		floor.Sub(floor, big.NewInt(1))
	}
	if n.IsInt() && floor.Cmp(min) >= 0 && floor.Cmp(max) <= 0 {
		return between{}, false // an exact value: coerce takes it
	}
	ceil := new(big.Int).Set(floor)
	if !n.IsInt() {
		ceil.Add(ceil, big.NewInt(1))
	}
	b := between{min: t.scaled(min), max: t.scaled(max)}
	if floor.Cmp(min) >= 0 {
		b.lo = t.scaled(bigMin(floor, max))
	}
	if ceil.Cmp(max) <= 0 {
		b.hi = t.scaled(bigMax(ceil, min))
	}
	return b, true
}

// instantBetween is between for date and timestamp columns: a timestamp
// finer than the column's unit (12:00:00.5 against timestamp[s]), or a
// time of day against a date column, lies between two of its values, as
// pyarrow compares them (it casts both to the finer type). Literals that
// need a zone the column lacks, or the reverse, are left to coerce, which
// refuses them.
func (t target) instantBetween(lit *Literal) (between, bool) {
	w, zoned, ok := literalInstant(lit.Value)
	if !ok {
		return between{}, false
	}
	ns := new(big.Int).Mul(big.NewInt(w.Unix()), big.NewInt(int64(time.Second)))
	ns.Add(ns, big.NewInt(int64(w.Nanosecond())))
	if ts, isTS := t.vt.(*arrow.TimestampType); isTS {
		if zoned && ts.TimeZone == "" {
			return between{}, false
		}
		step := big.NewInt(int64(ts.Unit.Multiplier()))
		return t.around(new(big.Rat).SetFrac(ns, step), big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64))
	}
	if zoned {
		return between{}, false
	}
	day := big.NewInt(int64(24 * time.Hour))
	return t.around(new(big.Rat).SetFrac(ns, day), big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32))
}

// literalInstant reads a date or timestamp literal (typed, as text, or a
// string a date or timestamp column reads as one) as a UTC time; zoned
// says it names an instant.
func literalInstant(v any) (w time.Time, zoned, ok bool) {
	var err error
	switch v := v.(type) {
	case Date:
		w, err = parseDate(string(v))
	case Timestamp:
		w, zoned, err = parseTimestamp(string(v))
	case string:
		if w, err = parseDate(v); err != nil {
			w, zoned, err = parseTimestamp(v)
		}
	case scalar.Scalar:
		if !v.IsValid() || !isTemporal(v.DataType()) {
			return time.Time{}, false, false
		}
		w, zoned = scalarTime(v)
	default:
		return time.Time{}, false, false
	}
	return w, zoned, err == nil
}

func bigMin(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return a
	}
	return b
}

func bigMax(a, b *big.Int) *big.Int {
	if a.Cmp(b) > 0 {
		return a
	}
	return b
}

// exactNumber is a numeric literal's exact value; special is "nan",
// "+inf" or "-inf" for floats without one. ok is false for non-numbers
// and for number text that does not parse (coerce reports those).
func exactNumber(v any) (r *big.Rat, special string, ok bool) {
	switch v := v.(type) {
	case Number:
		return readNumber(string(v))
	case scalar.Scalar:
		if !v.IsValid() {
			return nil, "", false
		}
		r, f, isF, ok := numericValue(v)
		if !ok {
			return nil, "", false
		}
		if !isF {
			return r, "", true
		}
		switch {
		case math.IsNaN(f):
			return nil, "nan", true
		case math.IsInf(f, 1):
			return nil, "+inf", true
		case math.IsInf(f, -1):
			return nil, "-inf", true
		}
		bits := 64
		if v.DataType().ID() == arrow.FLOAT32 {
			bits = 32
		}
		// The shortest text that reads back to f: the number its writer
		// typed (see above).
		r, ok = parseRat(strconv.FormatFloat(f, 'g', -1, bits))
		return r, "", ok
	}
	return nil, "", false
}

// magnitudeLimit bounds the decimal exponent readNumber reads exactly:
// no integer or decimal column holds a number of 10^77 or more (decimal256
// has 76 digits, uint64 20), nor one finer than 10^-76.
const magnitudeLimit = 100

// readNumber reads number text exactly, as parseRat does, but a number
// whose magnitude is beyond 10^±magnitudeLimit only as what it is to a
// column: "+inf" or "-inf" when huge, and ±10^-magnitudeLimit when tiny
// (nearer zero than any column's step). big.Rat expands an exponent in
// full: 1e999999 takes 50 ms, and a 1 MiB filter holds 100,000 of them.
func readNumber(text string) (*big.Rat, string, bool) {
	if len(text) > maxNumberText {
		return nil, "", false
	}
	body, neg := text, false
	if len(body) > 0 && (body[0] == '-' || body[0] == '+') {
		body, neg = body[1:], body[0] == '-'
	}
	mant, exp := body, 0
	if i := strings.IndexAny(body, "eE"); i >= 0 {
		et := body[i+1:]
		if len(et) > 0 && (et[0] == '+' || et[0] == '-') {
			et = et[1:]
		}
		if et == "" || strings.Trim(et, "0123456789") != "" {
			return nil, "", false
		}
		e, err := strconv.Atoi(strings.TrimPrefix(body[i+1:], "+"))
		if err != nil {
			return nil, "", false
		}
		mant, exp = body[:i], e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	all := intPart + frac
	if all == "" || strings.Trim(all, "0123456789") != "" {
		return nil, "", false
	}
	digits := strings.TrimLeft(all, "0")
	if digits == "" {
		return new(big.Rat), "", true // zero, whatever its exponent
	}
	// The value is 0.digits × 10^magnitude.
	magnitude := exp + len(intPart) - (len(all) - len(digits))
	switch {
	case magnitude > magnitudeLimit && neg:
		return nil, "-inf", true
	case magnitude > magnitudeLimit:
		return nil, "+inf", true
	case magnitude < -magnitudeLimit:
		tiny := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(magnitudeLimit), nil))
		if neg {
			tiny.Neg(tiny)
		}
		return tiny, "", true
	}
	r, ok := parseRat(text)
	return r, "", ok
}

// domain is the column's range in its units (integers: 1; decimals: one
// unit of the last fractional digit), and that unit as a number.
func (t target) domain() (min, max *big.Int, step *big.Rat) {
	if arrow.IsInteger(t.vt.ID()) {
		bits := uint(t.vt.(arrow.FixedWidthDataType).BitWidth())
		if arrow.IsUnsignedInteger(t.vt.ID()) {
			max = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits), big.NewInt(1))
			return big.NewInt(0), max, big.NewRat(1, 1)
		}
		limit := new(big.Int).Lsh(big.NewInt(1), bits-1)
		return new(big.Int).Neg(limit), new(big.Int).Sub(limit, big.NewInt(1)), big.NewRat(1, 1)
	}
	dec := t.vt.(arrow.DecimalType)
	max = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec.GetPrecision())), nil)
	max.Sub(max, big.NewInt(1))
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec.GetScale())), nil)
	return new(big.Int).Neg(max), max, new(big.Rat).SetFrac(big.NewInt(1), scale)
}

// scaled is the scalar of the column's type whose value is n units (days
// for dates).
func (t target) scaled(n *big.Int) scalar.Scalar {
	switch t.vt.ID() {
	case arrow.DECIMAL128:
		return scalar.NewDecimal128Scalar(decimal128.FromBigInt(n), t.vt)
	case arrow.DECIMAL256:
		return scalar.NewDecimal256Scalar(decimal256.FromBigInt(n), t.vt)
	case arrow.TIMESTAMP:
		return scalar.NewTimestampScalar(arrow.Timestamp(n.Int64()), t.vt)
	case arrow.DATE32:
		return scalar.NewDate32Scalar(arrow.Date32(n.Int64()))
	case arrow.DATE64:
		return scalar.NewDate64Scalar(arrow.Date64(n.Int64() * 86_400_000))
	}
	if arrow.IsUnsignedInteger(t.vt.ID()) {
		return unsignedScalar(t.vt.ID(), n.Uint64())
	}
	return signedScalar(t.vt.ID(), n.Int64())
}

// compare is `c op literal` for the literal b stands for, as a comparison
// with a value of the column (see the table above).
func (b between) compare(op CompareOp, c *Column) Expr {
	never := &Compare{Op: Gt, Left: c, Right: &Literal{Value: b.max}}
	switch {
	case b.nan && op == Ne, !b.nan && op == Ne:
		return &Compare{Op: Ge, Left: c, Right: &Literal{Value: b.min}}
	case b.nan, op == Eq:
		return never
	case (op == Lt || op == Le) && b.lo != nil:
		return &Compare{Op: Le, Left: c, Right: &Literal{Value: b.lo}}
	case (op == Gt || op == Ge) && b.hi != nil:
		return &Compare{Op: Ge, Left: c, Right: &Literal{Value: b.hi}}
	}
	return never
}

// emptyIn is `c IN ()` (NOT IN when negated) for a list whose every value
// the column cannot hold: false for every value; a NULL operand is
// unknown under SQL semantics and false under pyarrow's (the list holds no
// NULL, or it would not be empty).
func emptyIn(c *Column, negated bool, nulls NullSemantics, min, max scalar.Scalar) Expr {
	if nulls == ArrowNulls {
		return &Literal{Value: scalar.NewBooleanScalar(negated)}
	}
	if negated {
		return &Compare{Op: Ge, Left: c, Right: &Literal{Value: min}}
	}
	return &Compare{Op: Gt, Left: c, Right: &Literal{Value: max}}
}
