// Package hive reads hive-style partitions from file paths: a directory
// named key=value gives every file below it a column key whose value is
// value, the layout pyarrow's write_to_dataset(partition_cols=...), Spark
// and Hive write. The partition columns join the scan's schema, typed as
// pyarrow.dataset(dir, partitioning="hive") infers them, and a filter on
// them prunes whole files before their footers are read.
//
// # What pyarrow does, and what this package copies
//
// Observed with pyarrow 26.0.1 (write_to_dataset, then
// pyarrow.dataset.dataset(root, partitioning="hive")); hive_test.go pins
// each case:
//
//   - Every directory segment holding "=" is a partition, wherever it sits
//     ("plain/a=3/f.parquet" has a=3); segments without "=" are skipped.
//     The key is what precedes the first "=", the value the rest
//     ("k=v=w" is k = "v=w"). An empty key ("=novalue") is a column named
//     "" (a filter cannot name it; a column list can).
//   - A key repeated in one path ("p=1/p=2/f") reads its outermost value;
//     every value counts when the key's type is inferred ("p=1/p=abc" is
//     the string "1").
//   - Keys and values are URL-decoded (segment_encoding="uri"): %XX
//     escapes become bytes, "+" stays "+", and a "%" not followed by two
//     hex digits stays as written ("a%2", "%zz"). write_to_dataset escapes
//     "/", "=", "%", "+", "?", "#", space and non-ASCII this way.
//   - The decoded value __HIVE_DEFAULT_PARTITION__ is null (so is its
//     escaped spelling). write_to_dataset writes it for a null value; it
//     writes an empty string as "k=", which reads back as "".
//   - A key is int32 when every non-null value is an int32: decimal
//     digits with an optional "-" (no "+", no spaces, no "_"), any
//     number of leading zeros ("007" is 7, "-0" is 0, 26 digits of
//     zeros and a 1 is 1), within [-2147483648, 2147483647]; or "0x" /
//     "0X" and 1 to 8 hex digits, read as the 32-bit pattern
//     (0xFFFFFFFF is -1, 0x000000001 with nine digits is a string).
//     Anything else makes the whole key a string: 2147483648, 1.5, 1e3,
//     +5, "", 2026-01-31 (no dates), true (no booleans), NaN.
//   - The field order is first appearance in the dataset's file order
//     (sorted paths), every partition field is nullable, and a file
//     without a key reads null for it.
//
// Where scand differs, on purpose:
//
//   - A key whose every value is null: pyarrow fails the dataset ("No
//     non-null segments were available for field"); Fields makes it a
//     string column of nulls, so one null partition does not fail a scan.
//   - A value that is not UTF-8 once decoded ("%ff"): pyarrow fails the
//     dataset; Parse keeps the segment's text undecoded.
package hive

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner/filter"
)

// DefaultPartition is the directory value Hive writes for a null.
const DefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// Value is one key=value directory of a path.
type Value struct {
	Key  string
	Text string // URL-decoded
	Null bool   // the directory was DefaultPartition
}

// Parse returns the key=value directories of path (slash-separated, root-
// or bucket-relative, or an s3:// URI), outermost first. The file name
// itself is never a partition ("k=v.parquet" at the root has none). A
// key that appears twice in one path ("a=1/a=2/f") appears twice here, as
// both count for Fields' inference; its value is the outermost (ByKey).
func Parse(path string) []Value {
	if _, rest, ok := strings.Cut(path, "://"); ok {
		// The bucket is not a directory of the dataset: s3://b/k=v/f.
		_, path, _ = strings.Cut(rest, "/")
	}
	dirs := strings.Split(path, "/")
	dirs = dirs[:len(dirs)-1] // the file name
	var vals []Value
	for _, seg := range dirs {
		k, v, ok := strings.Cut(seg, "=")
		if !ok {
			continue
		}
		text := decode(v)
		vals = append(vals, Value{Key: decode(k), Text: text, Null: text == DefaultPartition})
	}
	return vals
}

// ByKey returns the values of one path by key. A key repeated in the path
// ("p=1/p=2/f") has its outermost value (1), as pyarrow reads it; the
// inner ones still count when Fields infers the key's type (p=1/p=abc
// makes p a string column whose value is "1").
func ByKey(vals []Value) map[string]Value {
	m := make(map[string]Value, len(vals))
	for _, v := range vals {
		if _, seen := m[v.Key]; !seen {
			m[v.Key] = v
		}
	}
	return m
}

