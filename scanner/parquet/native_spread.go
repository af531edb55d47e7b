package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Spacing out the values of a page with nulls.
//
// A page stores only its non-null values. Decoding k rows of which nv are
// values writes the nv values densely at the front of the rows' slots
// (gathered from the dictionary or converted from the page, as for a page
// without nulls) and then moves each to its row, from the last row back:
// the value for row i is the last one not yet placed, and slots are
// written at or after the dense value they read from, so nothing is
// overwritten before it is moved. Nulls' slots become zero, as Arrow
// leaves them. For the widths of Go's integers the move is branch-free
// (the value times the row's validity bit), so a random pattern of nulls
// costs no mispredictions.

// spreadFixed moves the nv values of width w at the front of out (k
// slots: len(out) == k*w) to the slots whose bits are set in valid,
// which holds the rows' validity from bit off; k-nv of the k bits are
// clear.
func spreadFixed(out []byte, w int, valid []byte, off, nv int) {
	k := len(out) / w
	if nv == k || k == 0 {
		return
	}
	switch w {
	case 1:
		spreadWords(out, valid, off, nv)
	case 2:
		spreadWords(arrow.Uint16Traits.CastFromBytes(out), valid, off, nv)
	case 4:
		spreadWords(arrow.Uint32Traits.CastFromBytes(out), valid, off, nv)
	case 8:
		spreadWords(arrow.Uint64Traits.CastFromBytes(out), valid, off, nv)
	default:
		j := nv - 1
		for i := k - 1; i > j; i-- {
			slot := out[i*w : (i+1)*w]
			if bit := off + i; valid[bit>>3]>>(bit&7)&1 != 0 {
				copy(slot, out[j*w:(j+1)*w])
				j--
			} else {
				clear(slot)
			}
		}
	}
}

// spreadWords is spreadFixed for values of one machine word type. Once
// every null is placed (j == i) the values below are in place already.
func spreadWords[T uint8 | uint16 | uint32 | uint64](o []T, valid []byte, off, nv int) {
	j := nv - 1
	for i := len(o) - 1; i > j; i-- {
		bit := off + i
		b := valid[bit>>3] >> (bit & 7) & 1
		// With j == -1 only nulls are left: b is 0 and o[0] is read
		// only to be multiplied by it.
		o[i] = o[max(j, 0)] * T(b)
		j -= int(b)
	}
}
