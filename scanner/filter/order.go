package filter

import (
	"bytes"
	"cmp"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// CompareScalars orders two non-null scalars of the same Arrow type: -1,
// 0 or +1 as a < b, a == b, a > b, in the order scand's comparisons use
// (numbers by value, strings and binaries as unsigned bytes, false before
// true). ok is false when it cannot say: a null, a NaN, types that differ
// (other units, scales or zones) or a type it does not order. Callers
// treat that as "may match", so a type missing here costs pruning, never
// correctness.
func CompareScalars(a, b scalar.Scalar) (c int, ok bool) {
	if a == nil || b == nil || !a.IsValid() || !b.IsValid() || !sameOrder(a.DataType(), b.DataType()) {
		return 0, false
	}
	ka, ok := keyOf(a)
	if !ok {
		return 0, false
	}
	kb, ok := keyOf(b)
	if !ok || ka.kind != kb.kind {
		return 0, false
	}
	return ka.compare(kb)
}

// sameOrder says whether values of types a and b are ordered by their raw
// representation: same type id, and for the parameterized types the same
// unit, scale or zone (a timestamp in ms and one in us are both int64s
// that mean different instants).
func sameOrder(a, b arrow.DataType) bool {
	if a.ID() != b.ID() {
		return false
	}
	switch ta := a.(type) {
	case *arrow.TimestampType:
		tb := b.(*arrow.TimestampType)
		return ta.Unit == tb.Unit && ta.TimeZone == tb.TimeZone
	case *arrow.Time32Type:
		return ta.Unit == b.(*arrow.Time32Type).Unit
	case *arrow.Time64Type:
		return ta.Unit == b.(*arrow.Time64Type).Unit
	case *arrow.DurationType:
		return ta.Unit == b.(*arrow.DurationType).Unit
	case arrow.DecimalType:
		return ta.GetScale() == b.(arrow.DecimalType).GetScale()
	}
	return true
}

type keyKind uint8

const (
	signedKey keyKind = iota + 1
	unsignedKey
	floatKey
	dec128Key
	dec256Key
	bytesKey
)

// orderKey is a scalar reduced to what its order needs.
type orderKey struct {
	kind keyKind
	i    int64
	u    uint64
	f    float64
	d128 decimal128.Num
	d256 decimal256.Num
	b    []byte
}

// keyOf reduces a valid scalar to its order key; ok is false for types
// without an order here (lists, structs, dictionaries, intervals, ...).
func keyOf(s scalar.Scalar) (orderKey, bool) {
	if k, ok := intKey(s); ok {
		return k, true
	}
	switch v := s.(type) {
	case *scalar.Float16:
		return orderKey{kind: floatKey, f: float64(v.Value.Float32())}, true
	case *scalar.Float32:
		return orderKey{kind: floatKey, f: float64(v.Value)}, true
	case *scalar.Float64:
		return orderKey{kind: floatKey, f: v.Value}, true
	case *scalar.Decimal128:
		return orderKey{kind: dec128Key, d128: v.Value}, true
	case *scalar.Decimal256:
		return orderKey{kind: dec256Key, d256: v.Value}, true
	case scalar.BinaryScalar:
		switch s.DataType().ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
			arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
			return orderKey{kind: bytesKey, b: v.Data()}, true
		}
	}
	return orderKey{}, false
}

