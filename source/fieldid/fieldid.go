// Package fieldid matches a table's columns to one data file's columns by
// field id, the way Iceberg (and Delta's column mapping in id mode) asks:
// a column renamed since the file was written is found under its old
// name, a column dropped and re-added under the same name does not read
// the old column's data, and a column the file lacks reads as nulls.
// Files written without field ids are matched through the table's name
// mapping (physical names).
//
// It is pure: two Arrow schemas in, one decision per column out, so table
// tests pin it. The planner calls it once per file with the file's footer
// schema (pqarrow puts each column's id in its "PARQUET:field_id" field
// metadata) and records the result in the file's task: which of the
// file's columns each scan column reads, under which name, cast to which
// type.
package fieldid

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// Key is the field metadata key holding a field's id, as pqarrow and
// iceberg-go write it.
const Key = "PARQUET:field_id"

// Column is how one column of the table is read from a file.
type Column struct {
	// Name is the table's name of the column.
	Name string
	// File is the index of the file's top-level field that holds the
	// column, or -1 when the file lacks it (it reads as nulls).
	File int
	// FileName is that field's name in the file ("" when absent).
	FileName string
	// Cast is set when the file's type must be promoted to the table's
	// (int to long, float to double, a decimal to a wider precision).
	Cast bool
}

// Error is a file whose columns cannot be read as the table's: a type the
// table's type is not a promotion of, nested fields that differ, or no
// way to match at all. Unsupported distinguishes what scand does not read
// (yet) from a file that contradicts its table.
type Error struct {
	Msg         string
	Unsupported bool
}

func (e *Error) Error() string { return e.Msg }

// ID returns a field's id, and whether it has one. arrow-go marks fields
// of files without ids with "-1", which counts as none.
func ID(f arrow.Field) (int, bool) {
	if !f.HasMetadata() {
		return 0, false
	}
	i := f.Metadata.FindKey(Key)
	if i < 0 {
		return 0, false
	}
	id, err := strconv.Atoi(f.Metadata.Values()[i])
	if err != nil || id < 0 {
		return 0, false
	}
	return id, true
}

// HasIDs reports whether any top-level field of s has a field id.
func HasIDs(s *arrow.Schema) bool {
	for _, f := range s.Fields() {
		if _, ok := ID(f); ok {
			return true
		}
	}
	return false
}

// Match resolves each field of table (the scan's columns, each with its
// field id) in file. When the file has field ids, columns match by id;
// otherwise by name, through physical (table name -> the name files
// without ids use, from the table's name mapping; nil: the same names).
// nameMapped says the table has a name mapping: without one, a file
// without field ids cannot be matched safely and is refused, as PyIceberg
// refuses it.
func Match(table, file *arrow.Schema, physical map[string]string, nameMapped bool) ([]Column, error) {
	byID := HasIDs(file)
	if !byID && !nameMapped {
		return nil, &Error{Msg: "the file has no field ids and the table no name mapping (schema.name-mapping.default) to match its columns by", Unsupported: true}
	}
	return match(table, file, physical, byID)
}

// MatchByName resolves each field of table in file by name (through
// physical, where a table stores columns under other names: Delta's
// column mapping in name mode), whatever field ids the file has.
func MatchByName(table, file *arrow.Schema, physical map[string]string) ([]Column, error) {
	return match(table, file, physical, false)
}

func match(table, file *arrow.Schema, physical map[string]string, byID bool) ([]Column, error) {
	index := map[int]int{}
	names := map[string]int{}
	for i, f := range file.Fields() {
		if id, ok := ID(f); ok && byID {
			if _, dup := index[id]; dup {
				return nil, &Error{Msg: fmt.Sprintf("the file has field id %d twice", id)}
			}
			index[id] = i
		}
		if _, dup := names[f.Name]; !dup {
			names[f.Name] = i
		}
	}
	out := make([]Column, 0, table.NumFields())
	for _, tf := range table.Fields() {
		c := Column{Name: tf.Name, File: -1}
		i := -1
		if byID {
			id, ok := ID(tf)
			if !ok {
				return nil, &Error{Msg: fmt.Sprintf("table column %q has no field id", tf.Name)}
			}
			if j, ok := index[id]; ok {
				i = j
			}
		} else {
			name := tf.Name
			if p, ok := physical[tf.Name]; ok {
				name = p
			}
			if j, ok := names[name]; ok {
				i = j
			}
		}
		if i >= 0 {
			ff := file.Field(i)
			cast, err := compatible(ff.Type, tf.Type, byID, physical, tf.Name)
			if err != nil {
				return nil, &Error{Msg: fmt.Sprintf("column %q (file column %q): %s", tf.Name, ff.Name, err.(*Error).Msg), Unsupported: err.(*Error).Unsupported}
			}
			c.File, c.FileName, c.Cast = i, ff.Name, cast
		}
		out = append(out, c)
	}
	return out, nil
}

