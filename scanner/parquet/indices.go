package parquet

import "encoding/binary"

// indexDecoder decodes the dictionary indices of an RLE_DICTIONARY page
// (the RLE/bit-packed hybrid of Encodings.md, without the leading
// bit-width byte) a few at a time, checking each against the dictionary
// size. Decoding resumes where the last call stopped, so a page's indices
// are decoded one batch at a time: a page may encode 2^31 indices in a
// few bytes, and its memory is then a batch's, not the page's.
type indexDecoder struct {
	b        []byte
	pos      int // next run header
	bitWidth int
	dictLen  int
	// The current run: left values remain; an RLE run repeats value, a
	// bit-packed run's next value starts at bit packedBit of b.
	left      int
	rle       bool
	value     int32
	packedBit int
}

func newIndexDecoder(b []byte, bitWidth, dictLen int) (*indexDecoder, error) {
	if bitWidth < 0 || bitWidth > 32 || dictLen < 0 {
		return nil, corrupt("dictionary indices of %d bits into a dictionary of %d", bitWidth, dictLen)
	}
	return &indexDecoder{b: b, bitWidth: bitWidth, dictLen: dictLen}, nil
}

// next decodes len(dst) indices into dst.
func (d *indexDecoder) next(dst []int32) error {
	for out := 0; out < len(dst); {
		if d.left == 0 {
			if err := d.nextRun(); err != nil {
				return err
			}
		}
		k := min(d.left, len(dst)-out)
		if d.rle {
			for i := range k {
				dst[out+i] = d.value
			}
		} else {
			// Only the bytes that hold the k values need to be there: the
			// last run's padding may be cut.
			end := (d.packedBit + k*d.bitWidth + 7) / 8
			if end > len(d.b) {
				return corrupt("bit-packed run of %d indices needs %d bytes, %d left", k, end-d.packedBit/8, len(d.b)-d.packedBit/8)
			}
			if err := unpack(d.b, d.packedBit, d.bitWidth, dst[out:out+k], d.dictLen); err != nil {
				return err
			}
			d.packedBit += k * d.bitWidth
		}
		d.left -= k
		out += k
	}
	return nil
}

// nextRun reads the next run header (and an RLE run's value).
func (d *indexDecoder) nextRun() error {
	header, err := levelRunHeader(d.b, &d.pos)
	if err != nil {
		return err
	}
	if header&1 == 0 { // RLE run: count copies of one value
		count := int(header >> 1)
		valueBytes := (d.bitWidth + 7) / 8
		if count == 0 || len(d.b)-d.pos < valueBytes {
			return corrupt("dictionary index run of %d values, %d bytes left", count, len(d.b)-d.pos)
		}
		var buf [4]byte
		copy(buf[:], d.b[d.pos:d.pos+valueBytes])
		d.pos += valueBytes
		v := binary.LittleEndian.Uint32(buf[:])
		if int64(v) >= int64(d.dictLen) {
			return corrupt("dictionary index %d of a dictionary of %d", v, d.dictLen)
		}
		d.left, d.rle, d.value = count, true, int32(v)
		return nil
	}
	// Bit-packed run: groups of 8 values, bitWidth bytes per group. The
	// run occupies all of its groups, even those past the page's values.
	groups := int(header >> 1)
	if groups == 0 {
		return corrupt("empty bit-packed run of dictionary indices")
	}
	d.left, d.rle, d.packedBit = groups*8, false, d.pos*8
	d.pos += min(groups*d.bitWidth, len(d.b)-d.pos)
	return nil
}

// decodeIndices decodes n dictionary indices of bitWidth bits (0 to 32)
// from b into dst at once. The last bit-packed run may hold more values
// than n; the excess is ignored, as the format allows.
func decodeIndices(b []byte, n, bitWidth, dictLen int, dst []int32) error {
	if len(dst) < n {
		return corrupt("no room for %d dictionary indices", n)
	}
	d, err := newIndexDecoder(b, bitWidth, dictLen)
	if err != nil {
		return err
	}
	return d.next(dst[:n])
}

// unpack reads len(dst) values of bitWidth bits, LSB first, from b
// starting at bit off.
//
// Each value is read with one 8-byte load at its first byte, shifted and
// masked (a value of up to 32 bits starting anywhere in a byte lies in
// its 8 bytes), while 8 bytes remain; the values of the last few bytes are
// gathered a byte at a time. The indices are checked against the
// dictionary once per call, by their maximum, instead of once each.
func unpack(b []byte, off, bitWidth int, dst []int32, dictLen int) error {
	if bitWidth == 0 {
		if dictLen == 0 && len(dst) > 0 {
			return corrupt("dictionary index 0 of an empty dictionary")
		}
		clear(dst)
		return nil
	}
	mask := uint64(1)<<bitWidth - 1
	i := 0
	var hi uint64
	// Values whose 8 bytes from their first lie in b.
	if fast := (len(b)-8)*8 - off; fast >= 0 {
		n := min(len(dst), fast/bitWidth+1)
		bit := off
		for ; i < n; i++ {
			v := binary.LittleEndian.Uint64(b[bit>>3:]) >> (bit & 7) & mask
			hi = max(hi, v)
			dst[i] = int32(v)
			bit += bitWidth
		}
		off = bit
	}
	if i < len(dst) {
		pos := off / 8
		acc := uint64(0)
		bits := 0
		if s := off % 8; s > 0 {
			acc = uint64(b[pos]) >> s
			bits = 8 - s
			pos++
		}
		for ; i < len(dst); i++ {
			for bits < bitWidth {
				acc |= uint64(b[pos]) << bits
				pos++
				bits += 8
			}
			v := acc & mask
			acc >>= bitWidth
			bits -= bitWidth
			hi = max(hi, v)
			dst[i] = int32(v)
		}
	}
	if hi >= uint64(dictLen) {
		return corrupt("dictionary index %d of a dictionary of %d", hi, dictLen)
	}
	return nil
}
