package parquet

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/scand/scand/scanner"
)

// Definition levels of flat nullable columns.
//
// A flat nullable column has max definition level 1, so its definition levels
// are its validity bitmap: level 1 is a value, level 0 a null. They are stored
// with the RLE/bit-packing hybrid at bit width 1 (Encodings.md):
//
//	run            := rle-run | bit-packed-run
//	rle-run        := varint(count << 1)      value (one byte at bit width 1)
//	bit-packed-run := varint(groups << 1 | 1) groups bytes, 8 values per byte
//
// Bit-packed values are packed LSB first, which is also Arrow's bitmap order,
// so a bit-packed run is copied into the bitmap rather than decoded value by
// value, and a repeated run sets or clears whole bytes.

// countNulls returns how many of the first n levels in b are 0 (null), without writing anything.
func countNulls(b []byte, n int) (int, error) {
	return walkLevels(b, n, nil, 0)
}

// decodeValidity writes the first n levels of b as validity bits (1 = level 1 = valid) into dst
// starting at bit offset dstOff (LSB-first, Arrow bitmap order), and returns the number of nulls.
// Bits of dst outside [dstOff, dstOff+n) are left unchanged; on error, the bits inside are unspecified.
func decodeValidity(b []byte, n int, dst []byte, dstOff int) (nulls int, err error) {
	if n < 0 || dstOff < 0 || int64(dstOff)+int64(n) > int64(len(dst))*8 {
		return 0, corruptLevels("%d levels at bit %d do not fit a bitmap of %d bytes", n, dstOff, len(dst))
	}
	return walkLevels(b, n, dst, dstOff)
}

// walkLevels decodes the first n levels of b, counting the nulls, and writes
// them to dst at bit dstOff unless dst is nil. Bytes of b after the n-th
// level are not read: a page's last run may be longer than the page.
func walkLevels(b []byte, n int, dst []byte, dstOff int) (nulls int, err error) {
	if n < 0 {
		return 0, corruptLevels("negative level count %d", n)
	}
	pos, done := 0, 0
	for done < n {
		h, err := levelRunHeader(b, &pos)
		if err != nil {
			return 0, err
		}
		if h>>1 == 0 {
			// It could not loop forever here, as the header took a byte,
			// but no writer emits one and arrow-go's decoder rejects it too.
			return 0, corruptLevels("empty run at byte %d", pos)
		}
		if h&1 == 0 {
			// Repeated run: count copies of one value, stored in one byte.
			if pos >= len(b) {
				return 0, corruptLevels("truncated at byte %d of %d", pos, len(b))
			}
			v := b[pos]
			pos++
			if v > 1 {
				return 0, corruptLevels("level %d above the maximum 1 at byte %d", v, pos-1)
			}
			k := int(min(uint64(h>>1), uint64(n-done)))
			if v == 0 {
				nulls += k
			}
			if dst != nil {
				bitutil.SetBitsTo(dst, int64(dstOff+done), int64(k), v == 1)
			}
			done += k
			continue
		}
		// Bit-packed run: groups bytes of 8 levels each; only the bytes that
		// hold one of the n levels need to be there.
		k := int(min(uint64(h>>1)*8, uint64(n-done)))
		nb := (k + 7) / 8
		if nb > len(b)-pos {
			return 0, corruptLevels("bit-packed run of %d bytes at byte %d runs past the %d bytes", nb, pos, len(b))
		}
		src := b[pos : pos+nb]
		pos += nb
		nulls += k - bitutil.CountSetBits(src, 0, k)
		if dst != nil {
			copyBits(dst, dstOff+done, src, k)
		}
		done += k
	}
	return nulls, nil
}

// levelRunHeader reads the ULEB128 varint run header at b[*pos]. The spec
// limits it to 32 bits.
func levelRunHeader(b []byte, pos *int) (uint32, error) {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		if *pos >= len(b) {
			return 0, corruptLevels("truncated at byte %d of %d", *pos, len(b))
		}
		c := b[*pos]
		*pos++
		if shift == 28 && c > 0x0f {
			break
		}
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, corruptLevels("run header overflows 32 bits at byte %d", *pos)
}

// copyBits copies the first k bits of src into dst starting at bit off,
// leaving the other bits of dst unchanged.
func copyBits(dst []byte, off int, src []byte, k int) {
	d, s := off/8, uint(off%8)
	full := k / 8
	if s == 0 {
		copy(dst[d:], src[:full])
	} else {
		// Each source byte straddles two destination bytes: its low 8-s
		// bits land in the high bits of dst[i], its high s bits in the low
		// bits of dst[i+1].
		keep := byte(1)<<s - 1
		for i, v := range src[:full] {
			dst[d+i] = dst[d+i]&keep | v<<s
			dst[d+i+1] = dst[d+i+1]&^keep | v>>(8-s)
		}
	}
	if tail := uint(k % 8); tail > 0 {
		// The same for the last tail bits, under a mask.
		m := byte(1)<<tail - 1
		v, i := src[full]&m, d+full
		dst[i] = dst[i]&^(m<<s) | v<<s
		if s+tail > 8 {
			dst[i+1] = dst[i+1]&^(m>>(8-s)) | v>>(8-s)
		}
	}
}

func corruptLevels(format string, args ...any) error {
	return fmt.Errorf("parquet definition levels: "+format+": %w", append(args, scanner.ErrCorrupt)...)
}

// Levels of nested columns.
//
// A leaf under structs (or lists) has a maximum level above 1, so its
// levels take bitWidth = bits.Len(max) bits each and are decoded value by
// value, into int16s: a repeated run stores its value in the
// ceil(bitWidth/8) bytes that follow the header, little-endian; a
// bit-packed run stores groups of 8 values in bitWidth bytes each, LSB
// first.