// compatible says whether a file column of type from reads as the table's
// type to, and whether that takes a cast.
func compatible(from, to arrow.DataType, byID bool, physical map[string]string, path string) (bool, error) {
	if d, ok := from.(*arrow.DictionaryType); ok {
		from = d.ValueType
	}
	if promotion(from, to) {
		return true, nil
	}
	switch t := to.(type) {
	case *arrow.StructType:
		f, ok := from.(*arrow.StructType)
		if !ok {
			return false, &Error{Msg: fmt.Sprintf("the file has %s, the table %s", from, to)}
		}
		return false, sameFields(f.Fields(), t.Fields(), byID, physical, path)
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType, *arrow.FixedSizeListType:
		fn, ok1 := from.(arrow.NestedType)
		tn := to.(arrow.NestedType)
		if !ok1 || from.ID() != to.ID() {
			if from.ID() == arrow.LIST && to.ID() == arrow.LARGE_LIST || from.ID() == arrow.LARGE_LIST && to.ID() == arrow.LIST {
				// list and large_list carry the same values
			} else {
				return false, &Error{Msg: fmt.Sprintf("the file has %s, the table %s", from, to)}
			}
		}
		return false, sameFields(fn.Fields(), tn.Fields(), byID, physical, path)
	}
	if sameType(from, to) {
		return !arrow.TypeEqual(from, to), nil
	}
	return false, &Error{Msg: fmt.Sprintf("the file has %s, which does not read as the table's %s", from, to)}
}

// sameFields requires nested fields to match one to one, by id (or name)
// and type: scand reads nested columns with the file's fields, so a nested
// field added or dropped since the file was written is not read. A field
// renamed is, where ids match it (or a physical name): NestedNames gives
// it the table's name.
func sameFields(from, to []arrow.Field, byID bool, physical map[string]string, path string) error {
	unsupported := func(what string) error {
		return &Error{Msg: fmt.Sprintf("nested fields of %q differ from the file's (%s); scand reads nested columns only as written", path, what), Unsupported: true}
	}
	if len(from) != len(to) {
		return unsupported(fmt.Sprintf("%d fields in the file, %d in the table", len(from), len(to)))
	}
	for i := range to {
		sameID := false
		if byID {
			a, okA := ID(from[i])
			b, okB := ID(to[i])
			if okA && okB && a != b {
				return unsupported(fmt.Sprintf("field %d is id %d in the file, %d in the table", i, a, b))
			}
			// The same field under another name: renamed since the file
			// was written; the renamed view reads it under the table's
			// name (NestedNames).
			sameID = okA && okB
		}
		name := path + "." + to[i].Name
		want := to[i].Name
		if p, ok := physical[name]; ok && !byID {
			want = p[len(p)-len(lastSegment(p)):]
		}
		if from[i].Name != want && !sameID && !isListElement(from[i].Name, to[i].Name) {
			return unsupported(fmt.Sprintf("field %q is %q in the file", to[i].Name, from[i].Name))
		}
		cast, err := compatible(from[i].Type, to[i].Type, byID, physical, name)
		if err != nil {
			return err
		}
		if cast {
			return unsupported(fmt.Sprintf("field %q is promoted from %s", to[i].Name, from[i].Type))
		}
	}
	return nil
}

func lastSegment(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' {
			return p[i+1:]
		}
	}
	return p
}

// isListElement accepts the names writers give list elements and map
// entries ("element", "item", "key_value", "entries") as the same.
func isListElement(a, b string) bool {
	elem := func(s string) bool {
		switch s {
		case "element", "item", "array_element", "bag", "array", "key_value", "entries", "map", "key", "value":
			return true
		}
		return false
	}
	return elem(a) && elem(b)
}

// promotion reports Iceberg's type promotions: int to long, float to
// double, a decimal to a wider precision of the same scale, and date to
// timestamp (without a zone; format version 3).
func promotion(from, to arrow.DataType) bool {
	switch {
	case from.ID() == arrow.INT32 && to.ID() == arrow.INT64,
		from.ID() == arrow.FLOAT32 && to.ID() == arrow.FLOAT64:
		return true
	case from.ID() == arrow.DATE32 && to.ID() == arrow.TIMESTAMP:
		return to.(*arrow.TimestampType).TimeZone == ""
	case from.ID() == arrow.DECIMAL128 && to.ID() == arrow.DECIMAL128:
		f, t := from.(*arrow.Decimal128Type), to.(*arrow.Decimal128Type)
		return f.Scale == t.Scale && f.Precision < t.Precision
	}
	return false
}

// sameType compares primitive types as a reader sees them: string and
// large string (or binary, large binary) hold the same values, and a
// timestamp's zone must agree on being set.
func sameType(a, b arrow.DataType) bool {
	if e, ok := a.(arrow.ExtensionType); ok {
		a = e.StorageType()
	}
	if e, ok := b.(arrow.ExtensionType); ok {
		b = e.StorageType()
	}
	if arrow.TypeEqual(a, b) {
		return true
	}
	class := func(t arrow.DataType) arrow.Type {
		switch t.ID() {
		case arrow.LARGE_STRING, arrow.STRING_VIEW:
			return arrow.STRING
		case arrow.LARGE_BINARY, arrow.BINARY_VIEW:
			return arrow.BINARY
		}
		return t.ID()
	}
	if class(a) != class(b) {
		return false
	}
	switch class(a) {
	case arrow.STRING, arrow.BINARY:
		return true
	case arrow.TIMESTAMP:
		ta, tb := a.(*arrow.TimestampType), b.(*arrow.TimestampType)
		return ta.Unit == tb.Unit && (ta.TimeZone == "") == (tb.TimeZone == "")
	case arrow.FIXED_SIZE_BINARY:
		return a.(*arrow.FixedSizeBinaryType).ByteWidth == b.(*arrow.FixedSizeBinaryType).ByteWidth
	}
	return false
}
