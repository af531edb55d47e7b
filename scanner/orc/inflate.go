package orc

// A raw DEFLATE (RFC 1951) decoder for ORC's ZLIB chunks. An ORC chunk is
// a complete deflate stream whose output is at most the compression block
// size, and both the compressed chunk and its destination are in memory.
// That lets this decoder do what a streaming io.Reader (compress/flate,
// klauspost/compress/flate) cannot: write literals and matches straight
// into the destination (no 32 KiB window to copy out of), refill its bit
// buffer eight bytes at a time without a per-byte end-of-input check, and
// copy matches eight bytes at a time into the destination's spare
// capacity. Its tables resolve a code word, and a length's or distance's
// base and extra-bit count, in one lookup (libdeflate's layout, simpler).
//
// It accepts exactly the streams compress/flate accepts (fuzzed against
// it in inflate_test.go): complete Huffman codes, or a single
// one-bit code as zlib allows; no distance past the start of the chunk;
// bytes after the final block are ignored.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

var (
	// errInflateFull: the chunk inflates past the output's limit.
	errInflateFull = errors.New("zlib chunk inflates past its buffer")
	errInflateEOF  = errors.New("zlib: chunk truncated")
)

func inflateCorrupt(what string) error { return fmt.Errorf("zlib: corrupt chunk: %s", what) }

// Table entries (uint32): bits 0-3 the code word's length (in a subtable
// pointer: the primary table's bits), 4-7 the extra bits that follow it
// (in a subtable pointer: the subtable's bits), 8-11 the kind, 16-31 the
// value (literal byte, length or distance base, subtable start). A zero
// entry is a code word no symbol has: the stream is corrupt.
const (
	kindLiteral  = 1 << 8
	kindMatch    = 2 << 8 // a length (literal/length table) or a distance
	kindEnd      = 4 << 8 // end of block
	kindSubtable = 8 << 8

	litTableBits  = 11
	distTableBits = 8
	lenTableBits  = 7 // code length codes are at most 7 bits: no subtables

	// A subtable per code word prefix, of at most 2^(15-tableBits) entries,
	// and at most one prefix per symbol.
	litTableMax  = 1<<litTableBits + 288<<(15-litTableBits)
	distTableMax = 1<<distTableBits + 32<<(15-distTableBits)
)

var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// codeLenOrder is the order of the code length code's lengths.
	codeLenOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

func litEntry(sym int) uint32 {
	switch {
	case sym < 256:
		return kindLiteral | uint32(sym)<<16
	case sym == 256:
		return kindEnd
	case sym < 286:
		i := sym - 257
		return kindMatch | uint32(lengthExtra[i])<<4 | uint32(lengthBase[i])<<16
	}
	return 0 // 286 and 287 have fixed-code words but are not symbols
}

func distEntry(sym int) uint32 {
	if sym < 30 {
		return kindMatch | uint32(distExtra[sym])<<4 | uint32(distBase[sym])<<16
	}
	return 0
}

func codeLenEntry(sym int) uint32 { return kindLiteral | uint32(sym)<<16 }

// buildTable builds the decoding table of the canonical Huffman code with
// the given code lengths into *table (reused), tableBits bits of primary
// index. It refuses over-subscribed codes and incomplete ones other than a
// single one-bit code; an empty code builds a table of corrupt entries.
func buildTable(table *[]uint32, lens []uint8, tableBits uint, entry func(int) uint32) error {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	maxLen, left, used := 0, 1, 0
	for l := 1; l < 16; l++ {
		left <<= 1
		left -= count[l]
		if left < 0 {
			return inflateCorrupt("over-subscribed Huffman code")
		}
		if count[l] > 0 {
			maxLen, used = l, used+count[l]
		}
	}
	t := (*table)[:0]
	t = append(t, make([]uint32, 1<<tableBits)...)
	*table = t
	if maxLen == 0 {
		return nil
	}
	if left != 0 && !(used == 1 && maxLen == 1) {
		return inflateCorrupt("incomplete Huffman code")
	}
	var next [16]int
	code := 0
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	var subBits [1 << litTableBits]uint8
	mask := 1<<tableBits - 1
	for _, l := range lens {
		if int(l) > int(tableBits) {
			// A prefix's subtable is as wide as the longest code word
			// that starts with it.
			rev := int(bits.Reverse16(uint16(next[l]))) >> (16 - l)
			next[l]++
			p := rev & mask
			subBits[p] = max(subBits[p], l-uint8(tableBits))
		} else if l > 0 {
			next[l]++
		}
	}
	code = 0
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	for sym, l := range lens {
		if l == 0 {
			continue
		}
		rev := int(bits.Reverse16(uint16(next[l]))) >> (16 - l)
		next[l]++
		e := entry(sym)
		if uint(l) <= tableBits {
			for i := rev; i < len(t[:1<<tableBits]); i += 1 << l {
				t[i] = e | uint32(l)
			}
			continue
		}
		p := rev & mask
		sb := uint(subBits[p])
		if t[p] == 0 {
			t[p] = kindSubtable | uint32(len(t))<<16 | uint32(sb)<<4 | uint32(tableBits)
			t = append(t, make([]uint32, 1<<sb)...)
		}
		start := int(t[p] >> 16)
		step := 1 << (uint(l) - tableBits)
		for i := rev >> tableBits; i < 1<<sb; i += step {
			t[start+i] = e | uint32(uint(l)-tableBits)
		}
	}
	*table = t
	return nil
}

