package parquet

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/scand/scand/scanner"
)

// Logical types newer than arrow-go.
//
// A SchemaElement's logicalType is a Thrift union. A writer newer than
// arrow-go v18.8.0 may set a member arrow-go does not know; its decoder
// skips the member and then panics on a union with nothing set ("invalid
// logical type"). pyarrow reads such a column as its physical type, as
// the format asks of readers that do not know a logical type. scand does
// the same: when the footer fails so, it reads the footer itself, drops
// each logicalType that has no member arrow-go knows (patchFooter), and
// opens the file with the patched footer. Files without such a type never
// take this path.

// knownLogicalTypes are the LogicalType union members arrow-go v18.8.0
// decodes, by Thrift field id (parquet.thrift: 1 STRING .. 8 TIMESTAMP,
// 10 INTEGER .. 18 GEOGRAPHY; 9 is unused).
func knownLogicalType(id int16) bool { return id >= 1 && id <= 18 && id != 9 }

// schemaElementLogicalType is SchemaElement.logicalType's field id, and
// fileMetaDataSchema FileMetaData.schema's.
const (
	schemaElementLogicalType = 10
	fileMetaDataSchema       = 2
)

// newParquetReader is file.NewParquetReader, retried with a patched
// footer when arrow-go panics on a logical type it does not know. Other
// panics pass on to Open's recover.
func newParquetReader(name string, r io.ReaderAt, size int64, opts []file.ReadOption) (pf *file.Reader, err error) {
	pf, err, unknown := tryParquetReader(r, size, opts)
	if !unknown {
		return pf, err
	}
	footer, err := readFooter(name, r, size)
	if err != nil {
		return nil, err
	}
	patched, err := patchFooter(footer)
	if err != nil {
		return nil, fmt.Errorf("%s: footer: %w", name, err)
	}
	md, err := metadata.NewFileMetaData(patched, nil)
	if err != nil {
		return nil, err
	}
	return file.NewParquetReader(io.NewSectionReader(r, 0, size), append(opts, file.WithMetadata(md))...)
}

// tryParquetReader opens the file, reporting a panic on an unknown
// logical type as unknown instead of panicking.
func tryParquetReader(r io.ReaderAt, size int64, opts []file.ReadOption) (pf *file.Reader, err error, unknown bool) {
	defer func() {
		if p := recover(); p != nil {
			if s, ok := p.(string); ok && strings.Contains(s, "invalid logical type") {
				unknown = true
				return
			}
			panic(p)
		}
	}()
	pf, err = file.NewParquetReader(io.NewSectionReader(r, 0, size), opts...)
	return pf, err, false
}

// readFooter returns the serialized FileMetaData of an unencrypted
// Parquet file: the length before the trailing magic says how long it
// is, and it must fit in the file.
func readFooter(name string, r io.ReaderAt, size int64) ([]byte, error) {
	var tail [8]byte
	if size < 12 {
		return nil, fmt.Errorf("%s: %d bytes is too short for Parquet: %w", name, size, scanner.ErrCorrupt)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:]) != "PAR1" || n > size-12 {
		return nil, fmt.Errorf("%s: footer of %d bytes in a %d-byte file: %w", name, n, size, scanner.ErrCorrupt)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return nil, err
	}
	return footer, nil
}

// patchFooter returns the FileMetaData b with every schema element's
// logicalType dropped when no member of its union is one arrow-go knows.
// Everything else is copied byte for byte.
func patchFooter(b []byte) ([]byte, error) {
	r := thriftReader{b: b}
	out := make([]byte, 0, len(b))
	var last int16
	for {
		start := r.pos
		id, typ, err := r.fieldHeader(&last)
		if err != nil {
			return nil, err
		}
		if typ == tcStop {
			return append(out, b[start:r.pos]...), nil
		}
		if id != fileMetaDataSchema || typ != tcList {
			if err := r.skipField(typ, 1); err != nil {
				return nil, err
			}
			out = append(out, b[start:r.pos]...)
			continue
		}
		out = append(out, b[start:r.pos]...)
		if out, err = r.patchSchema(out); err != nil {
			return nil, err
		}
	}
}

// patchSchema copies the list<SchemaElement> at r to out, each element
// through patchElement.
func (r *thriftReader) patchSchema(out []byte) ([]byte, error) {
	start := r.pos
	c, err := r.readByte()
	if err != nil {
		return nil, err
	}
	size := uint64(c >> 4)
	if size == 15 {
		if size, err = r.uvarint(); err != nil {
			return nil, err
		}
	}
	if c&0x0f != tcStruct {
		return nil, corruptHeader("schema is a list of type %d, not of structs", c&0x0f)
	}
	n, err := r.checkSize(size, 1)
	if err != nil {
		return nil, err
	}
	out = append(out, r.b[start:r.pos]...)
	for range n {
		if out, err = r.patchElement(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// patchElement copies one SchemaElement at r to out without its
// logicalType when that names no type arrow-go knows. The field headers
// after a dropped field are re-encoded: compact protocol writes field
// ids as deltas from the previous field's.
func (r *thriftReader) patchElement(out []byte) ([]byte, error) {
	var last, written int16
	for {
		id, typ, err := r.fieldHeader(&last)
		if err != nil {
			return nil, err
		}
		if typ == tcStop {
			return append(out, tcStop), nil
		}
		valStart := r.pos
		drop := false
		if id == schemaElementLogicalType && typ == tcStruct {
			if drop, err = r.unknownUnion(); err != nil {
				return nil, err
			}
		} else if err := r.skipField(typ, 2); err != nil {
			return nil, err
		}
		if drop {
			continue
		}
		out = appendFieldHeader(out, id, typ, &written)
		out = append(out, r.b[valStart:r.pos]...)
	}
}

// unknownUnion skips a LogicalType union and reports whether none of its
// members is one arrow-go knows.
func (r *thriftReader) unknownUnion() (bool, error) {
	known := false
	var last int16
	for {
		id, typ, err := r.fieldHeader(&last)
		if err != nil || typ == tcStop {
			return !known, err
		}
		known = known || knownLogicalType(id)
		if err := r.skipField(typ, 3); err != nil {
			return false, err
		}
	}
}

// appendFieldHeader writes a compact-protocol field header: the short
// form when the id is 1..15 above the previous one, the long form
// otherwise.
func appendFieldHeader(out []byte, id int16, typ byte, last *int16) []byte {
	if d := int(id) - int(*last); d > 0 && d <= 15 {
		out = append(out, byte(d)<<4|typ)
	} else {
		out = append(out, typ)
		out = binary.AppendUvarint(out, uint64(uint16((id<<1)^(id>>15))))
	}
	*last = id
	return out
}
