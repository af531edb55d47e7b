package parquet

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
)

// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY pages
// (Encodings.md), decoded into the PLAIN layout the rest of the native
// reader reads: a page is decoded once, when it is loaded, into a buffer
// charged to the read's budget and sized by the value count readHeaders
// has already bounded (maxExpandedPage) or, for byte arrays, by their
// decoded lengths.
//
//	delta-binary-packed := header block*
//	header := uleb(block size) uleb(miniblocks per block) uleb(total values) zigzag(first value)
//	block  := zigzag(min delta) byte(bit width)[miniblocks] miniblock*
//
// Every miniblock holds block size / miniblocks values (a multiple of 32);
// the last miniblock that holds values is padded to its full length, and
// the ones after it take no bytes whatever their bit width says.

// deltaBlockLimit bounds a block's declared size: writers use 128 (Arrow,
// parquet-mr) or 256 values; a bigger block only makes a header claim
// more than it holds.
const deltaBlockLimit = 1 << 16

// deltaReader decodes one DELTA_BINARY_PACKED stream of 32- or 64-bit
// integers. Arithmetic wraps at the width, as the format says it does.
type deltaReader struct {
	b         []byte
	pos       int
	width     int // 32 or 64
	blockSize int
	miniPer   int // values per miniblock
	minis     int
	total     int
	prev      uint64
}

func newDeltaReader(b []byte, width int) (*deltaReader, error) {
	d := &deltaReader{b: b, width: width}
	block, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	minis, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	total, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	first, err := d.zigzag()
	if err != nil {
		return nil, err
	}
	if block == 0 || block > deltaBlockLimit || block%128 != 0 || minis == 0 || block%minis != 0 || (block/minis)%32 != 0 {
		return nil, corrupt("delta-encoded page with blocks of %d values in %d miniblocks", block, minis)
	}
	if total > 1<<31 {
		return nil, corrupt("delta-encoded page of %d values", total)
	}
	d.blockSize, d.minis, d.miniPer = int(block), int(minis), int(block/minis)
	d.total, d.prev = int(total), first
	return d, nil
}

func (d *deltaReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		return 0, corrupt("delta-encoded page: bad varint at byte %d", d.pos)
	}
	d.pos += n
	return v, nil
}

func (d *deltaReader) zigzag() (uint64, error) {
	u, err := d.uvarint()
	return uint64(int64(u>>1) ^ -int64(u&1)), err
}

// decode writes the stream's values into dst, which holds exactly total
// of them, and returns the position just past the stream. Blocks are
// decoded one at a time into a scratch of one block (at most
// deltaBlockLimit values), whatever the stream's length.
func decodeDelta[T uint32 | uint64](d *deltaReader, dst []T) (int, error) {
	if len(dst) != d.total {
		return 0, corrupt("delta-encoded stream holds %d values, its page %d", d.total, len(dst))
	}
	if d.total == 0 {
		return d.pos, nil
	}
	dst[0] = T(d.truncate(d.prev))
	scratch := make([]uint64, min(d.blockSize, len(dst)-1))
	for out := 1; out < len(dst); {
		want := min(d.blockSize, len(dst)-out)
		if err := d.block(scratch[:want]); err != nil {
			return 0, err
		}
		for i, v := range scratch[:want] {
			dst[out+i] = T(v)
		}
		out += want
	}
	return d.pos, nil
}

// block decodes the next block's first len(dst) values (all of them but
// in the last block) into dst.
func (d *deltaReader) block(dst []uint64) error {
	minDelta, err := d.zigzag()
	if err != nil {
		return err
	}
	if len(d.b)-d.pos < d.minis {
		return corrupt("delta-encoded block truncated at byte %d", d.pos)
	}
	widths := d.b[d.pos : d.pos+d.minis]
	d.pos += d.minis
	out := 0
	for _, w := range widths {
		if out == len(dst) {
			break // the rest take no bytes
		}
		if int(w) > d.width {
			return corrupt("delta-encoded miniblock of %d bits in a %d-bit column", w, d.width)
		}
		size := d.miniPer * int(w) / 8
		if len(d.b)-d.pos < size {
			return corrupt("delta-encoded miniblock of %d bytes, %d left", size, len(d.b)-d.pos)
		}
		k := min(d.miniPer, len(dst)-out)
		unpack64(d.b[d.pos:d.pos+size], int(w), dst[out:out+k])
		for i := range k {
			d.prev = d.prev + minDelta + dst[out+i]
			dst[out+i] = d.truncate(d.prev)
		}
		d.pos += size
		out += k
	}
	return nil
}

// truncate keeps a 32-bit stream's values in 32 bits, sign-extended, so
// that wrapping works as it does in int32 arithmetic.
func (d *deltaReader) truncate(v uint64) uint64 {
	if d.width == 32 {
		return uint64(int64(int32(uint32(v))))
	}
	return v
}

// unpack64 reads len(dst) values of w bits (0 to 64), LSB first, from b,
// which holds at least len(dst)*w bits.
func unpack64(b []byte, w int, dst []uint64) {
	if w == 0 {
		clear(dst)
		return
	}
	bit := 0
	for i := range dst {
		pos, s := bit/8, uint(bit%8)
		// Gather the bytes the value spans (at most 9) into lo|hi.
		var lo uint64
		var buf [8]byte
		copy(buf[:], b[pos:])
		lo = binary.LittleEndian.Uint64(buf[:]) >> s
		if need := int(s) + w; need > 64 {
			lo |= uint64(b[pos+8]) << (64 - s)
		}
		if w < 64 {
			lo &= 1<<uint(w) - 1
		}
		dst[i] = lo
		bit += w
	}
}