// intKey covers the types ordered as integers: the integer types, the
// temporal ones (counts of a unit since an epoch) and bool.
func intKey(s scalar.Scalar) (orderKey, bool) {
	signed := func(i int64) (orderKey, bool) { return orderKey{kind: signedKey, i: i}, true }
	unsigned := func(u uint64) (orderKey, bool) { return orderKey{kind: unsignedKey, u: u}, true }
	switch v := s.(type) {
	case *scalar.Int8:
		return signed(int64(v.Value))
	case *scalar.Int16:
		return signed(int64(v.Value))
	case *scalar.Int32:
		return signed(int64(v.Value))
	case *scalar.Int64:
		return signed(v.Value)
	case *scalar.Uint8:
		return unsigned(uint64(v.Value))
	case *scalar.Uint16:
		return unsigned(uint64(v.Value))
	case *scalar.Uint32:
		return unsigned(uint64(v.Value))
	case *scalar.Uint64:
		return unsigned(v.Value)
	case *scalar.Date32:
		return signed(int64(v.Value))
	case *scalar.Date64:
		return signed(int64(v.Value))
	case *scalar.Time32:
		return signed(int64(v.Value))
	case *scalar.Time64:
		return signed(int64(v.Value))
	case *scalar.Timestamp:
		return signed(int64(v.Value))
	case *scalar.Duration:
		return signed(int64(v.Value))
	case *scalar.Boolean:
		if v.Value {
			return unsigned(1)
		}
		return unsigned(0)
	}
	return orderKey{}, false
}

func (a orderKey) compare(b orderKey) (int, bool) {
	switch a.kind {
	case signedKey:
		return cmp.Compare(a.i, b.i), true
	case unsignedKey:
		return cmp.Compare(a.u, b.u), true
	case floatKey:
		if math.IsNaN(a.f) || math.IsNaN(b.f) {
			return 0, false
		}
		// Not cmp.Compare: it orders -0 before +0, IEEE (and SQL) do not.
		switch {
		case a.f < b.f:
			return -1, true
		case a.f > b.f:
			return 1, true
		}
		return 0, true
	case dec128Key:
		return orderOf(a.d128.Less(b.d128), a.d128.Greater(b.d128)), true
	case dec256Key:
		return orderOf(a.d256.Less(b.d256), a.d256.Greater(b.d256)), true
	case bytesKey:
		return bytes.Compare(a.b, b.b), true
	}
	return 0, false
}

func orderOf(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

// isNaN says whether s is a floating-point NaN.
func isNaN(s scalar.Scalar) bool { return IsNaN(s) }

// IsNaN says whether s is a floating-point NaN: such a bound bounds
// nothing.
func IsNaN(s scalar.Scalar) bool {
	if s == nil || !s.IsValid() {
		return false
	}
	switch v := s.(type) {
	case *scalar.Float16:
		return v.Value.IsNaN()
	case *scalar.Float32:
		return math.IsNaN(float64(v.Value))
	case *scalar.Float64:
		return math.IsNaN(v.Value)
	}
	return false
}

// isFloat says whether t is a floating-point type, whose values may be NaN.
func mayBeNaN(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// MergeStats describes the rows of two groups together (a file from its
// row groups): the lower of the mins and the higher of the maxes, the sums
// of the counts; whatever either side does not know stays unknown. A side
// known to hold nothing but nulls has no bounds to give, and no NaN.
func MergeStats(a, b ColumnStats) ColumnStats {
	out := ColumnStats{
		Min:   pick(a.Min, b.Min, -1),
		Max:   pick(a.Max, b.Max, 1),
		Nulls: addCounts(a.Nulls, b.Nulls),
		Rows:  addCounts(a.Rows, b.Rows),
		NaN:   a.NaN || b.NaN,
		Exact: a.Exact && b.Exact,
	}
	switch {
	case onlyNulls(a):
		out.Min, out.Max, out.NaN, out.Exact = b.Min, b.Max, b.NaN, b.Exact
	case onlyNulls(b):
		out.Min, out.Max, out.NaN, out.Exact = a.Min, a.Max, a.NaN, a.Exact
	}
	return out
}

// onlyNulls says whether the counts show a group without non-null values
// (or without rows).
func onlyNulls(s ColumnStats) bool { return s.Rows >= 0 && s.Nulls == s.Rows }

// pick is the one of a and b further in direction dir (-1: the lower),
// nil when either is unknown or they cannot be compared.
func pick(a, b scalar.Scalar, dir int) scalar.Scalar {
	c, ok := CompareScalars(a, b)
	switch {
	case !ok:
		return nil
	case c*dir >= 0:
		return a
	}
	return b
}

func addCounts(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}
