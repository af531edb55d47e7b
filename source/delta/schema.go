package delta

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Column mapping modes (the table property delta.columnMapping.mode).
const (
	mappingNone = "none"
	mappingName = "name"
	mappingID   = "id"
)

// Column metadata keys of column mapping.
const (
	keyPhysicalName = "delta.columnMapping.physicalName"
	keyColumnID     = "delta.columnMapping.id"
	// fieldIDKey is where Arrow schemas read from Parquet keep a field id,
	// and where the source contract expects one under ByFieldID.
	fieldIDKey = "PARQUET:field_id"
)

// errSchema marks a schemaString that cannot be decoded.
var errSchema = errors.New("invalid table schema")

// errUnsupportedType marks a valid Delta type scand does not read.
var errUnsupportedType = errors.New("unsupported column type")

// tableSchema is a table's schema as a scan sees it.
type tableSchema struct {
	// arrow has the logical names, in the table's order; under id mode
	// each field carries its id as PARQUET:field_id metadata.
	arrow *arrow.Schema
	// physical maps a logical dotted name (top-level columns, and fields
	// of structs below them) to its physical one, where they differ:
	// column mapping's name and id modes. Nil without column mapping.
	physical map[string]string
	// leaves maps a physical dotted name to the logical column it stores:
	// how partition values and statistics, keyed by physical names, find
	// their column.
	leaves map[string]leaf
	mode   string
	// hiddenRenames are struct fields below lists or maps whose physical
	// names differ from their logical ones (column mapping): a scan
	// matching by name cannot rename them.
	hiddenRenames []string
}

// leaf is one column reachable through structs alone.
type leaf struct {
	logical string
	typ     arrow.DataType
}

// jsonField is a StructField of the serialized schema.
type jsonField struct {
	Name     string                     `json:"name"`
	Type     json.RawMessage            `json:"type"`
	Nullable *bool                      `json:"nullable"`
	Metadata map[string]json.RawMessage `json:"metadata"`
}

type jsonType struct {
	Type              string          `json:"type"`
	Fields            []jsonField     `json:"fields"`
	ElementType       json.RawMessage `json:"elementType"`
	ContainsNull      *bool           `json:"containsNull"`
	KeyType           json.RawMessage `json:"keyType"`
	ValueType         json.RawMessage `json:"valueType"`
	ValueContainsNull *bool           `json:"valueContainsNull"`
}

// maxSchemaDepth bounds nesting, so a hostile schemaString cannot exhaust
// the stack.
const maxSchemaDepth = 64

// parseSchema decodes a metaData action's schemaString under a column
// mapping mode ("none", "name" or "id").
func parseSchema(schemaString, mode string) (*tableSchema, error) {
	var root jsonType
	if err := json.Unmarshal([]byte(schemaString), &root); err != nil {
		return nil, fmt.Errorf("%v: %w", err, errSchema)
	}
	if root.Type != "struct" {
		return nil, fmt.Errorf("the top level is %q, not a struct: %w", root.Type, errSchema)
	}
	ts := &tableSchema{leaves: make(map[string]leaf), mode: mode}
	if mode != mappingNone {
		ts.physical = make(map[string]string)
	}
	b := schemaBuilder{ts: ts}
	fields, err := b.fields(root.Fields, "", "", true, 1)
	if err != nil {
		return nil, err
	}
	ts.arrow = arrow.NewSchema(fields, nil)
	return ts, nil
}

type schemaBuilder struct {
	ts *tableSchema
}

// fields converts a struct's fields; logical and physical are the dotted
// names of the struct ("" at the top), and reach says whether dotted names
// reach it (not below lists and maps).
func (b schemaBuilder) fields(in []jsonField, logical, physical string, reach bool, depth int) ([]arrow.Field, error) {
	out := make([]arrow.Field, 0, len(in))
	seen := make(map[string]bool, len(in))
	for _, f := range in {
		if f.Type == nil {
			return nil, fmt.Errorf("field %q has no type: %w", f.Name, errSchema)
		}
		lower := strings.ToLower(f.Name)
		if seen[lower] {
			return nil, fmt.Errorf("column %q appears twice: %w", f.Name, errSchema)
		}
		seen[lower] = true
		phys := f.Name
		var md arrow.Metadata
		if b.ts.mode != mappingNone {
			var err error
			if phys, err = physicalName(f); err != nil {
				return nil, err
			}
			if b.ts.mode == mappingID {
				id, err := columnID(f)
				if err != nil {
					return nil, err
				}
				md = arrow.NewMetadata([]string{fieldIDKey}, []string{strconv.FormatInt(id, 10)})
			}
		}
		lname, pname := join(logical, f.Name), join(physical, phys)
		if !reach && phys != f.Name {
			b.ts.hiddenRenames = append(b.ts.hiddenRenames, f.Name)
		}
		if reach && b.ts.physical != nil && lname != pname {
			b.ts.physical[lname] = pname
		}
		typ, err := b.typ(f.Type, lname, pname, reach, depth+1)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		if reach {
			if _, nested := typ.(*arrow.StructType); !nested {
				b.ts.leaves[pname] = leaf{logical: lname, typ: typ}
			}
		}
		nullable := f.Nullable == nil || *f.Nullable
		out = append(out, arrow.Field{Name: f.Name, Type: typ, Nullable: nullable, Metadata: md})
	}
	return out, nil
}