// decodeDeltaInts decodes a DELTA_BINARY_PACKED page of n values of width
// bytes (4 or 8) into PLAIN layout in out, which holds n*width bytes.
func decodeDeltaInts(body []byte, n, width int, out []byte) error {
	d, err := newDeltaReader(body, 8*width)
	if err != nil {
		return err
	}
	// out is the page's own 64-byte aligned buffer: its values are
	// written in place, as the machine's (little-endian) integers.
	if width == 4 {
		_, err = decodeDelta(d, arrow.Uint32Traits.CastFromBytes(out[:4*n]))
	} else {
		_, err = decodeDelta(d, arrow.Uint64Traits.CastFromBytes(out[:8*n]))
	}
	return err
}

// allocFunc returns a buffer of n bytes for a decoded page, charged to the
// read's budget, or the budget's error.
type allocFunc func(n int64) ([]byte, error)

// deltaLengths decodes a stream of n byte-array lengths into lens (which
// holds n), each checked to be non-negative, and returns the position
// after the stream.
func deltaLengths(b []byte, lens []uint32) (int, error) {
	d, err := newDeltaReader(b, 32)
	if err != nil {
		return 0, err
	}
	end, err := decodeDelta(d, lens)
	if err != nil {
		return 0, err
	}
	for _, l := range lens {
		if int32(l) < 0 {
			return 0, corrupt("byte array of negative length %d", int32(l))
		}
	}
	return end, nil
}

// decodeDeltaLength decodes a DELTA_LENGTH_BYTE_ARRAY page of n values
// (their lengths, DELTA_BINARY_PACKED, then their bytes) into PLAIN
// layout, a 4-byte length before each value. lens is scratch for n
// lengths. The lengths must account for the page's bytes after them, so
// the result is at most 4n bytes larger than the page.
func decodeDeltaLength(body []byte, lens []uint32, alloc allocFunc) ([]byte, error) {
	pos, err := deltaLengths(body, lens)
	if err != nil {
		return nil, err
	}
	total := int64(0)
	for _, l := range lens {
		total += int64(l)
	}
	if total > int64(len(body)-pos) {
		return nil, corrupt("byte arrays of %d bytes in a page of %d", total, len(body)-pos)
	}
	out, err := alloc(4*int64(len(lens)) + total)
	if err != nil {
		return nil, err
	}
	at := 0
	for _, l := range lens {
		binary.LittleEndian.PutUint32(out[at:], l)
		at += 4 + copy(out[at+4:], body[pos:pos+int(l)])
		pos += int(l)
	}
	return out, nil
}

// decodeDeltaByteArray decodes a DELTA_BYTE_ARRAY page of n values
// (prefix lengths, then the suffixes as DELTA_LENGTH_BYTE_ARRAY: each
// value is its predecessor's first prefix bytes and its suffix) into
// PLAIN layout. With fixed > 0 (FIXED_LEN_BYTE_ARRAY) every value must be
// fixed bytes long and PLAIN stores no lengths. prefixes and suffixes are
// scratch for n lengths each. The result can exceed the page by far (long
// shared prefixes): it is sized, and bounded by maxExpandedPage, before
// it is allocated.
func decodeDeltaByteArray(body []byte, fixed int, prefixes, suffixes []uint32, alloc allocFunc) ([]byte, error) {
	end, err := deltaLengths(body, prefixes)
	if err != nil {
		return nil, err
	}
	send, err := deltaLengths(body[end:], suffixes)
	if err != nil {
		return nil, err
	}
	data := body[end+send:]
	head := int64(4)
	if fixed > 0 {
		head = 0
	}
	total, prev, suffixBytes := int64(0), int64(0), int64(0)
	for i := range prefixes {
		p, s := int64(prefixes[i]), int64(suffixes[i])
		if p > prev {
			return nil, corrupt("byte array %d takes a prefix of %d bytes from one of %d", i, p, prev)
		}
		if suffixBytes += s; suffixBytes > int64(len(data)) {
			return nil, corrupt("byte array suffixes of %d bytes in a page of %d", suffixBytes, len(data))
		}
		if prev = p + s; fixed > 0 && prev != int64(fixed) {
			return nil, corrupt("value of %d bytes in a column of %d", prev, fixed)
		}
		if total += head + prev; total > maxExpandedPage {
			return nil, corrupt("page expands to more than %d bytes", int64(maxExpandedPage))
		}
	}
	out, err := alloc(total)
	if err != nil {
		return nil, err
	}
	at, prevAt := 0, 0
	for i := range prefixes {
		p, s := int(prefixes[i]), int(suffixes[i])
		if fixed == 0 {
			binary.LittleEndian.PutUint32(out[at:], uint32(p+s))
		}
		v := at + int(head)
		copy(out[v:v+p], out[prevAt:prevAt+p]) // the prefix, earlier in out
		copy(out[v+p:], data[:s])
		data = data[s:]
		prevAt, at = v, v+p+s
	}
	return out, nil
}