var (
	fixedOnce            sync.Once
	fixedLit, fixedDist  []uint32
	fixedLitN, fixedDstN [288]uint8
)

func fixedTables() ([]uint32, []uint32) {
	fixedOnce.Do(func() {
		for i := range fixedLitN {
			switch {
			case i < 144:
				fixedLitN[i] = 8
			case i < 256:
				fixedLitN[i] = 9
			case i < 280:
				fixedLitN[i] = 7
			default:
				fixedLitN[i] = 8
			}
		}
		for i := range fixedDstN[:32] {
			fixedDstN[i] = 5
		}
		// Complete codes by construction: the builds cannot fail.
		_ = buildTable(&fixedLit, fixedLitN[:], litTableBits, litEntry)
		_ = buildTable(&fixedDist, fixedDstN[:32], distTableBits, distEntry)
	})
	return fixedLit, fixedDist
}

// inflater decodes raw deflate chunks; its tables are reused from chunk
// to chunk. It is not safe for concurrent use.
type inflater struct {
	in       []byte
	pos      int    // next input byte to load into bitbuf
	bitbuf   uint64 // bits not yet consumed, least significant first
	bitsleft uint   // valid bits in bitbuf
	overrun  int    // zero bytes loaded past the end of in
	lit      []uint32
	dist     []uint32
	lenTab   []uint32
	lens     [286 + 30]uint8
}

// inflate decodes the deflate stream src into out[:limit] (limit <=
// len(out); bytes of out past limit may be overwritten, as scratch for
// word-sized copies) and returns the decoded length. A stream that
// inflates past limit is errInflateFull.
func (z *inflater) inflate(src, out []byte, limit int) (int, error) {
	z.in, z.pos, z.bitbuf, z.bitsleft, z.overrun = src, 0, 0, 0, 0
	op := 0
	for {
		if err := z.refill(); err != nil {
			return 0, err
		}
		final := z.bitbuf&1 == 1
		btype := z.bitbuf >> 1 & 3
		z.consume(3)
		var err error
		switch btype {
		case 0:
			op, err = z.stored(out, op, limit)
		case 1:
			lit, dist := fixedTables()
			op, err = z.huffman(lit, dist, out, op, limit)
		case 2:
			if err = z.readCodes(); err == nil {
				op, err = z.huffman(z.lit, z.dist, out, op, limit)
			}
		default:
			err = inflateCorrupt("reserved block type")
		}
		if err != nil {
			return 0, err
		}
		if final {
			break
		}
	}
	if uint(z.overrun)*8 > z.bitsleft {
		return 0, errInflateEOF
	}
	z.in = nil
	return op, nil
}

func (z *inflater) consume(n uint) {
	z.bitbuf >>= n
	z.bitsleft -= n
}

