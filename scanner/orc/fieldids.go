package orc

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// icebergIDAttribute is the type attribute Iceberg's ORC writer stores a
// field's id under (ORCSchemaUtil.ICEBERG_ID_ATTRIBUTE); Parquet files
// carry ids in the schema itself.
const icebergIDAttribute = "iceberg.id"

// fieldIDKey is where Arrow schemas carry a field's id: the key pqarrow
// and iceberg-go use ("PARQUET:field_id"), so one matcher serves both
// formats.
const fieldIDKey = "PARQUET:field_id"

// SchemaWithFieldIDs implements scanner.FieldIDs: the file's schema with
// each field that has an Iceberg id (nested ones too) carrying it in its
// metadata. The schema Schema returns has none, as pyarrow.orc reads the
// file: ids matter to tables, which match columns by them.
func (f *File) SchemaWithFieldIDs() *arrow.Schema {
	fields := make([]arrow.Field, len(f.tops))
	for i, n := range f.tops {
		fields[i] = withIDs(n)
	}
	return arrow.NewSchema(fields, nil)
}

// withIDs is n as an Arrow field, with ids where the types have them.
func withIDs(n *projNode) arrow.Field {
	fld := arrow.Field{Name: n.name, Type: n.dt, Nullable: true}
	for _, a := range n.t.attributes {
		if a.key == icebergIDAttribute {
			if id, err := strconv.Atoi(a.value); err == nil && id >= 0 {
				fld.Metadata = arrow.NewMetadata([]string{fieldIDKey}, []string{a.value})
			}
		}
	}
	if len(n.children) == 0 {
		return fld
	}
	kids := make([]arrow.Field, len(n.children))
	for i, c := range n.children {
		kids[i] = withIDs(c)
	}
	switch n.t.kind {
	case kindStruct:
		fld.Type = arrow.StructOf(kids...)
	case kindList:
		fld.Type = arrow.ListOfField(kids[0])
	case kindMap:
		kids[0].Nullable = false // as arrow.MapOf makes it
		fld.Type = arrow.MapOfFields(kids[0], kids[1])
	}
	return fld
}
