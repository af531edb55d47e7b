package deletes

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// EqualitySet is the rows of equality-delete files that apply to a data
// file: a data row whose key columns equal one of them is deleted. Keys
// compare by value across the promotions a table allows (int32 with
// int64, float32 with float64, decimals of one scale), and a null equals
// a null.
type EqualitySet struct {
	columns int
	keys    map[string]struct{}
	budget  scanner.Reserver
	held    int64
	buf     []byte
}

// equalityEntryOverhead is what a Go map entry costs beyond its key's
// bytes (string header, bucket share).
const equalityEntryOverhead = 48

// NewEqualitySet starts an empty set of keys of the given number of
// columns, charging budget (nil charges nothing).
func NewEqualitySet(columns int, budget scanner.Reserver) *EqualitySet {
	return &EqualitySet{columns: columns, keys: map[string]struct{}{}, budget: budget}
}

// Len is the number of distinct keys.
func (s *EqualitySet) Len() int { return len(s.keys) }

// Add takes one batch of an equality-delete file whose columns cols (in
// the set's key order) hold the keys.
func (s *EqualitySet) Add(ctx context.Context, rec arrow.RecordBatch, cols []int) error {
	if len(cols) != s.columns {
		return fmt.Errorf("equality deletes: %d key columns for a set of %d", len(cols), s.columns)
	}
	n := int(rec.NumRows())
	for i := 0; i < n; i++ {
		key, err := s.key(rec, cols, i)
		if err != nil {
			return err
		}
		if _, dup := s.keys[string(key)]; dup {
			continue
		}
		if s.budget != nil {
			cost := int64(len(key)) + equalityEntryOverhead
			if err := s.budget.Reserve(ctx, cost); err != nil {
				return fmt.Errorf("equality deletes: %w", err)
			}
			s.held += cost
		}
		s.keys[string(key)] = struct{}{}
	}
	return nil
}

// Apply drops the rows of rec whose columns cols (in the set's key order)
// equal a key of the set. It returns rec retained when none does; the
// caller releases both.
func (s *EqualitySet) Apply(ctx context.Context, rec arrow.RecordBatch, cols []int, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(cols) != s.columns {
		return nil, fmt.Errorf("equality deletes: %d key columns for a set of %d", len(cols), s.columns)
	}
	n := int(rec.NumRows())
	if len(s.keys) == 0 || n == 0 {
		rec.Retain()
		return rec, nil
	}
	var keep []bool
	deleted := 0
	for i := 0; i < n; i++ {
		key, err := s.key(rec, cols, i)
		if err != nil {
			return nil, err
		}
		if _, hit := s.keys[string(key)]; hit {
			if keep == nil {
				keep = make([]bool, n)
				for j := range i {
					keep[j] = true
				}
			}
			deleted++
			continue
		}
		if keep != nil {
			keep[i] = true
		}
	}
	switch deleted {
	case 0:
		rec.Retain()
		return rec, nil
	case n:
		return rec.NewSlice(0, 0), nil
	}
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.AppendValues(keep, nil)
	mask := b.NewBooleanArray()
	defer mask.Release()
	out, err := compute.FilterRecordBatch(exec.WithAllocator(ctx, mem), rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("apply equality deletes: %w", err)
	}
	return out, nil
}

// Release gives the set's memory back to the budget.
func (s *EqualitySet) Release() {
	if s.budget != nil && s.held > 0 {
		s.budget.Release(s.held)
	}
	s.held, s.keys = 0, nil
}

// key encodes row i's key columns into s.buf: per column a tag byte (0
// null, 1 a value) and the value in a form equal across promotions.
func (s *EqualitySet) key(rec arrow.RecordBatch, cols []int, i int) ([]byte, error) {
	b := s.buf[:0]
	for _, c := range cols {
		if c < 0 || c >= int(rec.NumCols()) {
			return nil, fmt.Errorf("equality deletes: key column %d of a batch of %d", c, rec.NumCols())
		}
		var err error
		if b, err = appendKey(b, rec.Column(c), i); err != nil {
			return nil, fmt.Errorf("equality deletes: column %q: %w", rec.ColumnName(c), err)
		}
	}
	s.buf = b
	return b, nil
}

// Value classes: values of different classes never compare equal.
const (
	classNull byte = iota
	classInt
	classFloat
	classBool
	classBytes
	classDecimal
)

func appendKey(b []byte, col arrow.Array, i int) ([]byte, error) {
	if col.IsNull(i) {
		return append(b, classNull), nil
	}
	switch c := col.(type) {
	case *array.Int8:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Int16:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Int32:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Int64:
		return appendInt(b, c.Value(i)), nil
	case *array.Uint8:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Uint16:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Uint32:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Date32:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Date64:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Time32:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Time64:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Timestamp:
		return appendInt(b, int64(c.Value(i))), nil
	case *array.Float32:
		return appendFloat(b, float64(c.Value(i))), nil
	case *array.Float64:
		return appendFloat(b, c.Value(i)), nil
	case *array.Boolean:
		v := byte(0)
		if c.Value(i) {
			v = 1
		}
		return append(b, classBool, v), nil
	case *array.String:
		return appendBytes(b, []byte(c.Value(i))), nil
	case *array.LargeString:
		return appendBytes(b, []byte(c.Value(i))), nil
	case *array.StringView:
		return appendBytes(b, []byte(c.Value(i))), nil
	case *array.Binary:
		return appendBytes(b, c.Value(i)), nil
	case *array.LargeBinary:
		return appendBytes(b, c.Value(i)), nil
	case *array.BinaryView:
		return appendBytes(b, c.Value(i)), nil
	case *array.FixedSizeBinary:
		return appendBytes(b, c.Value(i)), nil
	case *array.Decimal128:
		v := c.Value(i)
		scale := c.DataType().(*arrow.Decimal128Type).Scale
		b = append(b, classDecimal)
		b = binary.BigEndian.AppendUint32(b, uint32(scale))
		b = binary.BigEndian.AppendUint64(b, uint64(v.HighBits()))
		return binary.BigEndian.AppendUint64(b, v.LowBits()), nil
	case *array.Dictionary:
		return appendKey(b, c.Dictionary(), c.GetValueIndex(i))
	}
	return nil, fmt.Errorf("type %s cannot be an equality delete key: %w", col.DataType(), scanner.ErrUnsupported)
}

func appendInt(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, classInt), uint64(v))
}

// appendFloat keys a float by its float64 bits, every NaN as one NaN and
// -0 apart from 0, as Java's Double.compare orders them (Iceberg's
// reference reader compares keys with it).
func appendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) {
		v = math.NaN()
	}
	return binary.BigEndian.AppendUint64(append(b, classFloat), math.Float64bits(v))
}

func appendBytes(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(append(b, classBytes), uint32(len(v)))
	return append(b, v...)
}