// refill makes bitsleft at least 56 (at most 63). Past the end of the input it loads
// zero bytes and counts them; consuming them is detected at the end of
// the stream (or of a stored block's header), and more than eight of them
// means the stream is certainly truncated.
func (z *inflater) refill() error {
	if z.bitsleft >= 56 {
		return nil
	}
	if z.pos+8 <= len(z.in) {
		z.bitbuf |= binary.LittleEndian.Uint64(z.in[z.pos:]) << z.bitsleft
		z.pos += int((63 - z.bitsleft) >> 3)
		z.bitsleft |= 56
		return nil
	}
	for z.bitsleft < 56 {
		if z.pos < len(z.in) {
			z.bitbuf |= uint64(z.in[z.pos]) << z.bitsleft
			z.pos++
		} else {
			if z.overrun >= 8 {
				return errInflateEOF
			}
			z.overrun++
		}
		z.bitsleft += 8
	}
	return nil
}

// stored copies a stored block: the bit buffer's whole bytes go back to
// the input, then LEN, NLEN and LEN bytes follow.
func (z *inflater) stored(out []byte, op, limit int) (int, error) {
	z.consume(z.bitsleft & 7)
	back := int(z.bitsleft >> 3)
	virt := min(z.overrun, back)
	z.overrun -= virt
	z.pos -= back - virt
	z.bitbuf, z.bitsleft = 0, 0
	if z.overrun > 0 || z.pos+4 > len(z.in) {
		return 0, errInflateEOF
	}
	n := int(binary.LittleEndian.Uint16(z.in[z.pos:]))
	if ^uint16(n) != binary.LittleEndian.Uint16(z.in[z.pos+2:]) {
		return 0, inflateCorrupt("stored block length")
	}
	z.pos += 4
	// Full before truncated when the bytes present overflow the limit,
	// as a streaming reader sees them.
	if op+min(n, len(z.in)-z.pos) > limit {
		return 0, errInflateFull
	}
	if z.pos+n > len(z.in) {
		return 0, errInflateEOF
	}
	copy(out[op:op+n], z.in[z.pos:])
	z.pos += n
	return op + n, nil
}

// readCodes reads a dynamic block's header and builds its tables.
func (z *inflater) readCodes() error {
	if err := z.refill(); err != nil {
		return err
	}
	nlit := int(z.bitbuf&0x1f) + 257
	ndist := int(z.bitbuf>>5&0x1f) + 1
	nclen := int(z.bitbuf>>10&0xf) + 4
	z.consume(14)
	if nlit > 286 || ndist > 30 {
		return inflateCorrupt("too many length or distance codes")
	}
	var clens [19]uint8
	for _, sym := range codeLenOrder[:nclen] {
		if err := z.refill(); err != nil {
			return err
		}
		clens[sym] = uint8(z.bitbuf & 7)
		z.consume(3)
	}
	if err := buildTable(&z.lenTab, clens[:], lenTableBits, codeLenEntry); err != nil {
		return err
	}
	lens := z.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if err := z.refill(); err != nil {
			return err
		}
		e := z.lenTab[z.bitbuf&(1<<lenTableBits-1)]
		if e == 0 {
			return inflateCorrupt("code length code")
		}
		z.consume(uint(e & 15))
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var fill uint8
		switch sym {
		case 16:
			if i == 0 {
				return inflateCorrupt("repeated code length with no previous one")
			}
			rep, fill = 3+int(z.bitbuf&3), lens[i-1]
			z.consume(2)
		case 17:
			rep = 3 + int(z.bitbuf&7)
			z.consume(3)
		default:
			rep = 11 + int(z.bitbuf&0x7f)
			z.consume(7)
		}
		if i+rep > len(lens) {
			return inflateCorrupt("code lengths overflow")
		}
		for j := range lens[i : i+rep] {
			lens[i+j] = fill
		}
		i += rep
	}
	if err := buildTable(&z.lit, lens[:nlit], litTableBits, litEntry); err != nil {
		return err
	}
	return buildTable(&z.dist, lens[nlit:], distTableBits, distEntry)
}

