package orc

// Run-length decoders of the ORC v1 specification: byte RLE, boolean RLE
// (byte RLE of bit-packed bytes, most significant bit first), and integer
// RLE versions 1 and 2. Each reads from a stream and fills caller slices;
// none allocates in proportion to a length read from the file (run
// lengths are at most 512 values).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

var errVarint = errors.New("varint longer than 64 bits")

// byteRLE decodes byte run-length encoding.
type byteRLE struct {
	s       *stream
	run     int  // values left in the current run or literal group
	literal bool // current group is literal bytes
	val     byte // repeated value of a run
}

func newByteRLE(s *stream) *byteRLE { return &byteRLE{s: s} }

// next fills dst.
func (d *byteRLE) next(dst []byte) error {
	for len(dst) > 0 {
		if d.run == 0 {
			h, err := d.s.readByte()
			if err != nil {
				return err
			}
			if h < 0x80 {
				d.run = int(h) + 3
				d.literal = false
				if d.val, err = d.s.readByte(); err != nil {
					return err
				}
			} else {
				d.run = 0x100 - int(h)
				d.literal = true
			}
		}
		n := min(d.run, len(dst))
		if d.literal {
			if err := d.s.readFull(dst[:n]); err != nil {
				return err
			}
		} else {
			v := d.val
			for i := range dst[:n] {
				dst[i] = v
			}
		}
		d.run -= n
		dst = dst[n:]
	}
	return nil
}

// boolRLE decodes booleans: byte RLE of bytes holding 8 values each.
type boolRLE struct {
	bytes byteRLE
	cur   byte
	left  int // bits of cur not yet returned
	buf   [64]byte
}

func newBoolRLE(s *stream) *boolRLE { return &boolRLE{bytes: byteRLE{s: s}} }

// expandBits[b] holds the 8 booleans of byte b, most significant bit
// first, as the bytes of a little-endian uint64 (a Go bool is one byte, 0
// or 1).
var expandBits = func() (t [256]uint64) {
	for b := range t {
		for j := 0; j < 8; j++ {
			t[b] |= uint64(b>>(7-j)&1) << (8 * j)
		}
	}
	return t
}()

// boolBytes views a []bool as its bytes (0 or 1 each).
func boolBytes(b []bool) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// next fills dst with the next len(dst) booleans.
func (d *boolRLE) next(dst []bool) error {
	i := 0
	for i < len(dst) && d.left > 0 {
		d.left--
		dst[i] = d.cur>>uint(d.left)&1 == 1
		i++
	}
	out := boolBytes(dst)
	for len(dst)-i >= 8 {
		m := min((len(dst)-i)/8, len(d.buf))
		if err := d.bytes.next(d.buf[:m]); err != nil {
			return err
		}
		for _, b := range d.buf[:m] {
			binary.LittleEndian.PutUint64(out[i:], expandBits[b])
			i += 8
		}
	}
	if i < len(dst) {
		if err := d.bytes.next(d.buf[:1]); err != nil {
			return err
		}
		d.cur, d.left = d.buf[0], 8
		for ; i < len(dst); i++ {
			d.left--
			dst[i] = d.cur>>uint(d.left)&1 == 1
		}
	}
	return nil
}

// intDecoder decodes a stream of integers.
type intDecoder interface {
	next(dst []int64) error
}

func newIntDecoder(s *stream, v2, signed bool) intDecoder {
	if v2 {
		return &rleV2{s: s, signed: signed}
	}
	return &rleV1{s: s, signed: signed}
}

