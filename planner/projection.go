package planner

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// One projection truth (docs/schemas.md, "Projection").
//
// A request's columns map to the scan's output columns by one rule, which
// the readers apply to each file (scanner.File.Project) and the planner
// to the scan (requestedFields):
//   - every requested name denotes one top-level output column: a hive
//     partition column by its name, or the top-level field of the files
//     that the name is, or whose dotted path it starts ("pickup.lat" is
//     pickup);
//   - output columns come in the order the request first names them, each
//     once;
//   - a struct named only through paths keeps only the fields named, in
//     the file's order; named whole (also), it is whole.
//
// The FlightInfo's schema, every ticket and every stream must then agree.
// Two checks make a disagreement an INTERNAL error instead of a stream
// whose batches differ from the FlightInfo: the planner rebuilds, for
// every file, the schema DoGet will rebuild from the file's projection and
// its ticket's delta (checkPlannedSchema), and every ticket carries the
// planned schema's fingerprint, which DoGet checks against the schema it
// rebuilt before it sends anything (the server's checkStreamSchema).

// requestedFields are the scan's output fields for an explicit column
// list: unified holds the files' projections unified (top-level fields,
// structs already pruned to the paths named), parts the partition columns.
// A name that denotes nothing is left out (unknownColumns reports it).
func requestedFields(columns []string, unified *arrow.Schema, parts *partitions) []arrow.Field {
	fields := make([]arrow.Field, 0, len(columns))
	seen := make(map[string]bool, len(columns))
	for _, c := range columns {
		var f arrow.Field
		if pf, ok := parts.field(c); ok {
			f = pf
		} else if i := topFieldOf(unified, c); i >= 0 {
			f = unified.Field(i)
		} else {
			continue
		}
		if !seen[f.Name] {
			seen[f.Name] = true
			fields = append(fields, f)
		}
	}
	return fields
}

// topFieldOf is the index of the top-level field of s that column name
// denotes: the field of that name, else the one whose name followed by a
// dot starts it (the longest such, as a name with dots is matched whole
// first); -1 for none.
func topFieldOf(s *arrow.Schema, name string) int {
	if i := s.FieldIndices(name); len(i) > 0 {
		return i[0]
	}
	best := -1
	for i, f := range s.Fields() {
		if strings.HasPrefix(name, f.Name+".") && (best < 0 || len(f.Name) > len(s.Field(best).Name)) {
			best = i
		}
	}
	return best
}

// SchemaFingerprint is FNV-1a 64 over everything of schema the IPC format
// carries: each field's name, nullability, type (as arrow-go prints it:
// parameters, units, zones) and metadata, nested fields the same way, and
// the schema's metadata. Never 0, which a ticket uses for "unchecked".
// Replicas of one scand version compute it alike; its definition is part
// of the ticket format (ScanTask.schema_fingerprint): change it only with a
// new field. Serializing the schema and hashing that would cost 3.5 ms
// for 2,000 columns (BenchmarkSchemaFingerprint2000Columns).
func SchemaFingerprint(schema *arrow.Schema) uint64 {
	h := fnv64a(14695981039346656037) // FNV-1a's offset basis
	for i := range schema.NumFields() {
		h.field(schema.Field(i)) // Fields() would copy them all
	}
	h.metadata(schema.Metadata())
	return max(uint64(h), 1)
}

// fnv64a is FNV-1a 64 written for strings and ints without allocating
// (hash/fnv converts every string to bytes).
type fnv64a uint64

func (h *fnv64a) byte(b byte) {
	*h ^= fnv64a(b)
	*h *= 1099511628211 // FNV's 64-bit prime
}

// str hashes s with its length, so that no two sequences of strings hash
// the same bytes.
func (h *fnv64a) str(s string) {
	h.int(len(s))
	for i := 0; i < len(s); i++ {
		h.byte(s[i])
	}
}

func (h *fnv64a) int(v int) {
	for u := uint64(v); ; u >>= 7 {
		if u < 0x80 {
			h.byte(byte(u))
			return
		}
		h.byte(byte(u) | 0x80)
	}
}

func (h *fnv64a) field(f arrow.Field) {
	h.str(f.Name)
	if f.Nullable {
		h.byte(1)
	} else {
		h.byte(0)
	}
	h.typ(f.Type)
	h.metadata(f.Metadata)
	if n, ok := f.Type.(arrow.NestedType); ok {
		children := n.Fields()
		h.int(len(children))
		for _, c := range children {
			h.field(c)
		}
	}
}