// huffman decodes one Huffman-coded block into out from op. It is the
// hot loop of ZLIB decoding, so it keeps the bit buffer in locals and is
// longer than the functions around it.
func (z *inflater) huffman(lit, dist []uint32, out []byte, op, limit int) (int, error) {
	in := z.in
	bitbuf, bitsleft, pos := z.bitbuf, z.bitsleft, z.pos
	const litMask, distMask = 1<<litTableBits - 1, 1<<distTableBits - 1
	// The primary tables as arrays: a masked index needs no bounds check.
	litPrimary := (*[1 << litTableBits]uint32)(lit)
	distPrimary := (*[1 << distTableBits]uint32)(dist)
	for {
		// One refill covers a length (15 + 5 bits) and a distance (15 + 13).
		if bitsleft < 48 {
			if pos+8 <= len(in) {
				bitbuf |= binary.LittleEndian.Uint64(in[pos:]) << bitsleft
				pos += int((63 - bitsleft) >> 3)
				bitsleft |= 56
			} else {
				z.bitbuf, z.bitsleft, z.pos = bitbuf, bitsleft, pos
				if err := z.refill(); err != nil {
					return 0, err
				}
				bitbuf, bitsleft, pos = z.bitbuf, z.bitsleft, z.pos
			}
		}
		e := litPrimary[bitbuf&litMask]
		if e&kindLiteral != 0 && op+3 <= limit {
			// Literals come in runs (doubles' mantissas are mostly
			// literals): 48 bits hold three primary-table literals of
			// at most 11 bits, so up to three go out per refill.
			n := uint(e & 15)
			bitbuf >>= n
			bitsleft -= n
			out[op] = byte(e >> 16)
			e = litPrimary[bitbuf&litMask]
			if e&kindLiteral == 0 {
				op++
				continue
			}
			n = uint(e & 15)
			bitbuf >>= n
			bitsleft -= n
			out[op+1] = byte(e >> 16)
			e = litPrimary[bitbuf&litMask]
			if e&kindLiteral == 0 {
				op += 2
				continue
			}
			n = uint(e & 15)
			bitbuf >>= n
			bitsleft -= n
			out[op+2] = byte(e >> 16)
			op += 3
			continue
		}
		if e&kindSubtable != 0 {
			bitbuf >>= litTableBits
			bitsleft -= litTableBits
			e = lit[int(e>>16)+int(bitbuf&(1<<(e>>4&15)-1))]
		}
		n := uint(e & 15)
		bitbuf >>= n
		bitsleft -= n
		if e&kindLiteral != 0 {
			if op >= limit {
				return 0, errInflateFull
			}
			out[op] = byte(e >> 16)
			op++
			continue
		}
		if e&kindMatch == 0 {
			z.bitbuf, z.bitsleft, z.pos = bitbuf, bitsleft, pos
			if e&kindEnd != 0 {
				return op, nil
			}
			return 0, inflateCorrupt("invalid literal/length code")
		}
		extra := uint(e >> 4 & 15)
		length := int(e>>16) + int(bitbuf&(1<<extra-1))
		bitbuf >>= extra
		bitsleft -= extra

		e = distPrimary[bitbuf&distMask]
		if e&kindSubtable != 0 {
			bitbuf >>= distTableBits
			bitsleft -= distTableBits
			e = dist[int(e>>16)+int(bitbuf&(1<<(e>>4&15)-1))]
		}
		if e&kindMatch == 0 {
			return 0, inflateCorrupt("invalid distance code")
		}
		n = uint(e & 15)
		bitbuf >>= n
		bitsleft -= n
		extra = uint(e >> 4 & 15)
		d := int(e>>16) + int(bitbuf&(1<<extra-1))
		bitbuf >>= extra
		bitsleft -= extra
		if d > op {
			return 0, inflateCorrupt("distance past the start of the chunk")
		}
		if op+length > limit {
			return 0, errInflateFull
		}
		copyMatch(out, op, d, length)
		op += length
	}
}

// copyMatch copies length bytes from d bytes back to out[op:]. With room
// past the match and a distance of at least 8, eight bytes at a time
// (writing up to 7 bytes past the match, which later output overwrites).
func copyMatch(out []byte, op, d, length int) {
	from := op - d
	if d >= 8 && op+length+8 <= len(out) {
		for end := op + length; op < end; op, from = op+8, from+8 {
			binary.LittleEndian.PutUint64(out[op:], binary.LittleEndian.Uint64(out[from:]))
		}
		return
	}
	if d == 1 {
		b := out[from]
		dst := out[op : op+length]
		for i := range dst {
			dst[i] = b
		}
		return
	}
	// Overlapping: each copy doubles the periodic prefix it copies from.
	end := op + length
	for op < end {
		op += copy(out[op:end], out[from:op])
	}
}
