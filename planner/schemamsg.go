package planner

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A ticket's schema delta holds an IPC-encoded Arrow schema, and tickets
// come from clients. arrow-go's schema reader trusts the flatbuffer's
// vector lengths (make([]arrow.Field, n) with n from the buffer), so four
// forged bytes ask for hundreds of GB and the process dies: no recover
// catches an out-of-memory. checkSchemaMessage walks the flatbuffer first
// and refuses vectors that do not fit in the bytes given, nesting deeper
// than any real schema, or more elements in all than a ticket needs.
// Reads past the end that the walk does not cover panic inside arrow-go;
// DecodeSchema recovers those.

const (
	maxSchemaDepth    = 64
	maxSchemaElements = 1 << 16
)

var errBadSchema = errors.New("not an Arrow IPC schema")

// DecodeSchema decodes an IPC schema from an untrusted source (a
// ticket's schema delta or extra fields).
func DecodeSchema(b []byte, mem memory.Allocator) (s *arrow.Schema, err error) {
	if err := checkSchemaMessage(b); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%w: %v", errBadSchema, r)
		}
	}()
	return deserializeSchema(b, mem)
}

// fbuf reads a flatbuffer with every offset checked.
type fbuf struct {
	b      []byte
	budget int // vector elements still allowed
}

func (f *fbuf) u32(at int) (int, error) {
	if at < 0 || at+4 > len(f.b) {
		return 0, errBadSchema
	}
	return int(binary.LittleEndian.Uint32(f.b[at:])), nil
}

func (f *fbuf) u16(at int) (int, error) {
	if at < 0 || at+2 > len(f.b) {
		return 0, errBadSchema
	}
	return int(binary.LittleEndian.Uint16(f.b[at:])), nil
}

// field is the position of table t's field slot; -1 when it is absent.
func (f *fbuf) field(t, slot int) (int, error) {
	so, err := f.u32(t)
	if err != nil {
		return 0, err
	}
	vt := t - int(int32(uint32(so)))
	vsize, err := f.u16(vt)
	if err != nil || 4+2*slot >= vsize { // flatbuffers' own test, to read what arrow-go reads
		return -1, err
	}
	o, err := f.u16(vt + 4 + 2*slot)
	if err != nil || o == 0 {
		return -1, err
	}
	return t + o, nil
}

// ref follows the forward offset stored at p.
func (f *fbuf) ref(p int) (int, error) {
	o, err := f.u32(p)
	if err != nil || p+o >= len(f.b) {
		return 0, errBadSchema
	}
	return p + o, nil
}

// vector returns the first element and length of table t's vector at slot,
// with elements of size bytes, charged to the budget.
func (f *fbuf) vector(t, slot, size int) (start, n int, err error) {
	p, err := f.field(t, slot)
	if err != nil || p < 0 {
		return 0, 0, err
	}
	v, err := f.ref(p)
	if err != nil {
		return 0, 0, err
	}
	if n, err = f.u32(v); err != nil {
		return 0, 0, err
	}
	if f.budget -= n; f.budget < 0 || n > (len(f.b)-v-4)/size {
		return 0, 0, errBadSchema
	}
	return v + 4, n, nil
}

// tables visits the tables of t's vector of tables at slot.
func (f *fbuf) tables(t, slot int, visit func(int) error) error {
	start, n, err := f.vector(t, slot, 4)
	for i := 0; err == nil && i < n; i++ {
		var e int
		if e, err = f.ref(start + 4*i); err == nil {
			err = visit(e)
		}
	}
	return err
}

// checkSchemaMessage checks an encapsulated IPC message holding a Schema:
// Message{version, header_type, header, bodyLength, custom_metadata},
// Schema{endianness, fields, custom_metadata, features}.
func checkSchemaMessage(b []byte) error {
	off := 0
	if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0xFFFFFFFF {
		off = 4 // continuation marker
	}
	f := &fbuf{b: b, budget: maxSchemaElements}
	n, err := f.u32(off)
	if err != nil || n > len(b)-off-4 {
		return errBadSchema
	}
	f.b = b[off+4 : off+4+n]
	msg, err := f.ref(0)
	if err != nil {
		return err
	}
	if err := f.keyValues(msg, 4); err != nil {
		return err
	}
	// arrow-go allocates bodyLength bytes before reading the body.
	if p, err := f.field(msg, 3); err != nil || (p >= 0 && (p+8 > len(f.b) || binary.LittleEndian.Uint64(f.b[p:]) > uint64(len(b)))) {
		return errBadSchema
	}
	p, err := f.field(msg, 2)
	if err != nil || p < 0 {
		return errBadSchema
	}
	schema, err := f.ref(p)
	if err != nil {
		return err
	}
	if _, _, err := f.vector(schema, 3, 8); err != nil {
		return err
	}
	if err := f.keyValues(schema, 2); err != nil {
		return err
	}
	return f.tables(schema, 1, func(t int) error { return f.checkField(t, 1) })
}

// keyValues checks a custom_metadata vector (tables of two strings, whose
// bytes arrow-go slices and so bounds itself).
func (f *fbuf) keyValues(t, slot int) error {
	return f.tables(t, slot, func(int) error { return nil })
}

// checkField checks Field{name, nullable, type_type, type, dictionary,
// children, custom_metadata}, and a Union type's typeIds.
func (f *fbuf) checkField(t, depth int) error {
	if depth > maxSchemaDepth {
		return errBadSchema
	}
	if err := f.keyValues(t, 6); err != nil {
		return err
	}
	if err := f.unionTypeIDs(t); err != nil {
		return err
	}
	return f.tables(t, 5, func(c int) error { return f.checkField(c, depth+1) })
}

// unionTypeIDs checks Union{mode, typeIds} when the field's type is one
// (Type.Union is 14).
func (f *fbuf) unionTypeIDs(t int) error {
	p, err := f.field(t, 2)
	if err != nil || p < 0 || p >= len(f.b) || f.b[p] != 14 {
		return err
	}
	if p, err = f.field(t, 3); err != nil || p < 0 {
		return err
	}
	u, err := f.ref(p)
	if err != nil {
		return err
	}
	_, _, err = f.vector(u, 1, 4)
	return err
}
