package iosched

import (
	"slices"
	"sort"
	"sync"
)

// Byte accounting: every byte a File fetched is exactly one of
//
//   - used: handed to the decoder (ReadAt, Borrow, ReadIndex), counted
//     once however often it was read;
//   - wasted: a gap between announced ranges, read only to merge them into
//     one request, and never handed over;
//   - unused: fetched ahead of the decoder and never handed over: the
//     speculative tail read beyond the footer (a small file is read whole),
//     a planned request the scan did not reach or that was dropped to free
//     memory (and fetched again later), the bytes of a failed fetch.
//
// so that Stats' BytesFetched = BytesUsed + BytesWasted + BytesUnused at
// any moment, not only once the file is closed. Bytes count as fetched
// when a fetch has landed and its bytes are sorted, not part by part while
// it runs: a fetch still running counts nowhere yet.
//
// A planned request's bytes are the planner's to sort (plan.go: fetched,
// take, drop, retire), under File.mu; the rest (the tail read, direct
// reads, index reads) are a ledger's, under its own mutex, since those
// reads run outside File.mu.

// coverage is the set of bytes of one buffer handed to the decoder so far,
// as sorted, disjoint, non-touching ranges. Decoders read a buffer mostly
// front to back, so the set stays a few ranges long. The zero value is
// empty.
type coverage struct {
	rs []Range
}

// add marks [off, off+n) as handed over and returns the parts of it that
// were not marked before, in order.
func (c *coverage) add(off, n int64) (fresh []Range) {
	if n <= 0 {
		return nil
	}
	end := off + n
	// The first range that reaches off (touching counts: it is merged).
	i := sort.Search(len(c.rs), func(i int) bool { return c.rs[i].End() >= off })
	pos, lo, hi := off, off, end
	j := i
	for ; j < len(c.rs) && c.rs[j].Off <= end; j++ {
		r := c.rs[j]
		if r.Off > pos {
			fresh = append(fresh, Range{Off: pos, Len: r.Off - pos})
		}
		pos = max(pos, r.End())
		lo, hi = min(lo, r.Off), max(hi, r.End())
	}
	if pos < end {
		fresh = append(fresh, Range{Off: pos, Len: end - pos})
	}
	c.rs = slices.Replace(c.rs, i, j, Range{Off: lo, Len: hi - lo})
	return fresh
}

// size is the number of bytes marked.
func (c *coverage) size() int64 {
	var n int64
	for _, r := range c.rs {
		n += r.Len
	}
	return n
}

// within is how many bytes of rs (sorted, disjoint) lie inside one of
// needed (sorted, disjoint).
func within(rs, needed []Range) int64 {
	var n int64
	for _, r := range rs {
		k := sort.Search(len(needed), func(k int) bool { return needed[k].End() > r.Off })
		for ; k < len(needed) && needed[k].Off < r.End(); k++ {
			n += min(r.End(), needed[k].End()) - max(r.Off, needed[k].Off)
		}
	}
	return n
}

// ledger sorts the bytes a File fetched outside its plan: the tail read,
// direct reads and index reads. It is safe for concurrent use.
type ledger struct {
	mu                    sync.Mutex
	fetched, used, wasted int64 // direct and index reads
	tailLen               int64 // the tail read's bytes, once loaded
	tail                  coverage
}

// direct counts n bytes read straight into the decoder's buffer.
func (l *ledger) direct(n int64) {
	l.mu.Lock()
	l.fetched += n
	l.used += n
	l.mu.Unlock()
}

// tailLoaded counts the tail read, n bytes, none used yet.
func (l *ledger) tailLoaded(n int64) {
	l.mu.Lock()
	l.tailLen = n
	l.mu.Unlock()
}

// tailRead marks [off, off+n) of the tail read as handed over.
func (l *ledger) tailRead(off, n int64) {
	l.mu.Lock()
	l.tail.add(off, n)
	l.mu.Unlock()
}

// index counts one index request: fetched is the part of req that was
// fetched ([req.Off, req.Off+fetched)); the rest of it lay in the tail
// read. The needed ranges are handed over, the gaps only merged them.
func (l *ledger) index(req Request, fetched int64) {
	head := Range{Off: req.Off, Len: fetched}
	used := within([]Range{head}, req.Ranges)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fetched += fetched
	l.used += used
	l.wasted += fetched - used
	for _, r := range req.Ranges {
		if from := max(r.Off, head.End()); from < r.End() {
			l.tail.add(from, r.End()-from)
		}
	}
}

// add adds the ledger's figures to st.
func (l *ledger) add(st *Stats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tailUsed := l.tail.size()
	st.BytesFetched += l.fetched + l.tailLen
	st.BytesUsed += l.used + tailUsed
	st.BytesWasted += l.wasted
	st.BytesUnused += l.tailLen - tailUsed
}
