package parquet

import (
	"fmt"
	"math"

	"github.com/scand/scand/scanner"
)

// Page headers for the native reader.
//
// A PageHeader (parquet.thrift) is a Thrift compact-protocol struct in front
// of every page. arrow-go's generated decoder is internal to arrow-go, and it
// would allocate the header, its sub-headers and the statistics' min/max
// bytes for every page, none of which the native reader needs; so the few
// fields it does need are decoded here by hand. Every length read from the
// input is checked against the bytes that remain before it is used: a
// corrupt header is rejected after at most one pass over its bytes, and
// nothing is allocated in proportion to a length it claims.

// PageType values (parquet.thrift).
const (
	pageTypeDataPage       = 0
	pageTypeIndexPage      = 1
	pageTypeDictionaryPage = 2
	pageTypeDataPageV2     = 3
)

// pageHeader is the part of a Parquet PageHeader the native reader uses.
type pageHeader struct {
	typ              int32 // PageType: 0 DATA_PAGE, 1 INDEX_PAGE, 2 DICTIONARY_PAGE, 3 DATA_PAGE_V2
	uncompressedSize int32
	compressedSize   int32
	// data pages (v1 and v2); for a dictionary page, numValues and encoding
	// come from its dictionary_page_header.
	numValues int32
	encoding  int32 // Encoding of the values: 0 PLAIN, 2 PLAIN_DICTIONARY, 8 RLE_DICTIONARY, ...
	hasData   bool  // a data_page_header or data_page_header_v2 was present (the one typ calls for)
	// v1
	defEncoding, repEncoding int32
	// v2
	numNulls, numRows          int32
	defLevelsLen, repLevelsLen int32
	isCompressed               bool // defaults to true when absent, as the spec says
}

// maxThriftDepth bounds struct, list and map nesting, the PageHeader itself
// included. A PageHeader nests three deep (header, data page header,
// statistics); the slack is for fields added by later versions of the
// format, which are skipped.
const maxThriftDepth = 32

// Thrift compact-protocol type codes, as they appear in field headers and
// in list, set and map headers.
const (
	tcStop   = 0
	tcTrue   = 1 // a bool field whose value is true; in containers, any bool
	tcFalse  = 2
	tcByte   = 3
	tcI16    = 4
	tcI32    = 5
	tcI64    = 6
	tcDouble = 7
	tcBinary = 8
	tcList   = 9
	tcSet    = 10
	tcMap    = 11
	tcStruct = 12
	tcUUID   = 13
)

