package parquet

import "encoding/binary"

// decodeIndices decodes n dictionary indices of bitWidth bits (0 to 32),
// RLE/bit-packed hybrid encoded as in Parquet's RLE_DICTIONARY pages
// (without the leading bit-width byte), into dst, and checks each against
// the dictionary size. The last bit-packed run may hold more values than
// n; the excess is ignored, as the format allows.
func decodeIndices(b []byte, n, bitWidth, dictLen int, dst []int32) error {
	if bitWidth < 0 || bitWidth > 32 || dictLen < 0 {
		return corrupt("dictionary indices of %d bits into a dictionary of %d", bitWidth, dictLen)
	}
	if len(dst) < n {
		return corrupt("no room for %d dictionary indices", n)
	}
	valueBytes := (bitWidth + 7) / 8
	pos, out := 0, 0
	for out < n {
		header, err := levelRunHeader(b, &pos)
		if err != nil {
			return err
		}
		if header&1 == 0 { // RLE run: count copies of one value
			count := int(header >> 1)
			if count == 0 || len(b)-pos < valueBytes {
				return corrupt("dictionary index run of %d values, %d bytes left", count, len(b)-pos)
			}
			var buf [4]byte
			copy(buf[:], b[pos:pos+valueBytes])
			pos += valueBytes
			v := binary.LittleEndian.Uint32(buf[:])
			if int64(v) >= int64(dictLen) {
				return corrupt("dictionary index %d of a dictionary of %d", v, dictLen)
			}
			k := min(count, n-out)
			for i := range k {
				dst[out+i] = int32(v)
			}
			out += k
			continue
		}
		// Bit-packed run: groups of 8 values, bitWidth bytes per group.
		groups := int(header >> 1)
		if groups == 0 {
			return corrupt("empty bit-packed run of dictionary indices")
		}
		k := min(groups*8, n-out)
		need := (k*bitWidth + 7) / 8
		if len(b)-pos < need {
			return corrupt("bit-packed run of %d indices needs %d bytes, %d left", k, need, len(b)-pos)
		}
		if err := unpack(b[pos:pos+need], bitWidth, dst[out:out+k], dictLen); err != nil {
			return err
		}
		// The run occupies all of its groups, even those past n.
		pos += min(groups*bitWidth, len(b)-pos)
		out += k
	}
	return nil
}

// unpack reads len(dst) values of bitWidth bits, LSB first, from b.
func unpack(b []byte, bitWidth int, dst []int32, dictLen int) error {
	if bitWidth == 0 {
		if dictLen == 0 && len(dst) > 0 {
			return corrupt("dictionary index 0 of an empty dictionary")
		}
		clear(dst)
		return nil
	}
	mask := uint64(1)<<bitWidth - 1
	var acc uint64
	bits, pos := 0, 0
	for i := range dst {
		for bits < bitWidth {
			acc |= uint64(b[pos]) << bits
			pos++
			bits += 8
		}
		v := acc & mask
		acc >>= bitWidth
		bits -= bitWidth
		if v >= uint64(dictLen) {
			return corrupt("dictionary index %d of a dictionary of %d", v, dictLen)
		}
		dst[i] = int32(v)
	}
	return nil
}
