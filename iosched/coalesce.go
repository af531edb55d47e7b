package iosched

import (
	"sort"

	"github.com/scand/scand/storage"
)

// Range is a byte range [Off, Off+Len) a reader needs.
type Range = storage.Range

// Request is one read sent to storage: a span covering one or more needed
// ranges and the gaps between them.
type Request struct {
	Off, Len int64
	// Needed is the sum of the needed ranges' lengths inside the span;
	// Len - Needed is read only to save a round trip.
	Needed int64
	// Ranges are the needed ranges, sorted and disjoint.
	Ranges []Range
}

func (r Request) end() int64 { return r.Off + r.Len }

// Coalesce plans the requests that fetch ranges: ranges are sorted, and
// overlapping or touching ones merged; then neighbours are joined while the
// gap between them is at most hole bytes and the joined request stays within
// maxRequest bytes. A single range longer than maxRequest stays one request;
// the fetcher splits it into parts read in parallel.
//
// The rule is Arrow C++'s CoalesceReadRanges and ORC's "read vs seek": a gap
// costs gap/bandwidth to read through and a whole round trip to skip, so
// gaps under TTFB x bandwidth are cheaper to read.
func Coalesce(ranges []Range, hole, maxRequest int64) []Request {
	rs := make([]Range, 0, len(ranges))
	for _, r := range ranges {
		if r.Len > 0 && r.Off >= 0 {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Off < rs[j].Off })
	// Merge overlaps first, so Needed never counts a byte twice. Ranges
	// that merely touch are joined below, where maxRequest applies.
	merged := rs[:1]
	for _, r := range rs[1:] {
		last := &merged[len(merged)-1]
		if r.Off < last.End() {
			if r.End() > last.End() {
				last.Len = r.End() - last.Off
			}
			continue
		}
		merged = append(merged, r)
	}
	var out []Request
	cur := Request{Off: merged[0].Off, Len: merged[0].Len, Needed: merged[0].Len, Ranges: []Range{merged[0]}}
	for _, r := range merged[1:] {
		gap := r.Off - cur.end()
		if gap <= hole && r.End()-cur.Off <= maxRequest {
			cur.Len = r.End() - cur.Off
			cur.Needed += r.Len
			cur.Ranges = append(cur.Ranges, r)
			continue
		}
		out = append(out, cur)
		cur = Request{Off: r.Off, Len: r.Len, Needed: r.Len, Ranges: []Range{r}}
	}
	return append(out, cur)
}

// parts splits a request into pieces of at most maxPart bytes, to be
// fetched in parallel.
func parts(r Request, maxPart int64) []Range {
	if maxPart <= 0 || r.Len <= maxPart {
		return []Range{{Off: r.Off, Len: r.Len}}
	}
	var out []Range
	for off := r.Off; off < r.end(); off += maxPart {
		out = append(out, Range{Off: off, Len: min(maxPart, r.end()-off)})
	}
	return out
}
