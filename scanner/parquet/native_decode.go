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
		// The values' size is known once their lengths are decoded
		// (deltaByteArraySize bounds it then).
		return phys == parquet.Types.ByteArray || phys == parquet.Types.FixedLenByteArray
	case parquet.Encodings.RLE:
		return phys == parquet.Types.Boolean && n/8 <= maxExpandedPage
	}
	return false
}

// decodeValues decodes body, the vals non-null values of page p, into
// PLAIN layout, and makes the page own the result (its decompressed body,
// if any, is no longer needed).
func (c *columnCursor) decodeValues(p *nativePage, body []byte, vals int) ([]byte, *chunkRef, error) {
	enc := parquet.Encoding(p.hdr.encoding)
	size, err := c.decodedSize(enc, body, vals)
	if err != nil {
		return nil, nil, err
	}
	if err := c.acct.reserve(size, "decoded page of "+c.name); err != nil {
		return nil, nil, err
	}
	buf := pageBuffers.Allocate(int(size))
	acct := c.acct
	own := newChunkRef(func() {
		pageBuffers.Free(buf)
		acct.release(size)
	})
	if err := c.decodeInto(enc, body, vals, buf); err != nil {
		own.drop()
		return nil, nil, err
	}
	if p.own != nil {
		p.own.drop()
	}
	p.own = own
	return buf, own, nil
}

// decodedSize is the PLAIN size of vals values of encoding enc in body.
func (c *columnCursor) decodedSize(enc parquet.Encoding, body []byte, vals int) (int64, error) {
	switch enc {
	case parquet.Encodings.RLE:
		return bitutil.BytesForBits(int64(vals)), nil
	case parquet.Encodings.DeltaLengthByteArray:
		n, err := deltaLengthSize(body, vals)
		return int64(n), err
	case parquet.Encodings.DeltaByteArray:
		return deltaByteArraySize(body, vals, c.col.stored)
	}
	return int64(vals) * int64(c.col.stored), nil
}

func (c *columnCursor) decodeInto(enc parquet.Encoding, body []byte, vals int, out []byte) error {
	switch enc {
	case parquet.Encodings.DeltaBinaryPacked:
		return decodeDeltaInts(body, vals, c.col.stored, out)
	case parquet.Encodings.ByteStreamSplit:
		return decodeByteStreamSplit(body, vals, c.col.stored, out)
	case parquet.Encodings.DeltaLengthByteArray:
		return decodeDeltaLength(body, vals, out)
	case parquet.Encodings.DeltaByteArray:
		return decodeDeltaByteArray(body, vals, c.col.stored, out)
	case parquet.Encodings.RLE:
		return decodeRLEBools(body, vals, out)
	}
	return corrupt("page in encoding %s", enc)
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
