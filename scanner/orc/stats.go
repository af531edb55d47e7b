package orc

// This file turns ORC column statistics (the footer's, for the whole file,
// and the Metadata section's, per stripe) into filter.ColumnStats typed as
// the Arrow columns this reader produces. The rule is the one of
// filter.ColumnStats: whatever is stated must be true of the values Read
// returns. What a writer may have got wrong, or what would need guessing
// to convert, is left unknown:
//
//   - Files of the original Java writer (writer version 0, before
//     HIVE-8732 fixed merged maxima and made string statistics UTF-8) keep
//     only integer and floating-point bounds, as ORC C++ does.
//   - Floating-point bounds need a sum that is not NaN (see floatBounds);
//     NaN is always possible unless the group has no values.
//   - Binary columns have no bounds (ORC records only their total length);
//     CHAR keeps only its minimum (see stringBounds).
//   - Timestamps use only the UTC fields (ORC-135); the older minimum and
//     maximum are in the writer's local time and are ignored.
//   - Decimal null counts of Java writers before HIVE-13083 are dropped.
//   - Columns under an encryption root are read as their masked values, so
//     only their row count is known.
//   - Counts that contradict each other, bounds out of the type's range,
//     or minimum above maximum make the affected part unknown.

import (
	"math"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

var _ scanner.Statistics = (*File)(nil)

// GroupStats implements scanner.Statistics: stripe g's statistics, or the
// whole file's for g = -1. Columns are named as Project names them
// (top-level fields and dotted struct fields; list, map and union children
// have no name). A known column whose statistics are missing or damaged
// answers filter.Unknown with only Rows set. The result is safe for
// concurrent use.
func (f *File) GroupStats(g int) filter.StatsSource {
	var s *groupStats
	switch {
	case g == -1:
		s = &groupStats{f: f, rows: f.stripeRows(), cols: f.fileColumnStats()}
		// Read returns the stripes' rows; a footer that counts otherwise
		// (some writers leave it 0) describes something else.
		if s.rows != int64(f.ft.numberOfRows) {
			s.cols = nil
		}
	case g >= 0 && g < len(f.ft.stripes):
		s = &groupStats{f: f, rows: int64(f.ft.stripes[g].numberOfRows), cols: f.stripeColumnStats(g)}
	default:
		return filter.StatsMap(nil)
	}
	// Statistics pair with columns by position: a list that does not
	// cover every column cannot be matched to them.
	if len(s.cols) != len(f.ft.types) {
		s.cols = nil
	}
	s.encrypted = f.encryptedIDs()
	return s
}

// stripeRows is the number of rows Read returns: the stripes' sum (each
// is at most MaxInt64, checked at Open; the sum saturates).
func (f *File) stripeRows() int64 {
	var n int64
	for _, s := range f.ft.stripes {
		if int64(s.numberOfRows) > math.MaxInt64-n {
			return math.MaxInt64
		}
		n += int64(s.numberOfRows)
	}
	return n
}

// stripeColumnStats decodes stripe i's column statistics, at most one per
// column; nil when the file has none for it or they do not decode.
func (f *File) stripeColumnStats(i int) []columnStats {
	if i < 0 || i >= len(f.stripeStats) {
		return nil
	}
	cols, err := parseStatsList(f.stripeStats[i], len(f.ft.types))
	if err != nil {
		return nil
	}
	return cols
}

// fileColumnStats decodes the footer's statistics; nil when they are not
// one per column or do not decode.
func (f *File) fileColumnStats() []columnStats {
	if len(f.ft.statistics) != len(f.ft.types) {
		return nil
	}
	cols, err := parseStatsEntries(f.ft.statistics)
	if err != nil {
		return nil
	}
	return cols
}

// encryptedIDs marks the columns of every encrypted subtree (nil when the
// file encrypts nothing).
func (f *File) encryptedIDs() []bool {
	enc := f.ft.encryption
	if enc == nil || len(enc.variants) == 0 {
		return nil
	}
	marks := make([]bool, len(f.ft.types))
	var stack []uint64
	for _, v := range enc.variants {
		stack = append(stack, uint64(v.root))
	}
	// checkTypes made the types a tree, so each id is pushed at most once
	// per variant.
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id >= uint64(len(marks)) || marks[id] {
			continue
		}
		marks[id] = true
		stack = append(stack, f.ft.types[id].subtypes...)
	}
	return marks
}

// correctStats says whether the writer is past HIVE-8732 (writer version
// 1), before which Java merged stripe maxima wrongly and compared strings
// in another order; ORC C++ trusts only integer and floating-point
// statistics of earlier files.
func (f *File) correctStats() bool { return f.ps.writerVersion >= 1 }

