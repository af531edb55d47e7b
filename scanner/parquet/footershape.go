package parquet

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/scand/scand/scanner"
)

// Schema limits, checked before the footer is decoded.
//
// arrow-go decodes a footer whole (Thrift into Go structs, then a schema
// tree, then Arrow types), and what it builds grows with the schema
// elements and column chunks the footer declares: about 1.3 KiB per column
// of one row group, 0.5 KiB per further column chunk, a few bytes per
// encoded byte. A deeply nested schema costs far more downstream: Arrow
// types and IPC schemas that walk it at every level (a 100 KB footer of
// 6,000 nested groups took 1.5 GB to plan and could not be encoded). So
// Open first walks the encoded footer itself (footerShape: a linear pass
// that allocates nothing per element) and refuses, as unsupported, a
// footer past what pyarrow reads:
//
//   - MaxSchemaDepth levels of schema elements from the root to a leaf
//     (root included): pyarrow's "schema too deeply nested" limit;
//   - MaxSchemaElements schema elements, and as many column chunks in one
//     row group: pyarrow's Thrift container limit.
//
// Once the Arrow schema is known, a column nested deeper than Arrow IPC
// carries is refused too (scanner.CheckNesting, 64 levels).
//
// Within those limits a footer's memory is what decodedBytes estimates;
// Open reserves it from the context's metadata budget
// (scanner.WithMetadataBudget) before decoding, which is how the server
// charges planning to its share of memory.

const (
	// MaxSchemaDepth is the deepest schema Open accepts, counted in schema
	// elements from the root to a leaf, the root included (pyarrow refuses
	// 101).
	MaxSchemaDepth = 100
	// MaxSchemaElements caps a footer's schema elements, and the column
	// chunks of one row group (pyarrow's default Thrift container limit).
	MaxSchemaElements = 1_000_000
)

// footerShape is what a footer declares, counted from its encoding.
type footerShape struct {
	bytes     int64 // the encoded FileMetaData
	elements  int   // schema elements, the root included
	leaves    int   // schema elements without children
	depth     int   // schema elements from the root to the deepest leaf
	rowGroups int
	chunks    int // column chunks over all row groups
	maxChunks int // the most column chunks of one row group
	// schema and keyValues are where FileMetaData's schema and
	// key_value_metadata fields' values lie in the encoded footer (zero
	// when absent): what the file's Arrow schema derives from (shapeKey).
	schema, keyValues [2]int
}

// FileMetaData and RowGroup field ids (parquet.thrift).
const (
	fileMetaDataRowGroups = 4
	fileMetaDataKeyValues = 5
	rowGroupColumns       = 1
	schemaElementChildren = 5
)

// scanFooterShape walks an encoded FileMetaData and counts what it
// declares. It checks the Thrift structure only as far as it reads it:
// arrow-go decodes the footer afterwards and reports what is corrupt.
func scanFooterShape(b []byte) (footerShape, error) {
	s := footerShape{bytes: int64(len(b))}
	r := thriftReader{b: b}
	var last int16
	for {
		id, typ, err := r.fieldHeader(&last)
		if err != nil {
			return s, err
		}
		switch {
		case typ == tcStop:
			return s, nil
		case id == fileMetaDataSchema && typ == tcList:
			start := r.pos
			err = r.schemaShape(&s)
			s.schema = [2]int{start, r.pos}
		case id == fileMetaDataKeyValues:
			start := r.pos
			err = r.skipField(typ, 1)
			s.keyValues = [2]int{start, r.pos}
		case id == fileMetaDataRowGroups && typ == tcList:
			err = r.rowGroupsShape(&s)
		default:
			err = r.skipField(typ, 1)
		}
		if err != nil {
			return s, err
		}
	}
}