// typ hashes a type without its nested fields: the id of a type without
// parameters, else the type as arrow-go prints it (units, zones,
// precision, widths).
func (h *fnv64a) typ(t arrow.DataType) {
	switch id := t.ID(); id {
	case arrow.NULL, arrow.BOOL, arrow.UINT8, arrow.INT8, arrow.UINT16, arrow.INT16, arrow.UINT32, arrow.INT32,
		arrow.UINT64, arrow.INT64, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.BINARY,
		arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.DATE32, arrow.DATE64, arrow.STRUCT:
		h.int(int(id))
	default:
		h.int(int(id))
		h.str(t.String())
	}
}

func (h *fnv64a) metadata(m arrow.Metadata) {
	h.int(m.Len())
	keys, values := m.Keys(), m.Values()
	for i := range keys {
		h.str(keys[i])
		h.str(values[i])
	}
}

// SchemasEqual says whether a and b are the same schema as the IPC
// format writes it: to the last metadata key and nested field name
// (arrow.Schema.Equal ignores the schema's metadata and a list's element
// name).
func SchemasEqual(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() || !a.Metadata().Equal(b.Metadata()) {
		return false
	}
	for i := range a.NumFields() {
		f, g := a.Field(i), b.Field(i)
		if f.Name != g.Name || f.Nullable != g.Nullable || !f.Metadata.Equal(g.Metadata) || !identicalTypes(f.Type, g.Type) {
			return false
		}
	}
	return true
}

// SchemaMismatchError is a stream whose schema is not the plan's: scand's
// bug, never the client's: the server leaves it INTERNAL.
type SchemaMismatchError struct {
	Path    string
	Diff    string // the first difference, when both schemas are known
	Stream  string // the stream's schema, described
	Planned string // the plan's, described, or its fingerprint
}

func (e *SchemaMismatchError) Error() string {
	diff := ""
	if e.Diff != "" {
		diff = " (" + e.Diff + ")"
	}
	return fmt.Sprintf("internal error: the stream of %s would send a schema other than the one the scan planned, the FlightInfo's%s; "+
		"scand refuses to send batches that differ from the plan, please report this with the request; stream: %s; planned: %s",
		e.Path, diff, e.Stream, e.Planned)
}

// maxSchemaDescription bounds each schema in the message: status messages
// are cut at 4 KiB (truncateMessage), and both schemas must show.
const maxSchemaDescription = 1500

// DescribeSchema is a schema on one line, with its metadata keys (their
// values can be long: the pandas key's is JSON of every column).
func DescribeSchema(s *arrow.Schema) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range s.Fields() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(describeField(f))
	}
	b.WriteByte('}')
	if m := s.Metadata(); m.Len() > 0 {
		fmt.Fprintf(&b, " with metadata %v", m.Keys())
	}
	out := b.String()
	if len(out) > maxSchemaDescription {
		out = strings.ToValidUTF8(out[:maxSchemaDescription], "") + fmt.Sprintf("... (%d fields)", s.NumFields())
	}
	return out
}

func describeField(f arrow.Field) string {
	out := fmt.Sprintf("%s: %s", f.Name, f.Type)
	if !f.Nullable {
		out += " not null"
	}
	if f.HasMetadata() {
		out += fmt.Sprintf(" %v", f.Metadata.Keys())
	}
	return out
}

// schemaDifference says where got first differs from want.
func schemaDifference(got, want *arrow.Schema) string {
	gf, wf := got.Fields(), want.Fields()
	for i := range max(len(gf), len(wf)) {
		switch {
		case i >= len(wf):
			return fmt.Sprintf("field %d, %s, is not planned", i, describeField(gf[i]))
		case i >= len(gf):
			return fmt.Sprintf("planned field %d, %s, is missing", i, describeField(wf[i]))
		case !SchemasEqual(arrow.NewSchema(gf[i:i+1], nil), arrow.NewSchema(wf[i:i+1], nil)):
			return fmt.Sprintf("field %d is %s, planned %s", i, describeField(gf[i]), describeField(wf[i]))
		}
	}
	return "the schema metadata differs"
}

// CheckPlannedSchema rebuilds the schema DoGet will send for file f, from
// its projection p and its tickets' delta d, and fails with INTERNAL,
// naming both schemas, unless it is the plan's (the delta cannot express
// every difference: it never drops a column of the file's projection).
func CheckPlannedSchema(path string, p *arrow.Schema, d *scandv1.SchemaDelta, planned *arrow.Schema, mem memory.Allocator) error {
	rebuilt, err := ApplyDelta(p, d, mem)
	if err != nil {
		return &SchemaMismatchError{Path: path, Stream: fmt.Sprintf("of %s and its delta (which does not apply: %v)", DescribeSchema(p), err), Planned: DescribeSchema(planned)}
	}
	if !SchemasEqual(rebuilt, planned) {
		return &SchemaMismatchError{Path: path, Diff: schemaDifference(rebuilt, planned), Stream: DescribeSchema(rebuilt), Planned: DescribeSchema(planned)}
	}
	return nil
}