// decodeLevels writes the first len(dst) levels of b, of bit width
// bitWidth (1 to 16), into dst. A level above maxLevel is corrupt: it
// would index past the schema. Bytes of b after the last level are not
// read.
func decodeLevels(b []byte, bitWidth int, maxLevel int16, dst []int16) error {
	if bitWidth < 1 || bitWidth > 16 {
		return corruptLevels("bit width %d", bitWidth)
	}
	pos, done, n := 0, 0, len(dst)
	for done < n {
		h, err := levelRunHeader(b, &pos)
		if err != nil {
			return err
		}
		if h>>1 == 0 {
			return corruptLevels("empty run at byte %d", pos)
		}
		if h&1 == 0 {
			k := int(min(uint64(h>>1), uint64(n-done)))
			v, err := repeatedLevel(b, &pos, bitWidth)
			if err != nil {
				return err
			}
			if v > maxLevel {
				return corruptLevels("level %d above the maximum %d at byte %d", v, maxLevel, pos)
			}
			fill := dst[done : done+k]
			for i := range fill {
				fill[i] = v
			}
			done += k
			continue
		}
		k := int(min(uint64(h>>1)*8, uint64(n-done)))
		nb := (k*bitWidth + 7) / 8
		if nb > len(b)-pos {
			return corruptLevels("bit-packed run of %d bytes at byte %d runs past the %d bytes", nb, pos, len(b))
		}
		// The source runs to the end of b, not of the run, so that the
		// 8-byte loads of unpackLevels reach its last groups too (short
		// runs were otherwise unpacked a bit at a time); only the run's
		// own bits become levels.
		if err := unpackLevels(b[pos:], bitWidth, maxLevel, dst[done:done+k]); err != nil {
			return err
		}
		// The run's bytes are whole groups of 8 levels even when fewer
		// are used; later runs start after them.
		pos += int(min(uint64(h>>1)*uint64(bitWidth), uint64(len(b)-pos)))
		done += k
	}
	return nil
}

// repeatedLevel reads a repeated run's value: ceil(bitWidth/8) bytes,
// little-endian.
func repeatedLevel(b []byte, pos *int, bitWidth int) (int16, error) {
	nb := (bitWidth + 7) / 8
	if nb > len(b)-*pos {
		return 0, corruptLevels("truncated at byte %d of %d", *pos, len(b))
	}
	v := uint16(b[*pos])
	if nb == 2 {
		v |= uint16(b[*pos+1]) << 8
	}
	*pos += nb
	if v > math.MaxInt16 {
		return 0, corruptLevels("level %d", v)
	}
	return int16(v), nil
}

// levelBytes1 and levelBytes2 are the levels a byte of bit-packed 1- and
// 2-bit levels holds, LSB first.
var levelBytes1, levelBytes2 = func() (t1 [256][8]int16, t2 [256][4]int16) {
	for b := range 256 {
		for j := range 8 {
			t1[b][j] = int16(b >> j & 1)
		}
		for j := range 4 {
			t2[b][j] = int16(b >> (2 * j) & 3)
		}
	}
	return t1, t2
}()

// unpackLevels decodes len(dst) bit-packed levels of bitWidth bits from
// src, LSB first. A group of 8 levels of up to 8 bits lies in one 64-bit
// word, loaded at once; wider levels, and a last group short of bytes,
// are read bit by bit.
func unpackLevels(src []byte, bitWidth int, maxLevel int16, dst []int16) error {
	mask := uint64(1)<<bitWidth - 1
	over := false
	i := 0
	if uint64(maxLevel) >= mask {
		// No level of bitWidth bits is above the maximum: no check (the
		// usual case: a maximum of 1, 3, 7 fills its bits). Levels of 1
		// and 2 bits, a byte's worth at a time from a table.
		switch bitWidth {
		case 1:
			nb := min(len(dst)/8, len(src))
			for k, b := range src[:nb] {
				*(*[8]int16)(dst[8*k:]) = levelBytes1[b]
			}
			i = 8 * nb
		case 2:
			nb := min(len(dst)/4, len(src))
			for k, b := range src[:nb] {
				*(*[4]int16)(dst[4*k:]) = levelBytes2[b]
			}
			i = 4 * nb
		}
	}
	if bitWidth <= 8 && uint64(maxLevel) >= mask {
		for ; i+8 <= len(dst) && (i/8)*bitWidth+8 <= len(src); i += 8 {
			w := binary.LittleEndian.Uint64(src[(i/8)*bitWidth:])
			d := (*[8]int16)(dst[i:])
			for j := range 8 {
				d[j] = int16((w >> (j * bitWidth)) & mask)
			}
		}
	}
	if bitWidth <= 8 {
		for ; i+8 <= len(dst) && (i/8)*bitWidth+8 <= len(src); i += 8 {
			w := binary.LittleEndian.Uint64(src[(i/8)*bitWidth:])
			for j := range 8 {
				v := (w >> (j * bitWidth)) & mask
				over = over || v > uint64(maxLevel)
				dst[i+j] = int16(v)
			}
		}
	}
	for ; i < len(dst); i++ {
		bit := i * bitWidth
		byteAt, shift := bit/8, uint(bit%8)
		var w uint64
		for j := 0; j < 3 && byteAt+j < len(src); j++ {
			w |= uint64(src[byteAt+j]) << (8 * j)
		}
		v := (w >> shift) & mask
		over = over || v > uint64(maxLevel)
		dst[i] = int16(v)
	}
	if over {
		return corruptLevels("level above the maximum %d", maxLevel)
	}
	return nil
}