// listHeader reads a list header and returns its element type and size,
// each element taking at least a byte.
func (r *thriftReader) listHeader() (elem byte, n int, err error) {
	c, err := r.readByte()
	if err != nil {
		return 0, 0, err
	}
	size := uint64(c >> 4)
	if size == 15 {
		if size, err = r.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	n, err = r.checkSize(size, 1)
	return c & 0x0f, n, err
}

// schemaShape counts the schema's elements and measures its depth: the
// elements are the tree in depth-first order, each group followed by its
// num_children children.
func (r *thriftReader) schemaShape(s *footerShape) error {
	elem, n, err := r.listHeader()
	if err != nil {
		return err
	}
	if elem != tcStruct {
		return corruptHeader("schema is a list of type %d, not of structs", elem)
	}
	s.elements = n
	if n > MaxSchemaElements {
		return nil // refused by check; no need to read on
	}
	// open holds, for each group on the path to the current element, how
	// many of its children are still to come.
	var open []int32
	for range n {
		children, err := r.schemaChildren()
		if err != nil {
			return err
		}
		if len(open) > 0 {
			open[len(open)-1]--
		}
		s.depth = max(s.depth, len(open)+1)
		if s.depth > MaxSchemaDepth {
			return nil // refused by check; no need to read on
		}
		if children > 0 {
			open = append(open, children)
		} else {
			s.leaves++
		}
		for len(open) > 0 && open[len(open)-1] <= 0 {
			open = open[:len(open)-1]
		}
	}
	return nil
}

// schemaChildren reads one SchemaElement and returns its num_children.
func (r *thriftReader) schemaChildren() (int32, error) {
	var children int32
	var last int16
	for {
		id, typ, err := r.fieldHeader(&last)
		if err != nil || typ == tcStop {
			return children, err
		}
		if id == schemaElementChildren && typ == tcI32 {
			if children, err = r.i32(); err != nil {
				return 0, err
			}
			continue
		}
		if err := r.skipField(typ, 2); err != nil {
			return 0, err
		}
	}
}

// rowGroupsShape counts the row groups and their column chunks.
func (r *thriftReader) rowGroupsShape(s *footerShape) error {
	elem, n, err := r.listHeader()
	if err != nil {
		return err
	}
	if elem != tcStruct {
		return corruptHeader("row_groups is a list of type %d, not of structs", elem)
	}
	s.rowGroups = n
	for range n {
		var last int16
		for {
			id, typ, err := r.fieldHeader(&last)
			if err != nil {
				return err
			}
			if typ == tcStop {
				break
			}
			if id != rowGroupColumns || typ != tcList {
				if err := r.skipField(typ, 2); err != nil {
					return err
				}
				continue
			}
			celem, cn, err := r.listHeader()
			if err != nil {
				return err
			}
			s.chunks += cn
			s.maxChunks = max(s.maxChunks, cn)
			for range cn {
				if err := r.skipValue(celem, 3); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// check refuses a footer past the schema limits.
func (s footerShape) check(name string) error {
	switch {
	case s.depth > MaxSchemaDepth:
		return fmt.Errorf("%s: the schema is nested more than %d levels deep (the limit, as in pyarrow): %w", name, MaxSchemaDepth, scanner.ErrUnsupported)
	case s.elements > MaxSchemaElements:
		return fmt.Errorf("%s: the schema has %d elements, over the limit of %d (pyarrow's): %w", name, s.elements, MaxSchemaElements, scanner.ErrUnsupported)
	case s.maxChunks > MaxSchemaElements:
		return fmt.Errorf("%s: a row group has %d column chunks, over the limit of %d (pyarrow's): %w", name, s.maxChunks, MaxSchemaElements, scanner.ErrUnsupported)
	}
	return nil
}

// Decoded footer memory, per what it declares (measured with arrow-go
// v18.8.0: a column of one row group holds about 1.3 KiB once decoded
// and projected, a further column chunk about 0.5 KiB, a row group 0.2
// KiB); the encoded bytes count twice over for what decoding them
// allocates on the way.
const (
	decodedBytesPerElement  = 1 << 10
	decodedBytesPerChunk    = 512
	decodedBytesPerRowGroup = 256
	decodedBytesPerByte     = 2
	decodedBytesBase        = 16 << 10
)

// decodedBytes estimates the memory of the footer decoded and projected.
func (s footerShape) decodedBytes() int64 {
	return decodedBytesBase + decodedBytesPerByte*s.bytes +
		decodedBytesPerElement*int64(s.elements) +
		decodedBytesPerChunk*int64(s.chunks) +
		decodedBytesPerRowGroup*int64(s.rowGroups)
}

// metadataShape reads the footer of the Parquet file in src, checks it
// against the schema limits, and returns it with an estimate of the
// memory its decoded metadata takes (Open's footer, Project's row group
// figures). A footer it cannot read or walk gets an estimate from its
// size alone, and no footer; Open reports what is wrong with it.
//
// key is the footer's shapeKey ("" when the footer was not read whole).
func metadataShape(name string, src io.ReaderAt, size int64) (footer []byte, decoded int64, key string, err error) {
	footer, err = readFooter(name, src, size)
	if err != nil {
		return nil, decodedBytesBase, "", nil
	}
	s, serr := scanFooterShape(footer)
	if err := s.check(name); err != nil {
		return nil, 0, "", err
	}
	if serr != nil {
		return nil, decodedBytesBase + 64*int64(len(footer)), "", nil
	}
	return footer, s.decodedBytes(), shapeKey(footer, s), nil
}

// shapeKey is what a file's Arrow schema and schema manifest derive from:
// the encoded schema elements and key-value metadata (the stored Arrow
// schema among them), byte for byte; "" without a schema. Files of one
// table written by one writer share it (shapes.go).
func shapeKey(footer []byte, s footerShape) string {
	if s.schema[1] <= s.schema[0] {
		return ""
	}
	sc, kv := footer[s.schema[0]:s.schema[1]], footer[s.keyValues[0]:s.keyValues[1]]
	b := make([]byte, 0, len(sc)+len(kv)+binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, uint64(len(sc)))
	return string(append(append(b, sc...), kv...))
}

// cachedBytes estimates what Open builds over a cached footer: the
// Arrow reader's schema manifest and Project's figures.
func cachedBytes(md *metadata.FileMetaData) int64 {
	return decodedBytesBase + decodedBytesPerElement/2*int64(md.Schema.NumColumns()) + decodedBytesPerRowGroup*int64(md.NumRowGroups())
}

// decodeFooter decodes a plaintext footer as arrow-go's reader does, so
// that the reader need not read it again; nil when arrow-go's own path
// must (an encryption algorithm, or a footer it fails or panics on: that
// path reports or patches it).
func decodeFooter(footer []byte, size int64) (md *metadata.FileMetaData) {
	if footer == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			md = nil
		}
	}()
	m, err := metadata.NewFileMetaData(footer, nil)
	if err != nil || m.IsSetEncryptionAlgorithm() {
		return nil
	}
	m.SetSourceFileSize(size)
	return m
}

// reserveMetadata reserves n from the context's metadata budget, if it
// carries one (scanner.WithMetadataBudget).
func reserveMetadata(ctx context.Context, name string, n int64) error {
	r := scanner.MetadataBudget(ctx)
	if r == nil {
		return nil
	}
	if err := r.Reserve(ctx, n); err != nil {
		return fmt.Errorf("%s: reading Parquet footer: %w", name, err)
	}
	return nil
}