func readUvarint(s *stream) (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b, err := s.readByte()
		if err != nil {
			return 0, err
		}
		if shift == 63 && b > 1 {
			return 0, errVarint
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
}

func unzigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

func readVarint(s *stream, signed bool) (int64, error) {
	v, err := readUvarint(s)
	if err != nil {
		return 0, err
	}
	if signed {
		return unzigzag(v), nil
	}
	return int64(v), nil
}

// rleV1 decodes integer RLE version 1.
type rleV1 struct {
	s       *stream
	signed  bool
	run     int
	literal bool
	val     int64
	delta   int64
}

func (d *rleV1) next(dst []int64) error {
	for len(dst) > 0 {
		if d.run == 0 {
			h, err := d.s.readByte()
			if err != nil {
				return err
			}
			if h < 0x80 {
				d.run = int(h) + 3
				d.literal = false
				db, err := d.s.readByte()
				if err != nil {
					return err
				}
				d.delta = int64(int8(db))
				if d.val, err = readVarint(d.s, d.signed); err != nil {
					return err
				}
			} else {
				d.run = 0x100 - int(h)
				d.literal = true
			}
		}
		n := min(d.run, len(dst))
		if d.literal {
			for i := range dst[:n] {
				v, err := readVarint(d.s, d.signed)
				if err != nil {
					return err
				}
				dst[i] = v
			}
		} else {
			v, delta := d.val, d.delta
			for i := range dst[:n] {
				dst[i] = v
				v += delta
			}
			d.val = v
		}
		d.run -= n
		dst = dst[n:]
	}
	return nil
}

// rleV2 decodes integer RLE version 2: short repeat, direct, patched base
// and delta runs of at most 512 values.
type rleV2 struct {
	s      *stream
	signed bool
	lits   [512]int64
	n, i   int // decoded values in lits, and the next to return
	patch  []int64
	// scratch holds a bit-packed group that spans two chunks.
	scratch [512 * 8]byte
}

func (d *rleV2) next(dst []int64) error { return rleV2Next(d, dst) }

// next32 and next16 decode straight into narrower integers, each value
// truncated as a C cast does (narrowDecoder).
func (d *rleV2) next32(dst []int32) error { return rleV2Next(d, dst) }
func (d *rleV2) next16(dst []int16) error { return rleV2Next(d, dst) }

// rleInt are the integers RLE decodes into. Narrower ones wrap: every
// step of a run (adding deltas or a base, OR-ing patches) is exact modulo
// the type's width, so decoding into T gives what decoding into int64
// and truncating gives, without the int64 intermediate.
type rleInt interface{ ~int64 | ~int32 | ~int16 }

func rleV2Next[T rleInt](d *rleV2, dst []T) error {
	for len(dst) > 0 {
		if d.i == d.n {
			// A run holds at most 512 values: when dst has room for any
			// run, decode straight into it.
			if len(dst) >= len(d.lits) {
				n, err := rleV2Run(d, dst)
				if err != nil {
					return err
				}
				dst = dst[n:]
				continue
			}
			n, err := rleV2Run(d, d.lits[:])
			if err != nil {
				d.i, d.n = 0, 0
				return err
			}
			d.i, d.n = 0, n
		}
		lits := d.lits[d.i:d.n]
		c := min(len(dst), len(lits))
		for i, v := range lits[:c] {
			dst[i] = T(v)
		}
		d.i += c
		dst = dst[c:]
	}
	return nil
}

// widthTable maps the 5-bit encoded bit width of direct, patched base and
// delta runs to a width in bits.
var widthTable = [32]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 21, 22, 23, 24, 26, 28, 30, 32, 40, 48, 56, 64}

// closestFixedBits rounds a width up to one the bit packer uses.
func closestFixedBits(n int) int {
	switch {
	case n == 0:
		return 1
	case n <= 24:
		return n
	case n <= 26:
		return 26
	case n <= 28:
		return 28
	case n <= 30:
		return 30
	case n <= 32:
		return 32
	case n <= 40:
		return 40
	case n <= 48:
		return 48
	case n <= 56:
		return 56
	}
	return 64
}

// readBits unpacks len(dst) big-endian values of width bits each (zigzag
// decoded when zz is 1; zz is 0 or 1); the group ends on a byte boundary.
// A group that crosses into the next compression chunk is gathered into
// scratch first, so every group goes through unpackBits.
func readBits[T rleInt](d *rleV2, dst []T, width int, zz uint64) error {
	need := (len(dst)*width + 7) / 8
	if len(d.s.buf)-d.s.pos >= need {
		unpackBits(dst, width, d.s.buf[d.s.pos:d.s.pos+need], zz)
		d.s.pos += need
		return nil
	}
	// need <= 512 values of 64 bits.
	b := d.scratch[:need]
	if err := d.s.readFull(b); err != nil {
		return err
	}
	unpackBits(dst, width, b, zz)
	return nil
}

