package sizeclass

import (
	"fmt"
	"math/bits"
)

// Classes are the size classes of one pool: from Min to Max bytes, both
// powers of two, cut into PerDoubling classes per power of two. A class's
// size is a multiple of 1/PerDoubling of the largest power of two not
// above it, so a buffer rounded up to its class wastes less than
// 1/PerDoubling of the length asked for. The zero value has no classes.
type Classes struct {
	minShift, maxShift int // log2 of Min and Max
	stepShift          int // log2 of PerDoubling
	per                int // PerDoubling; 0 in the zero value
}

// New returns the classes from min to max bytes with perDoubling classes
// per power of two. min and max must be powers of two with min <= max, and
// perDoubling a power of two no larger than min; New panics otherwise,
// since the arguments are constants of the program.
func New(min, max, perDoubling int) Classes {
	if !pow2(min) || !pow2(max) || !pow2(perDoubling) || min > max || perDoubling > min {
		panic(fmt.Sprintf("sizeclass.New(%d, %d, %d): want powers of two, min <= max, perDoubling <= min", min, max, perDoubling))
	}
	return Classes{minShift: log2(min), maxShift: log2(max), stepShift: log2(perDoubling), per: perDoubling}
}

// Min and Max are the smallest and largest pooled sizes.
func (c Classes) Min() int { return 1 << c.minShift }

// Max: see Min.
func (c Classes) Max() int { return 1 << c.maxShift }

// Len is the number of classes; indexes run from 0 to Len()-1 without
// holes, in order of size. Max is the last class on its own.
func (c Classes) Len() int {
	if c.per == 0 {
		return 0
	}
	return (c.maxShift-c.minShift)<<c.stepShift + 1
}

// Class rounds n up to its class, and returns the class's size and index;
// ok is false when n lies outside [Min, Max] (such buffers are not pooled).
func (c Classes) Class(n int) (size, index int, ok bool) {
	if c.Len() == 0 || n < c.Min() || n > c.Max() {
		return 0, -1, false
	}
	e := log2(n) // 2^e <= n < 2^(e+1)
	step := 1 << (e - c.stepShift)
	k := (n + step - 1) / step // per..2*per; 2*per is the next power's first class
	return k * step, (e-c.minShift)<<c.stepShift + (k - c.per), true
}

// Exact returns the index of the class whose size is exactly n; ok is
// false when n is no class's size. A pool asks it of a buffer's capacity
// before keeping the buffer, so that buffers it did not hand out (or
// handed out unpooled) are left to the garbage collector.
func (c Classes) Exact(n int) (index int, ok bool) {
	size, i, ok := c.Class(n)
	if !ok || size != n {
		return -1, false
	}
	return i, true
}

func pow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// log2 is the exponent of the largest power of two not above n (n > 0).
func log2(n int) int { return bits.Len(uint(n)) - 1 }