// groupStats is the StatsSource of one stripe or of the file. It is not
// modified after GroupStats returns it.
type groupStats struct {
	f         *File
	rows      int64
	cols      []columnStats // by column id; nil when untrusted
	encrypted []bool        // by column id; nil when nothing is
}

// ColumnStats implements filter.StatsSource.
func (s *groupStats) ColumnStats(name string) (filter.ColumnStats, bool) {
	_, path := resolvePath(s.f.tops, name)
	if path == nil {
		return filter.ColumnStats{}, false
	}
	n := path[len(path)-1]
	out := filter.Unknown
	out.Rows = s.rows
	if n.id >= len(s.cols) || (n.id < len(s.encrypted) && s.encrypted[n.id]) {
		return out, true
	}
	cs := &s.cols[n.id]
	if n.t.kind == kindUnion {
		// Arrow unions have no validity of their own (a null row is a
		// null in variant 0), so a null count would describe nothing.
		return out, true
	}
	// Java writers before HIVE-13083 (writer version 4) could drop a
	// decimal's PRESENT stream while writing nulls for values out of its
	// precision, so what a reader decodes need not match their counts.
	if n.t.kind != kindDecimal || s.f.ps.writerVersion >= 4 {
		var parent *columnStats
		if len(path) > 1 {
			parent = &s.cols[path[len(path)-2].id]
		}
		out.Nulls = nullCount(cs, s.rows, parent)
	}
	empty := cs.hasNumberOfValues && cs.numberOfValues == 0
	out.NaN = (n.t.kind == kindFloat || n.t.kind == kindDouble) && !empty
	if !empty {
		out.Min, out.Max = s.bounds(n, cs)
	}
	return out, true
}

// nullCount is rows minus the values the writer counted, when it also
// said whether there are nulls (hasNull; files before it have no reliable
// count) and the two agree. A struct field has a value slot only where
// its struct is present (parent's count): the other rows are null in
// what Read returns, but not the field's own nulls, which hasNull is
// about.
func nullCount(cs *columnStats, rows int64, parent *columnStats) int64 {
	if !cs.hasHasNull || !cs.hasNumberOfValues {
		return -1
	}
	slots := uint64(rows)
	if parent != nil {
		if !parent.hasNumberOfValues || parent.numberOfValues > slots {
			return -1
		}
		slots = parent.numberOfValues
	}
	if cs.numberOfValues > slots || cs.hasNull != (cs.numberOfValues < slots) {
		return -1
	}
	return rows - int64(cs.numberOfValues)
}

// bounds converts a column's minimum and maximum to its Arrow type; nil
// for a side that is unknown or not to be trusted.
func (s *groupStats) bounds(n *projNode, cs *columnStats) (lo, hi scalar.Scalar) {
	switch n.t.kind {
	case kindByte, kindShort, kindInt, kindLong:
		return intBounds(n, cs.intStats)
	case kindFloat, kindDouble:
		return floatBounds(n, cs.doubleStats)
	}
	if !s.f.correctStats() {
		return nil, nil
	}
	switch n.t.kind {
	case kindBoolean:
		return boolBounds(cs)
	case kindString, kindVarchar, kindChar:
		return stringBounds(n, cs.stringStats)
	case kindDate:
		return dateBounds(cs.dateStats, s.f.ft.calendar)
	case kindTimestamp, kindTimestampInstant:
		return timestampBounds(n, cs.timestampStats)
	case kindDecimal:
		return decimalBounds(n, cs.decimalStats)
	}
	return nil, nil
}

// intRange is the range of each integer kind's Arrow type.
var intRange = map[typeKind][2]int64{
	kindByte:  {math.MinInt8, math.MaxInt8},
	kindShort: {math.MinInt16, math.MaxInt16},
	kindInt:   {math.MinInt32, math.MaxInt32},
	kindLong:  {math.MinInt64, math.MaxInt64},
}

// intBounds needs both ends: a minimum above the maximum, or an end
// outside the column's type, means the statistics are not of this column.
func intBounds(n *projNode, st *intStats) (lo, hi scalar.Scalar) {
	r := intRange[n.t.kind]
	if st == nil || !st.hasMin || !st.hasMax || st.min > st.max || st.min < r[0] || st.max > r[1] {
		return nil, nil
	}
	mk := func(v int64) scalar.Scalar {
		switch n.t.kind {
		case kindByte:
			return scalar.NewInt8Scalar(int8(v))
		case kindShort:
			return scalar.NewInt16Scalar(int16(v))
		case kindInt:
			return scalar.NewInt32Scalar(int32(v))
		}
		return scalar.NewInt64Scalar(v)
	}
	return mk(st.min), mk(st.max)
}