// parsePageHeader decodes the Thrift compact-protocol PageHeader at the start of b.
// It returns the header and its length in bytes.
//
// Only the sub-header that matches the page type is kept: a DATA_PAGE takes
// its fields from data_page_header, a DATA_PAGE_V2 from data_page_header_v2
// and a DICTIONARY_PAGE from dictionary_page_header, and that sub-header must
// be present. Other page types (INDEX_PAGE, values added by later versions)
// are returned with only the three size fields so the caller can skip them.
func parsePageHeader(b []byte) (pageHeader, int, error) {
	r := thriftReader{b: b}
	var h pageHeader
	// sub[t] holds the sub-header for page type t; which one is used is
	// decided at the end because fields may arrive in any order.
	var sub [4]pageHeader
	var have [4]bool
	seen, err := r.fields(1, func(id int16, typ byte) (known bool, err error) {
		switch {
		case id == 1 && typ == tcI32:
			h.typ, err = r.i32()
		case id == 2 && typ == tcI32:
			h.uncompressedSize, err = r.i32()
		case id == 3 && typ == tcI32:
			h.compressedSize, err = r.i32()
		case id == 5 && typ == tcStruct:
			sub[pageTypeDataPage], err = r.dataPageHeader()
			have[pageTypeDataPage] = true
		case id == 7 && typ == tcStruct:
			sub[pageTypeDictionaryPage], err = r.dictionaryPageHeader()
			have[pageTypeDictionaryPage] = true
		case id == 8 && typ == tcStruct:
			sub[pageTypeDataPageV2], err = r.dataPageHeaderV2()
			have[pageTypeDataPageV2] = true
		default:
			// Like generated Thrift code, a known id with an unexpected type
			// is skipped; the required-field check below then catches it.
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return pageHeader{}, 0, err
	}
	if seen&0b1110 != 0b1110 {
		return pageHeader{}, 0, corruptHeader("missing type or page sizes")
	}
	if h.uncompressedSize < 0 || h.compressedSize < 0 {
		return pageHeader{}, 0, corruptHeader("negative page size (%d uncompressed, %d compressed)", h.uncompressedSize, h.compressedSize)
	}
	switch h.typ {
	case pageTypeDataPage, pageTypeDictionaryPage, pageTypeDataPageV2:
		if !have[h.typ] {
			return pageHeader{}, 0, corruptHeader("page of type %d without its sub-header", h.typ)
		}
		s := sub[h.typ]
		s.typ, s.uncompressedSize, s.compressedSize = h.typ, h.uncompressedSize, h.compressedSize
		s.hasData = h.typ != pageTypeDictionaryPage
		h = s
	}
	if h.typ == pageTypeDataPageV2 {
		// The levels are stored uncompressed at the start of the page body,
		// so they count in both sizes.
		levels := int64(h.defLevelsLen) + int64(h.repLevelsLen)
		if levels > int64(h.compressedSize) || levels > int64(h.uncompressedSize) {
			return pageHeader{}, 0, corruptHeader("%d bytes of levels in a page of %d bytes (%d uncompressed)", levels, h.compressedSize, h.uncompressedSize)
		}
	}
	return h, r.pos, nil
}

// dataPageHeader decodes a DataPageHeader into the v1 fields of a pageHeader.
func (r *thriftReader) dataPageHeader() (pageHeader, error) {
	var h pageHeader
	seen, err := r.fields(2, func(id int16, typ byte) (known bool, err error) {
		switch {
		case id == 1 && typ == tcI32:
			h.numValues, err = r.i32()
		case id == 2 && typ == tcI32:
			h.encoding, err = r.i32()
		case id == 3 && typ == tcI32:
			h.defEncoding, err = r.i32()
		case id == 4 && typ == tcI32:
			h.repEncoding, err = r.i32()
		default: // statistics (5) and anything newer
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return h, err
	}
	if seen&0b11110 != 0b11110 {
		return h, corruptHeader("data_page_header without num_values, encoding or level encodings")
	}
	if h.numValues < 0 {
		return h, corruptHeader("negative num_values %d", h.numValues)
	}
	return h, nil
}

// dataPageHeaderV2 decodes a DataPageHeaderV2 into the v2 fields of a pageHeader.
func (r *thriftReader) dataPageHeaderV2() (pageHeader, error) {
	h := pageHeader{isCompressed: true}
	seen, err := r.fields(2, func(id int16, typ byte) (known bool, err error) {
		switch {
		case id == 1 && typ == tcI32:
			h.numValues, err = r.i32()
		case id == 2 && typ == tcI32:
			h.numNulls, err = r.i32()
		case id == 3 && typ == tcI32:
			h.numRows, err = r.i32()
		case id == 4 && typ == tcI32:
			h.encoding, err = r.i32()
		case id == 5 && typ == tcI32:
			h.defLevelsLen, err = r.i32()
		case id == 6 && typ == tcI32:
			h.repLevelsLen, err = r.i32()
		case id == 7 && (typ == tcTrue || typ == tcFalse):
			h.isCompressed = typ == tcTrue
		default: // statistics (8) and anything newer
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return h, err
	}
	if seen&0b1111110 != 0b1111110 {
		return h, corruptHeader("data_page_header_v2 without one of its required fields")
	}
	if h.numValues < 0 || h.numNulls < 0 || h.numRows < 0 || h.defLevelsLen < 0 || h.repLevelsLen < 0 {
		return h, corruptHeader("negative count in data_page_header_v2 (values %d, nulls %d, rows %d, level bytes %d and %d)",
			h.numValues, h.numNulls, h.numRows, h.defLevelsLen, h.repLevelsLen)
	}
	if h.numNulls > h.numValues {
		// num_values counts the nulls too.
		return h, corruptHeader("%d nulls in a page of %d values", h.numNulls, h.numValues)
	}
	return h, nil
}

// dictionaryPageHeader decodes a DictionaryPageHeader into the numValues and
// encoding of a pageHeader.
func (r *thriftReader) dictionaryPageHeader() (pageHeader, error) {
	var h pageHeader
	seen, err := r.fields(2, func(id int16, typ byte) (known bool, err error) {
		switch {
		case id == 1 && typ == tcI32:
			h.numValues, err = r.i32()
		case id == 2 && typ == tcI32:
			h.encoding, err = r.i32()
		default: // is_sorted (3) and anything newer
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return h, err
	}
	if seen&0b110 != 0b110 {
		return h, corruptHeader("dictionary_page_header without num_values or encoding")
	}
	if h.numValues < 0 {
		return h, corruptHeader("negative num_values %d", h.numValues)
	}
	return h, nil
}

// fields reads a struct's fields up to its stop byte. field reads the value
// of each field it knows and reports it known; the others are skipped (at
// nesting depth). fields returns the known ids as a bit set (bit i: field
// i), for the caller's required-field check.
func (r *thriftReader) fields(depth int, field func(id int16, typ byte) (known bool, err error)) (uint16, error) {
	var seen uint16
	var last int16
	for {
		id, typ, err := r.fieldHeader(&last)
		if err != nil {
			return seen, err
		}
		if typ == tcStop {
			return seen, nil
		}
		known, err := field(id, typ)
		if err != nil {
			return seen, err
		}
		if !known {
			if err := r.skipField(typ, depth); err != nil {
				return seen, err
			}
			continue
		}
		seen |= 1 << id
	}
}

// thriftReader reads Thrift compact protocol from a byte slice. pos is the
// number of bytes consumed.
type thriftReader struct {
	b   []byte
	pos int
}

func corruptHeader(format string, args ...any) error {
	return fmt.Errorf("parquet page header: "+format+": %w", append(args, scanner.ErrCorrupt)...)
}

func (r *thriftReader) truncated() error {
	return corruptHeader("truncated after %d bytes", r.pos)
}

func (r *thriftReader) readByte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.truncated()
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// uvarint reads a ULEB128 varint of at most 64 bits.
func (r *thriftReader) uvarint() (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c, err := r.readByte()
		if err != nil {
			return 0, err
		}
		if shift == 63 && c > 1 {
			break
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, corruptHeader("varint overflows 64 bits at byte %d", r.pos)
}

// i32 reads a zigzag varint that must fit 32 bits.
func (r *thriftReader) i32() (int32, error) {
	u, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if u > math.MaxUint32 {
		return 0, corruptHeader("i32 out of range at byte %d", r.pos)
	}
	return int32(uint32(u)>>1) ^ -int32(u&1), nil
}

// checkSize checks a container size read from the input: at least
// n*minBytes bytes must remain, so a hostile size cannot make a skip loop
// run longer than the input.
func (r *thriftReader) checkSize(n uint64, minBytes int) (int, error) {
	if n > math.MaxInt32 || n*uint64(minBytes) > uint64(len(r.b)-r.pos) {
		return 0, corruptHeader("container of %d elements at byte %d exceeds the input", n, r.pos)
	}
	return int(n), nil
}

func (r *thriftReader) skipBytes(n uint64) error {
	if n > uint64(len(r.b)-r.pos) {
		return corruptHeader("%d-byte value at byte %d exceeds the input", n, r.pos)
	}
	r.pos += int(n)
	return nil
}

// fieldHeader reads a field header and returns the field id and compact
// type; typ is tcStop at the end of a struct. last is the previous field id
// in the same struct, which short-form headers are relative to.
func (r *thriftReader) fieldHeader(last *int16) (id int16, typ byte, err error) {
	c, err := r.readByte()
	if err != nil {
		return 0, 0, err
	}
	typ = c & 0x0f
	if typ == tcStop {
		// As in Apache Thrift's own reader, only the type nibble marks a stop.
		return 0, tcStop, nil
	}
	if delta := int16(c >> 4); delta != 0 {
		id = *last + delta
	} else {
		// Long form: the id follows as a zigzag i16.
		u, err := r.uvarint()
		if err != nil {
			return 0, 0, err
		}
		if u > math.MaxUint16 {
			return 0, 0, corruptHeader("field id out of range at byte %d", r.pos)
		}
		id = int16(uint16(u)>>1) ^ -int16(u&1)
	}
	*last = id
	return id, typ, nil
}

// skipField skips the value of a field of compact type typ, found in a
// struct at nesting depth depth.
func (r *thriftReader) skipField(typ byte, depth int) error {
	if typ == tcTrue || typ == tcFalse {
		return nil // a bool field's value is its type
	}
	return r.skipValue(typ, depth)
}

// skipValue skips one value of compact type typ as it is written inside a
// container (where a bool takes a byte) or after a field header.
func (r *thriftReader) skipValue(typ byte, depth int) error {
	switch typ {
	case tcTrue, tcFalse, tcByte:
		return r.skipBytes(1)
	case tcI16, tcI32, tcI64:
		_, err := r.uvarint()
		return err
	case tcDouble:
		return r.skipBytes(8)
	case tcUUID:
		return r.skipBytes(16)
	case tcBinary:
		n, err := r.uvarint()
		if err != nil {
			return err
		}
		return r.skipBytes(n)
	}
	if depth >= maxThriftDepth {
		return corruptHeader("nested more than %d deep at byte %d", maxThriftDepth, r.pos)
	}
	switch typ {
	case tcList, tcSet:
		c, err := r.readByte()
		if err != nil {
			return err
		}
		// Up to 14 elements, the count shares the byte with the type.
		size := uint64(c >> 4)
		if size == 15 {
			if size, err = r.uvarint(); err != nil {
				return err
			}
		}
		// Every element takes at least one byte.
		n, err := r.checkSize(size, 1)
		if err != nil {
			return err
		}
		for range n {
			if err := r.skipValue(c&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tcMap:
		// Every entry takes at least two bytes, one for the key and one for the value.
		size, err := r.uvarint()
		if err != nil {
			return err
		}
		n, err := r.checkSize(size, 2)
		if err != nil || n == 0 {
			return err // an empty map has no key and value type byte
		}
		kv, err := r.readByte()
		if err != nil {
			return err
		}
		for range n {
			if err := r.skipValue(kv>>4, depth+1); err != nil {
				return err
			}
			if err := r.skipValue(kv&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tcStruct:
		var last int16
		for {
			_, ft, err := r.fieldHeader(&last)
			if err != nil || ft == tcStop {
				return err
			}
			if err := r.skipField(ft, depth+1); err != nil {
				return err
			}
		}
	}
	return corruptHeader("unknown compact type %d at byte %d", typ, r.pos)
}
