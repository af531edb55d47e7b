package parquet

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/parquet"
)

// Data pages in encodings other than PLAIN and dictionary: each is decoded
// once, when loaded, into a pooled buffer in PLAIN layout, and from there
// read like a PLAIN page (native.go). The buffer is charged to the read's
// budget before it is allocated, and given back with the page.

// maxExpandedPage bounds what one page may decode to. The encodings that
// can expand (DELTA_*, RLE booleans: a few bytes may claim 2^31 equal
// values) are checked against it from the header's value count before the
// row group is read natively; a bigger page goes to pqarrow.
const maxExpandedPage = 64 << 20 // bytes

// decodable reports whether the native reader decodes data page h of this
// column, which is neither PLAIN nor dictionary encoded, within
// maxExpandedPage.
func (c *columnCursor) decodable(h *pageHeader) bool {
	n := int64(h.numValues)
	phys := c.col.phys
	switch parquet.Encoding(h.encoding) {
	case parquet.Encodings.DeltaBinaryPacked:
		return (phys == parquet.Types.Int32 || phys == parquet.Types.Int64) && n*int64(c.col.stored) <= maxExpandedPage
	case parquet.Encodings.ByteStreamSplit:
		// Never larger than the page.
		switch phys {
		case parquet.Types.Float, parquet.Types.Double, parquet.Types.Int32, parquet.Types.Int64, parquet.Types.FixedLenByteArray:
			return true
		}
	case parquet.Encodings.DeltaLengthByteArray:
		return phys == parquet.Types.ByteArray && 4*n <= maxExpandedPage
	case parquet.Encodings.DeltaByteArray:
		// A value takes at least 4 bytes in PLAIN (its length) or its
		// fixed width; the values' size is known, and bounded, once their
		// lengths are decoded (decodeDeltaByteArray).
		return (phys == parquet.Types.ByteArray || phys == parquet.Types.FixedLenByteArray) && 4*n <= maxExpandedPage
	case parquet.Encodings.RLE:
		return phys == parquet.Types.Boolean && n/8 <= maxExpandedPage
	}
	return false
}

// decodeValues decodes body, the vals non-null values of page p, into
// PLAIN layout, and makes the page own the result (its decompressed body,
// if any, is no longer needed).
func (c *columnCursor) decodeValues(p *nativePage, body []byte, vals int) ([]byte, *chunkRef, error) {
	var own *chunkRef
	alloc := func(size int64) ([]byte, error) {
		if err := c.acct.reserve(size, "decoded page of "+c.name); err != nil {
			return nil, err
		}
		buf := pageBuffers.Allocate(int(size))
		acct := c.acct
		own = newChunkRef(func() {
			pageBuffers.Free(buf)
			acct.release(size)
		})
		return buf, nil
	}
	out, err := c.decodeWith(parquet.Encoding(p.hdr.encoding), body, vals, alloc)
	if err != nil {
		if own != nil {
			own.drop()
		}
		return nil, nil, err
	}
	if p.own != nil {
		p.own.drop()
	}
	p.own = own
	return out, own, nil
}

// decodeWith decodes vals values of encoding enc from body into a buffer
// from alloc.
func (c *columnCursor) decodeWith(enc parquet.Encoding, body []byte, vals int, alloc allocFunc) ([]byte, error) {
	switch enc {
	case parquet.Encodings.DeltaLengthByteArray, parquet.Encodings.DeltaByteArray:
		return c.decodeByteArrays(enc, body, vals, alloc)
	case parquet.Encodings.RLE:
		out, err := alloc(bitutil.BytesForBits(int64(vals)))
		if err != nil {
			return nil, err
		}
		return out, decodeRLEBools(body, vals, out)
	}
	out, err := alloc(int64(vals) * int64(c.col.stored))
	if err != nil {
		return nil, err
	}
	switch enc {
	case parquet.Encodings.DeltaBinaryPacked:
		return out, decodeDeltaInts(body, vals, c.col.stored, out)
	case parquet.Encodings.ByteStreamSplit:
		return out, decodeByteStreamSplit(body, vals, c.col.stored, out)
	}
	return nil, corrupt("page in encoding %s", enc)
}

// decodeByteArrays decodes a DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY
// page, with scratch for the values' lengths charged while it runs.
func (c *columnCursor) decodeByteArrays(enc parquet.Encoding, body []byte, vals int, alloc allocFunc) ([]byte, error) {
	k := 1
	if enc == parquet.Encodings.DeltaByteArray {
		k = 2 // prefixes and suffixes
	}
	scratch := 4 * int64(k) * int64(vals)
	if err := c.acct.reserve(scratch, "byte array lengths of "+c.name); err != nil {
		return nil, err
	}
	defer c.acct.release(scratch)
	lens := make([]uint32, k*vals)
	if k == 1 {
		return decodeDeltaLength(body, lens, alloc)
	}
	return decodeDeltaByteArray(body, c.col.stored, lens[:vals], lens[vals:], alloc)
}

// decodeRLEBools decodes an RLE-encoded BOOLEAN page (a 4-byte length,
// then the RLE/bit-packed hybrid at bit width 1, as flat definition
// levels are) into a bitmap.
func decodeRLEBools(body []byte, n int, out []byte) error {
	if len(body) < 4 {
		return corrupt("RLE boolean page of %d bytes", len(body))
	}
	ln := binary.LittleEndian.Uint32(body)
	if uint64(ln) > uint64(len(body)-4) {
		return corrupt("RLE booleans of %d bytes in a page of %d", ln, len(body))
	}
	_, err := decodeValidity(body[4:4+ln], n, out, 0)
	return err
}