// floatBounds keeps a double column's bounds only when neither is NaN and
// the sum is present and not NaN. Java and C++ writers fold values in with
// "v < min" and "v > max" and merge row groups into stripes (and stripes
// into the file) the same way: a group whose first value is NaN gets NaN
// bounds, and merging them into the next level compares false, so that
// level's bounds silently leave out the group's values. Their sums add
// every value, so a sum that is not NaN shows no NaN was seen anywhere
// below. (A writer that skips NaN altogether has true bounds either way.)
// Float columns' statistics are doubles widened from float32; they are
// narrowed back rounding outwards, so they stay bounds.
func floatBounds(n *projNode, st *doubleStats) (lo, hi scalar.Scalar) {
	if st == nil || !st.hasMin || !st.hasMax || !st.hasSum ||
		math.IsNaN(st.min) || math.IsNaN(st.max) || math.IsNaN(st.sum) || st.min > st.max {
		return nil, nil
	}
	if n.t.kind == kindDouble {
		return scalar.NewFloat64Scalar(st.min), scalar.NewFloat64Scalar(st.max)
	}
	l, h := float32(st.min), float32(st.max)
	if float64(l) > st.min {
		l = math.Nextafter32(l, float32(math.Inf(-1)))
	}
	if float64(h) < st.max {
		h = math.Nextafter32(h, float32(math.Inf(1)))
	}
	return scalar.NewFloat32Scalar(l), scalar.NewFloat32Scalar(h)
}

// boolBounds derives bounds from the count of true values (the first
// BucketStatistics count) against the number of values.
func boolBounds(cs *columnStats) (lo, hi scalar.Scalar) {
	if len(cs.bucketCounts) == 0 || !cs.hasNumberOfValues || cs.bucketCounts[0] > cs.numberOfValues {
		return nil, nil
	}
	trues, values := cs.bucketCounts[0], cs.numberOfValues
	return scalar.NewBooleanScalar(trues == values), scalar.NewBooleanScalar(trues > 0)
}

// stringBounds takes the minimum and maximum, or, where a writer dropped
// them for values over 1024 bytes (ORC-203), the lowerBound and upperBound
// it records instead: a truncated prefix, and a prefix with its last code
// point incremented, still bounds in byte order, which is the order ORC
// writers compare in and Arrow strings sort by. Java writes statistics
// through Text.toString, which replaces invalid UTF-8 with U+FFFD, so a
// bound holding U+FFFD may not be a bound of the bytes stored: it is
// dropped. CHAR(n) values are read padded to n; writers may record them
// unpadded, and a padded value sorts above its unpadded maximum, so only
// the minimum (a prefix sorts first) is kept.
func stringBounds(n *projNode, st *stringStats) (lo, hi scalar.Scalar) {
	if st == nil {
		return nil, nil
	}
	pick := func(v string, has bool, alt string, hasAlt bool) (string, bool) {
		if !has {
			v, has = alt, hasAlt
		}
		return v, has && !strings.ContainsRune(v, '\uFFFD')
	}
	l, okL := pick(st.min, st.hasMin, st.lower, st.hasLower)
	h, okH := pick(st.max, st.hasMax, st.upper, st.hasUpper)
	if n.t.kind == kindChar {
		okH = false
	}
	if okL && okH && l > h {
		return nil, nil
	}
	if okL {
		lo = scalar.NewStringScalar(l)
	}
	if okH {
		hi = scalar.NewStringScalar(h)
	}
	return lo, hi
}

// gregorianStart is 1582-10-15, in days since 1970-01-01: the first day
// the Julian-Gregorian hybrid calendar and the proleptic Gregorian one
// number alike.
const gregorianStart = -141427

// dateBounds keeps DateStatistics (days since the epoch, as the reader
// returns them) inside int32. Days before the Gregorian reform are dropped
// unless the file says it uses the proleptic calendar: a hybrid-calendar
// writer's values and statistics may have been converted differently
// (Java converts values, ORC-489), and the two calendars differ there.
func dateBounds(st *intStats, cal calendar) (lo, hi scalar.Scalar) {
	if st == nil {
		return nil, nil
	}
	ok := func(d int64, has bool) bool {
		return has && d >= math.MinInt32 && d <= math.MaxInt32 &&
			(cal == calendarProlepticGregoria || d >= gregorianStart)
	}
	okL, okH := ok(st.min, st.hasMin), ok(st.max, st.hasMax)
	if st.hasMin && st.hasMax && st.min > st.max {
		return nil, nil
	}
	if okL {
		lo = scalar.NewDate32Scalar(arrow.Date32(st.min))
	}
	if okH {
		hi = scalar.NewDate32Scalar(arrow.Date32(st.max))
	}
	return lo, hi
}

// nsPerMilli converts the statistics' milliseconds.
const nsPerMilli = 1_000_000