// typ converts a type: a primitive's name, or a struct, array or map
// object. logical and physical name the field the type belongs to; reach
// says whether dotted names reach it.
func (b schemaBuilder) typ(raw json.RawMessage, logical, physical string, reach bool, depth int) (arrow.DataType, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("nested deeper than %d levels: %w", maxSchemaDepth, errSchema)
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		return primitive(name)
	}
	var t jsonType
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("type %s: %w", truncate(string(raw), 60), errSchema)
	}
	switch t.Type {
	case "struct":
		fs, err := b.fields(t.Fields, logical, physical, reach, depth)
		if err != nil {
			return nil, err
		}
		return arrow.StructOf(fs...), nil
	case "array":
		if t.ElementType == nil {
			return nil, fmt.Errorf("an array without an elementType: %w", errSchema)
		}
		elem, err := b.typ(t.ElementType, "", "", false, depth+1)
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: elem, Nullable: t.ContainsNull == nil || *t.ContainsNull}), nil
	case "map":
		if t.KeyType == nil || t.ValueType == nil {
			return nil, fmt.Errorf("a map without a keyType or valueType: %w", errSchema)
		}
		k, err := b.typ(t.KeyType, "", "", false, depth+1)
		if err != nil {
			return nil, err
		}
		v, err := b.typ(t.ValueType, "", "", false, depth+1)
		if err != nil {
			return nil, err
		}
		m := arrow.MapOfWithMetadata(k, arrow.Metadata{}, v, arrow.Metadata{})
		m.SetItemNullable(t.ValueContainsNull == nil || *t.ValueContainsNull)
		return m, nil
	}
	return nil, fmt.Errorf("type %q: %w", t.Type, errSchema)
}

// primitive maps a Delta primitive type name to Arrow.
func primitive(name string) (arrow.DataType, error) {
	switch name {
	case "string":
		return arrow.BinaryTypes.String, nil
	case "long":
		return arrow.PrimitiveTypes.Int64, nil
	case "integer":
		return arrow.PrimitiveTypes.Int32, nil
	case "short":
		return arrow.PrimitiveTypes.Int16, nil
	case "byte":
		return arrow.PrimitiveTypes.Int8, nil
	case "float":
		return arrow.PrimitiveTypes.Float32, nil
	case "double":
		return arrow.PrimitiveTypes.Float64, nil
	case "boolean":
		return arrow.FixedWidthTypes.Boolean, nil
	case "binary":
		return arrow.BinaryTypes.Binary, nil
	case "date":
		return arrow.FixedWidthTypes.Date32, nil
	case "timestamp":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case "timestamp_ntz":
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	case "void":
		return arrow.Null, nil
	case "variant":
		return nil, fmt.Errorf("type variant: %w", errUnsupportedType)
	}
	if strings.HasPrefix(name, "decimal(") && strings.HasSuffix(name, ")") {
		ps := strings.Split(strings.TrimSuffix(strings.TrimPrefix(name, "decimal("), ")"), ",")
		if len(ps) == 2 {
			p, err1 := strconv.Atoi(strings.TrimSpace(ps[0]))
			s, err2 := strconv.Atoi(strings.TrimSpace(ps[1]))
			if err1 == nil && err2 == nil && 1 <= p && p <= 38 && 0 <= s && s <= p {
				return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
			}
		}
		return nil, fmt.Errorf("type %q: %w", name, errSchema)
	}
	if name == "decimal" { // Spark's default decimal
		return &arrow.Decimal128Type{Precision: 10, Scale: 0}, nil
	}
	return nil, fmt.Errorf("type %q: %w", truncate(name, 60), errSchema)
}

func physicalName(f jsonField) (string, error) {
	raw, ok := f.Metadata[keyPhysicalName]
	if !ok {
		return "", fmt.Errorf("column %q has no %s under column mapping: %w", f.Name, keyPhysicalName, errSchema)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s == "" {
		return "", fmt.Errorf("column %q: %s is not a name: %w", f.Name, keyPhysicalName, errSchema)
	}
	return s, nil
}

func columnID(f jsonField) (int64, error) {
	raw, ok := f.Metadata[keyColumnID]
	if !ok {
		return 0, fmt.Errorf("column %q has no %s under column mapping id mode: %w", f.Name, keyColumnID, errSchema)
	}
	var id int64
	if err := json.Unmarshal(raw, &id); err != nil || id < 0 || id > 1<<31-1 {
		return 0, fmt.Errorf("column %q: %s is not a 32-bit id: %w", f.Name, keyColumnID, errSchema)
	}
	return id, nil
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