// rleV2Run decodes the next run into out, which has room for 512 values,
// and returns its length.
func rleV2Run[T rleInt](d *rleV2, out []T) (int, error) {
	h, err := d.s.readByte()
	if err != nil {
		return 0, err
	}
	switch h >> 6 {
	case 0: // short repeat
		width := int(h>>3&7) + 1
		count := int(h&7) + 3
		var v uint64
		for j := 0; j < width; j++ {
			b, err := d.s.readByte()
			if err != nil {
				return 0, err
			}
			v = v<<8 | uint64(b)
		}
		x := int64(v)
		if d.signed {
			x = unzigzag(v)
		}
		for j := range out[:count] {
			out[j] = T(x)
		}
		return count, nil
	case 1: // direct
		width := widthTable[h>>1&0x1f]
		b1, err := d.s.readByte()
		if err != nil {
			return 0, err
		}
		count := (int(h&1)<<8 | int(b1)) + 1
		var zz uint64
		if d.signed {
			zz = 1
		}
		if err := readBits(d, out[:count], width, zz); err != nil {
			return 0, err
		}
		return count, nil
	case 2:
		return rleV2PatchedBase(d, h, out)
	default:
		return rleV2Delta(d, h, out)
	}
}

func rleV2Delta[T rleInt](d *rleV2, h byte, out []T) (int, error) {
	code := int(h >> 1 & 0x1f)
	width := 0
	if code != 0 {
		width = widthTable[code]
	}
	b1, err := d.s.readByte()
	if err != nil {
		return 0, err
	}
	count := (int(h&1)<<8 | int(b1)) + 1
	first, err := readVarint(d.s, d.signed)
	if err != nil {
		return 0, err
	}
	deltaBase, err := readVarint(d.s, true)
	if err != nil {
		return 0, err
	}
	out[0] = T(first)
	if width == 0 {
		v, step := T(first), T(deltaBase)
		for j := range out[1:count] {
			v += step
			out[1+j] = v
		}
		return count, nil
	}
	if count < 2 {
		return 0, fmt.Errorf("RLEv2 delta run of %d values with packed deltas", count)
	}
	prev := T(first + deltaBase)
	out[1] = prev
	deltas := out[2:count]
	if err := readBits(d, deltas, width, 0); err != nil {
		return 0, err
	}
	if deltaBase < 0 {
		for j, x := range deltas {
			prev -= x
			deltas[j] = prev
		}
	} else {
		for j, x := range deltas {
			prev += x
			deltas[j] = prev
		}
	}
	return count, nil
}

func rleV2PatchedBase[T rleInt](d *rleV2, h byte, out []T) (int, error) {
	width := widthTable[h>>1&0x1f]
	var hdr [3]byte
	if err := d.s.readFull(hdr[:]); err != nil {
		return 0, err
	}
	count := (int(h&1)<<8 | int(hdr[0])) + 1
	baseBytes := int(hdr[1]>>5) + 1
	patchWidth := widthTable[hdr[1]&0x1f]
	gapWidth := int(hdr[2]>>5) + 1
	patchLen := int(hdr[2] & 0x1f)
	if patchWidth+gapWidth > 64 {
		return 0, fmt.Errorf("RLEv2 patched base: patch width %d plus gap width %d exceed 64 bits", patchWidth, gapWidth)
	}
	var ub uint64
	for j := 0; j < baseBytes; j++ {
		b, err := d.s.readByte()
		if err != nil {
			return 0, err
		}
		ub = ub<<8 | uint64(b)
	}
	signBit := uint64(1) << uint(baseBytes*8-1)
	base := int64(ub)
	if ub&signBit != 0 {
		base = -int64(ub &^ signBit)
	}
	if err := readBits(d, out[:count], width, 0); err != nil {
		return 0, err
	}
	if cap(d.patch) < patchLen {
		d.patch = make([]int64, 32)
	}
	patch := d.patch[:patchLen]
	if err := readBits(d, patch, closestFixedBits(patchWidth+gapWidth), 0); err != nil {
		return 0, err
	}
	mask := int64(1)<<uint(patchWidth) - 1
	if patchWidth == 64 {
		mask = -1
	}
	// Apply the patches: each entry holds the gap from the previous patched
	// position and the high bits to OR in. A gap of 255 with a zero patch
	// only advances the position.
	pos := 0
	for _, e := range patch {
		gap := int(uint64(e) >> uint(patchWidth))
		p := e & mask
		pos += gap
		if gap == 255 && p == 0 {
			continue
		}
		if pos >= count {
			return 0, fmt.Errorf("RLEv2 patched base: patch position %d past the run of %d", pos, count)
		}
		out[pos] |= T(p << uint(width))
	}
	b := T(base)
	for j := range out[:count] {
		out[j] += b
	}
	return count, nil
}