// timestampBounds uses minimumUtc and maximumUtc (ORC-135): milliseconds of
// the wall-clock time as if it were UTC for TIMESTAMP, which is what the
// reader returns (the writer's wall clock, naive), and of the instant for
// TIMESTAMP WITH LOCAL TIME ZONE, which it returns in UTC. Newer writers
// add the sub-millisecond nanoseconds (stored plus one). Without them the
// milliseconds are truncated, so the true value lies within a millisecond
// of them: the maximum is widened by 999,999 ns to stay an upper bound,
// and the minimum lowered as much, because writers that split negative
// timestamps with truncating division (pyarrow through ORC C++) round
// those towards zero, that is upwards.
func timestampBounds(n *projNode, st *tsStats) (lo, hi scalar.Scalar) {
	if st == nil {
		return nil, nil
	}
	dt := n.dt.(*arrow.TimestampType)
	l, okL := utcNanos(st.minUTC, st.hasMinUTC, st.minNanos, st.hasMinNanos, -(nsPerMilli - 1))
	h, okH := utcNanos(st.maxUTC, st.hasMaxUTC, st.maxNanos, st.hasMaxNanos, nsPerMilli-1)
	if okL && okH && l > h {
		return nil, nil
	}
	if okL {
		lo = scalar.NewTimestampScalar(arrow.Timestamp(l), dt)
	}
	if okH {
		hi = scalar.NewTimestampScalar(arrow.Timestamp(h), dt)
	}
	return lo, hi
}

// utcNanos is ms milliseconds plus the stored sub-millisecond nanoseconds
// (which are one more than the value), or plus widen when there are none,
// in nanoseconds; false when absent or outside int64 nanoseconds (the
// reader's timestamp[ns] cannot hold such values either).
func utcNanos(ms int64, has bool, nanos int32, hasNanos bool, widen int64) (int64, bool) {
	if !has || ms > math.MaxInt64/nsPerMilli-1 || ms < math.MinInt64/nsPerMilli+1 {
		return 0, false
	}
	sub := widen
	if hasNanos {
		// Java stores nanos%1e6+1 in [1, 1e6]; ORC C++ under pyarrow
		// stores truncated negatives, down to -999,998.
		sub = int64(nanos) - 1
		if sub <= -nsPerMilli || sub >= nsPerMilli {
			return 0, false
		}
	}
	return ms*nsPerMilli + sub, true
}

// maxDecimalStatLen bounds the decimal strings parsed: 38 digits, a sign,
// a point and generous zeros; longer strings are not bounds of a
// decimal128 column worth the parsing.
const maxDecimalStatLen = 100

// decimalBounds parses DecimalStatistics' strings exactly and brings them
// to the column's scale, rounding the minimum down and the maximum up so
// that both stay bounds (the reader truncates values of Hive 0.11 files to
// scale 6, and truncation keeps their order). A bound that does not parse
// or needs more digits than the column's precision is dropped.
func decimalBounds(n *projNode, st *stringStats) (lo, hi scalar.Scalar) {
	if st == nil {
		return nil, nil
	}
	precision, scale := decimalParams(n.t)
	l, okL := parseDecimalBound(st.min, st.hasMin, precision, scale, false)
	h, okH := parseDecimalBound(st.max, st.hasMax, precision, scale, true)
	if okL && okH && l.Greater(h) {
		return nil, nil
	}
	if okL {
		lo = scalar.NewDecimal128Scalar(l, n.dt)
	}
	if okH {
		hi = scalar.NewDecimal128Scalar(h, n.dt)
	}
	return lo, hi
}

// parseDecimalBound reads [-+]digits[.digits] as an unscaled value of the
// given scale, rounding towards +inf when up and towards -inf otherwise.
func parseDecimalBound(s string, has bool, precision, scale int32, up bool) (decimal128.Num, bool) {
	if !has || s == "" || len(s) > maxDecimalStatLen {
		return decimal128.Num{}, false
	}
	neg := s[0] == '-'
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole+frac == "" || !allDigits(whole) || !allDigits(frac) {
		return decimal128.Num{}, false
	}
	inexact := false
	if len(frac) > int(scale) {
		inexact = strings.Trim(frac[scale:], "0") != ""
		frac = frac[:scale]
	}
	frac += strings.Repeat("0", int(scale)-len(frac))
	v, ok := new(big.Int).SetString("0"+whole+frac, 10)
	if !ok {
		return decimal128.Num{}, false
	}
	if neg {
		v.Neg(v)
	}
	// Dropping digits moved v towards zero: down for a positive value,
	// up for a negative one. Step back out where that broke the bound.
	if inexact && up && !neg {
		v.Add(v, big.NewInt(1))
	} else if inexact && !up && neg {
		v.Sub(v, big.NewInt(1))
	}
	if v.CmpAbs(pow10[precision].BigInt()) >= 0 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(v), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
