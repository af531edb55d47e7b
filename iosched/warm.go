package iosched

// Warming a small file: one request for all of it, ahead of its reader.
//
// A file no larger than the tail size is read whole by its first tail
// read anyway, footer and data in one request. A stream that reads many
// small files one after another (the server's packed endpoints) warms
// the next ones while it decodes the current one, so that their decoders
// find every byte in memory: on an object store each file then costs its
// round trip while another file decodes, not in turn.
//
//	file:   [ data ............................ | footer | len | magic ]
//	tail:   [<------------- the whole file: one request --------------->]
//
// The tail's memory is charged to the scheduler's budget while the file
// is open, as prefetched bytes are (a stream may hold several warmed
// files); without budget Warm does nothing, and the reader fetches as it
// would have.

// Warm reads the whole file into memory now, in the caller's goroutine,
// when it is no larger than the tail size and the prefetch budget has room
// for it; later reads, and Prefetch of their ranges, are then served from
// memory with no further request. It does nothing for larger files or
// mapped ones, or when the tail was read already. The error is the
// fetch's; Close frees the bytes.
func (f *File) Warm() error {
	n := f.info.Size
	if n == 0 || n > f.tailSize || f.mapped || f.tail.loaded.Load() {
		return nil
	}
	if !f.sched.budget.tryAcquire(n) {
		return nil
	}
	f.mu.Lock()
	f.warmed = n
	f.mu.Unlock()
	f.tail.once.Do(f.loadTail)
	return f.tail.err
}

// inTail reports whether [off, off+n) lies in the tail read already, so
// that planning a request for it would fetch the same bytes twice.
func (f *File) inTail(off, n int64) bool {
	return f.tail.loaded.Load() && off >= f.tail.off && off+n <= f.tail.off+int64(len(f.tail.buf))
}

// untailed is ranges without those the loaded tail holds, when the tail
// holds the whole file (a small file, read whole by its first tail read
// or by Warm); Borrow then lends them from the tail (tailBorrow). A
// larger file's ranges are planned as they come, as before warming
// existed, even where the footer's tail holds a few of them. (Without
// tailBorrow, a range left out here could not be borrowed, and the
// native reader read the whole row group through pqarrow instead: for
// bench/filter's files without a cached footer, 213 GETs instead of 3
// for a 0.01 % range.)
func (f *File) untailed(ranges []Range) []Range {
	if !f.tail.loaded.Load() || f.tail.off > 0 {
		return ranges
	}
	out := ranges[:0:0]
	for _, r := range ranges {
		if !f.inTail(r.Off, r.Len) {
			out = append(out, r)
		}
	}
	return out
}

// releaseWarm gives back the budget Warm charged.
func (f *File) releaseWarm() {
	f.mu.Lock()
	n := f.warmed
	f.warmed = 0
	f.mu.Unlock()
	f.sched.budget.release(n)
}

// WarmData announces the data of a remote file no larger than max (all of
// it before the tail already read), as one read ahead of its reader: a
// stream that opens files ahead (its next small files on an object store)
// then has their bytes arriving while it decodes the current one, where a
// file larger than the tail size was fetched only when the stream reached
// it, each file's round trips in turn. The request is planned and read
// ahead like any announced range (Prefetch), within the file's window and
// the scheduler's budget; the reader's own announcements inside it are not
// planned again, and its reads are served from it. It does nothing on
// local or mapped files (no round trip to hide), or for larger files.
// The whole file is announced even when the tail was read (a footer not
// in the metadata cache): the last column chunks run on into the tail, and
// a chunk announced across its start was planned and fetched again with
// its neighbours (a stream of bench/delta's 900 KB files on S3 without
// cached footers read each in 4 requests and 2.5 times its bytes, 13
// times slower), where the whole file costs the tail's bytes twice.
func (f *File) WarmData(max int64) {
	if f.local || f.mapped || f.info.Size == 0 || f.info.Size > max {
		return
	}
	if f.tail.loaded.Load() && f.tail.off == 0 {
		return // the tail holds the whole file (Warm)
	}
	f.prefetch([]Range{{Off: 0, Len: f.info.Size}}, false)
}