// unpackBits decodes len(dst) big-endian width-bit values from b, which
// holds exactly enough bytes, zigzag decoding them when zz is 1 (zz is 0
// or 1: (v>>zz) ^ -(v&zz) is v itself for 0), so a signed run is written
// once, and truncating them to T.
func unpackBits[T rleInt](dst []T, width int, b []byte, zz uint64) {
	switch width {
	case 8:
		b = b[:len(dst)]
		for i, x := range b {
			v := uint64(x)
			dst[i] = T(v>>zz ^ -(v & zz))
		}
		return
	case 16:
		b = b[:2*len(dst)]
		// Four values per 8-byte load.
		i := 0
		for ; i+4 <= len(dst); i += 4 {
			v := binary.BigEndian.Uint64(b[2*i:])
			a0, a1, a2, a3 := v>>48, v>>32&0xffff, v>>16&0xffff, v&0xffff
			q := dst[i : i+4 : i+4]
			q[0], q[1], q[2], q[3] = T(a0>>zz^-(a0&zz)), T(a1>>zz^-(a1&zz)), T(a2>>zz^-(a2&zz)), T(a3>>zz^-(a3&zz))
		}
		for ; i < len(dst); i++ {
			v := uint64(b[2*i])<<8 | uint64(b[2*i+1])
			dst[i] = T(v>>zz ^ -(v & zz))
		}
		return
	case 32:
		b = b[:4*len(dst)]
		for i := range dst {
			v := uint64(binary.BigEndian.Uint32(b[4*i:]))
			dst[i] = T(v>>zz ^ -(v & zz))
		}
		return
	case 64:
		b = b[:8*len(dst)]
		for i := range dst {
			v := binary.BigEndian.Uint64(b[8*i:])
			dst[i] = T(v>>zz ^ -(v & zz))
		}
		return
	}
	if width%8 == 0 {
		// 24, 40, 48 or 56 bits: one 8-byte load per value while 8 bytes
		// remain, then byte by byte.
		nb := width / 8
		shift := uint(64 - width)
		i, off := 0, 0
		for ; off+8 <= len(b) && i < len(dst); i, off = i+1, off+nb {
			v := binary.BigEndian.Uint64(b[off:]) >> shift
			dst[i] = T(v>>zz ^ -(v & zz))
		}
		for ; i < len(dst); i++ {
			var v uint64
			for _, x := range b[i*nb : i*nb+nb] {
				v = v<<8 | uint64(x)
			}
			dst[i] = T(v>>zz ^ -(v & zz))
		}
		return
	}
	// Other widths are at most 30 bits (the width tables hold no larger
	// non-byte widths): while 8 bytes remain from a value's first byte,
	// one big-endian load holds the value whatever its bit offset.
	mask := uint64(1)<<uint(width) - 1
	bit, i := 0, 0
	for ; i < len(dst); i++ {
		off := bit >> 3
		if off+8 > len(b) {
			break
		}
		v := binary.BigEndian.Uint64(b[off:]) >> uint(64-width-bit&7) & mask
		dst[i] = T(v>>zz ^ -(v & zz))
		bit += width
	}
	if i == len(dst) {
		return
	}
	// The last few values: an accumulator, byte by byte.
	bi := bit >> 3
	var acc uint64
	nbits := 0
	if r := bit & 7; r != 0 {
		acc, nbits = uint64(b[bi])&(1<<uint(8-r)-1), 8-r
		bi++
	}
	for ; i < len(dst); i++ {
		for nbits < width {
			acc = acc<<8 | uint64(b[bi])
			bi++
			nbits += 8
		}
		nbits -= width
		v := acc >> uint(nbits) & mask
		dst[i] = T(v>>zz ^ -(v & zz))
	}
}
