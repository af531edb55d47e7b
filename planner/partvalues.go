package planner

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// A table's file that lacks partition columns (a Delta file holds none)
// has their values in its tickets (ScanTask.partition_values), taken from
// the table's metadata: the stream fills the columns from there, not from
// the path, which a table need not spell them in.
//
// They travel as an IPC schema (decoded by DecodeSchema, which checks
// untrusted bytes; arrow-go's record batch reader trusts a message's
// lengths and allocates by them), one field per column, each field's
// metadata holding its value's bytes under partitionValueKey: the
// little-endian value of a fixed-width type (a boolean as one byte 0 or
// 1), the bytes of a string or binary. A field without the key is null.

const partitionValueKey = "scand:partition_value"

var errBadPartitionValues = errors.New("partition values do not decode")

// EncodePartitionValues encodes the value of each field (nil or an
// invalid scalar: null) as ScanTask.partition_values carries it.
func EncodePartitionValues(fields []arrow.Field, values []scalar.Scalar, mem memory.Allocator) ([]byte, error) {
	if len(fields) != len(values) {
		return nil, fmt.Errorf("%d partition values for %d columns", len(values), len(fields))
	}
	out := make([]arrow.Field, len(fields))
	for i, f := range fields {
		out[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: true}
		v := values[i]
		if v == nil || !v.IsValid() {
			continue
		}
		if !arrow.TypeEqual(v.DataType(), f.Type) {
			return nil, fmt.Errorf("partition column %s: a value of type %s for a column of type %s", f.Name, v.DataType(), f.Type)
		}
		b, err := valueBytes(v, mem)
		if err != nil {
			return nil, fmt.Errorf("partition column %s: %w", f.Name, err)
		}
		out[i].Metadata = arrow.NewMetadata([]string{partitionValueKey}, []string{string(b)})
	}
	return SerializeSchema(arrow.NewSchema(out, nil), mem), nil
}

// valueBytes is v's bytes as partition values carry them.
func valueBytes(v scalar.Scalar, mem memory.Allocator) ([]byte, error) {
	switch v := v.(type) {
	case *scalar.Boolean:
		if v.Value {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case scalar.BinaryScalar:
		return append([]byte{}, v.Data()...), nil
	}
	fw, ok := v.DataType().(arrow.FixedWidthDataType)
	if !ok || fw.BitWidth()%8 != 0 {
		return nil, fmt.Errorf("values of type %s are not carried in tickets", v.DataType())
	}
	a, err := scalar.MakeArrayFromScalar(v, 1, mem)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	width := fw.BitWidth() / 8
	d := a.Data()
	buf := d.Buffers()[1].Bytes()
	return append([]byte{}, buf[d.Offset()*width:(d.Offset()+1)*width]...), nil
}

// DecodePartitionValues reads what EncodePartitionValues writes, from an
// untrusted ticket: one array of length 1 per field, which the caller
// releases. Bytes that are not so are an error wrapping
// errBadPartitionValues.
func DecodePartitionValues(b []byte, mem memory.Allocator) ([]arrow.Field, []arrow.Array, error) {
	s, err := DecodeSchema(b, mem)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errBadPartitionValues, err)
	}
	fields := s.Fields()
	out := make([]arrow.Field, len(fields))
	cols := make([]arrow.Array, 0, len(fields))
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, f := range fields {
		a, err := partitionArray(f, mem)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("%w: column %s: %v", errBadPartitionValues, f.Name, err)
		}
		cols = append(cols, a)
		out[len(cols)-1] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: true}
	}
	return out, cols, nil
}

// partitionArray is f's value as an array of one element.
func partitionArray(f arrow.Field, mem memory.Allocator) (arrow.Array, error) {
	i := f.Metadata.FindKey(partitionValueKey)
	if i < 0 {
		return array.MakeArrayOfNull(mem, f.Type, 1), nil
	}
	raw := []byte(f.Metadata.Values()[i])
	switch t := f.Type.(type) {
	case *arrow.BooleanType:
		if len(raw) != 1 || raw[0] > 1 {
			return nil, fmt.Errorf("boolean of %d bytes", len(raw))
		}
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		b.Append(raw[0] == 1)
		return b.NewArray(), nil
	case arrow.BinaryDataType:
		b := array.NewBuilder(mem, t)
		defer b.Release()
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(string(raw))
		case *array.LargeStringBuilder:
			bb.Append(string(raw))
		case *array.BinaryBuilder:
			bb.Append(raw)
		default:
			return nil, fmt.Errorf("type %s", t)
		}
		return b.NewArray(), nil
	case arrow.FixedWidthDataType:
		switch t.(type) {
		case *arrow.DictionaryType, arrow.ExtensionType:
			return nil, fmt.Errorf("type %s", t)
		}
		if t.BitWidth()%8 != 0 || len(raw) != t.BitWidth()/8 {
			return nil, fmt.Errorf("%d bytes for a value of type %s", len(raw), t)
		}
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(len(raw))
		copy(buf.Bytes(), raw)
		d := array.NewData(t, 1, []*memory.Buffer{nil, buf}, nil, 0, 0)
		buf.Release()
		defer d.Release()
		return array.MakeFromData(d), nil
	}
	return nil, fmt.Errorf("type %s", f.Type)
}
