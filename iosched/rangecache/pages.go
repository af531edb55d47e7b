package rangecache

// Range is a byte range [Off, Off+Len) of an object.
type Range struct{ Off, Len int64 }

// Run is a stretch of consecutive pages [First, Last] that are all cached
// or all missing. A missing run is fetched with one request: neighbouring
// missing pages merge, a cached page splits the request in two, and pages
// no range touches are never fetched.
type Run struct {
	First, Last int64 // page indices, inclusive
	Cached      bool
}

// PlanPages is the page planner, a pure function: given the byte ranges a
// read needs (in order, as the IO scheduler's requests are), an object of
// size bytes cut into pages of pageSize bytes, and what is cached (have,
// asked once per page, in order), it returns the runs of pages the ranges
// touch, in order. Empty ranges, and bytes at or past size, touch no page.
func PlanPages(ranges []Range, size, pageSize int64, have func(page int64) bool) []Run {
	if pageSize <= 0 {
		return nil
	}
	var runs []Run
	next := int64(0) // first page not yet planned: ranges may share pages
	for _, r := range ranges {
		if r.Len <= 0 || r.Off < 0 || r.Off >= size {
			continue
		}
		end := min(r.Off+r.Len, size)
		first, last := max(r.Off/pageSize, next), (end-1)/pageSize
		for p := first; p <= last; p++ {
			c := have(p)
			if k := len(runs) - 1; k >= 0 && runs[k].Cached == c && runs[k].Last == p-1 {
				runs[k].Last = p
				continue
			}
			runs = append(runs, Run{First: p, Last: p, Cached: c})
		}
		next = max(next, last+1)
	}
	return runs
}

// pageBounds is the byte range [off, end) of page p of an object of size
// bytes: the last page is short.
func pageBounds(p, size, pageSize int64) (off, end int64) {
	off = p * pageSize
	return off, min(off+pageSize, size)
}