// decode undoes the URI escaping of one segment as pyarrow does: %XX is a
// byte, anything else (a lone "%", "+") is itself. If the bytes are not
// UTF-8 the segment stays as written (pyarrow fails instead).
func decode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	if !utf8.ValidString(b.String()) {
		return s
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// Fields infers the partition columns of a scan from the Values of its
// files: one field per key, in order of first appearance, nullable; int32
// when every non-null value of the key is an integer that fits, else
// string (utf8), as pyarrow infers them (see the package doc). A key with
// only nulls is a string. The caller passes the files in the scan's order
// (pyarrow's is sorted paths).
func Fields(files [][]Value) []arrow.Field {
	var keys []string
	isInt := map[string]bool{}  // false once a value is not an int32
	nonNull := map[string]int{} // non-null values seen
	for _, vals := range files {
		for _, v := range vals {
			if _, seen := isInt[v.Key]; !seen {
				keys = append(keys, v.Key)
				isInt[v.Key] = true
			}
			if v.Null {
				continue
			}
			nonNull[v.Key]++
			if _, ok := parseInt(v.Text, 32); !ok {
				isInt[v.Key] = false
			}
		}
	}
	fields := make([]arrow.Field, len(keys))
	for i, k := range keys {
		var t arrow.DataType = arrow.BinaryTypes.String
		if isInt[k] && nonNull[k] > 0 {
			t = arrow.PrimitiveTypes.Int32
		}
		fields[i] = arrow.Field{Name: k, Type: t, Nullable: true}
	}
	return fields
}

// parseInt reads s as arrow's string-to-integer conversion does, which is
// what pyarrow's inference and cast use: decimal with an optional "-" and
// any leading zeros, or 0x/0X and at most bits/4 hex digits taken as the
// two's complement pattern. It returns the value and whether s is one.
func parseInt(s string, bits int) (int64, bool) {
	if h, ok := strings.CutPrefix(s, "0x"); ok || strings.HasPrefix(s, "0X") {
		if !ok {
			h = s[2:]
		}
		return parseHex(h, bits)
	}
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	if digits == "" {
		return 0, false
	}
	limit := uint64(1) << (bits - 1) // |min|; max is limit-1
	var n uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
		if n > limit {
			return 0, false
		}
	}
	if neg {
		return -int64(n), true
	}
	if n == limit {
		return 0, false
	}
	return int64(n), true
}

// parseHex reads the digits after 0x as a bits-wide two's complement
// pattern: 0xFFFFFFFF is -1 as int32.
func parseHex(h string, bits int) (int64, bool) {
	if h == "" || len(h) > bits/4 {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(h); i++ {
		if !isHex(h[i]) {
			return 0, false
		}
		u = u<<4 | uint64(unhex(h[i]))
	}
	if bits < 64 && u >= 1<<(bits-1) {
		return int64(u) - 1<<bits, true
	}
	return int64(u), true
}

// Stats gives the statistics of a file's partition column: the value is
// constant across the file, so Min = Max = the value. The file's row
// count is not known from its path, so a non-null value has Nulls 0 and
// Rows -1 (unknown); a null value has Nulls = Rows = 1, which states "every
// row is null" without knowing how many rows there are.
func Stats(v Value, t arrow.DataType) (filter.ColumnStats, error) {
	if v.Null {
		return filter.ConstantStats(nil), nil
	}
	sc, err := valueScalar(v, t)
	if err != nil {
		return filter.Unknown, err
	}
	return filter.ConstantStats(sc), nil
}

// Scalar is v as a scalar of t: nil for a null value (or a key the path
// lacks: pass a Value with Null). Strings and integers follow pyarrow's
// reading.
func Scalar(v Value, t arrow.DataType) (scalar.Scalar, error) {
	if v.Null {
		return nil, nil
	}
	return valueScalar(v, t)
}

// valueScalar is v's text as a scalar of t. Strings and integers follow
// pyarrow's reading (see parseInt); other types, which a partition column
// has only when a schema says so, parse as arrow-go's scalar.ParseScalar
// does.
func valueScalar(v Value, t arrow.DataType) (scalar.Scalar, error) {
	switch t.ID() {
	case arrow.STRING:
		return scalar.NewStringScalar(v.Text), nil
	case arrow.LARGE_STRING:
		return scalar.NewLargeStringScalar(v.Text), nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		bits := t.(arrow.FixedWidthDataType).BitWidth()
		n, ok := parseInt(v.Text, bits)
		if !ok {
			return nil, fmt.Errorf("hive: partition %s=%q is not a %s", v.Key, v.Text, t)
		}
		return scalar.MakeIntegerScalar(n, bits)
	}
	sc, err := scalar.ParseScalar(t, v.Text)
	if err != nil {
		return nil, fmt.Errorf("hive: partition %s=%q as %s: %w", v.Key, v.Text, t, err)
	}
	return sc, nil
}

// Column makes an array of n copies of the value, typed t (all nulls for
// a null value, or when the file lacks the key: pass a Value with Null).
// The caller releases the array.
func Column(mem memory.Allocator, v Value, t arrow.DataType, n int) (arrow.Array, error) {
	if n < 0 {
		return nil, fmt.Errorf("hive: column %s: negative length %d", v.Key, n)
	}
	if v.Null {
		return array.MakeArrayOfNull(mem, t, n), nil
	}
	sc, err := valueScalar(v, t)
	if err != nil {
		return nil, err
	}
	// utf8 offsets are int32: n copies must fit in 2 GiB of characters.
	if t.ID() == arrow.STRING && int64(len(v.Text))*int64(n) > math.MaxInt32 {
		return nil, fmt.Errorf("hive: column %s: %d copies of %d bytes overflow utf8 offsets", v.Key, n, len(v.Text))
	}
	return scalar.MakeArrayFromScalar(sc, n, mem)
}
