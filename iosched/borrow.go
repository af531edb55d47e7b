package iosched

import "sync/atomic"

// Borrow implements scanner.Lender: it returns the n bytes at off from the
// buffer of the planned request that holds them, without copying, so a
// decoder can build arrays that point into fetched bytes. It waits for and
// fetches the request as ReadAt does, and counts the bytes as consumed as
// ReadAt does (they are the decoder's from now on).
//
// The bytes stay valid and unchanged until release is called, which must
// happen exactly once (a second call does nothing); it may be called from
// any goroutine, also after Close. Until the last borrow of a request is
// released, its whole buffer stays out of the pool and its budget stays
// charged, even after the request is fully consumed or the file closed:
// a caller that holds borrows for long holds that memory for long.
//
// ok is false, with a nil error, when the file does not hold the range in
// a buffer: it is mapped, the range was not announced (or lies in more
// than one request, or in gap bytes dropped after the fetch), its request
// was consumed already, or memory was too short to fetch it. Nothing is
// consumed then, and the caller reads the range with ReadAt. err reports a
// failed fetch or a cancelled scan.
func (f *File) Borrow(off, n int64) (b []byte, release func(), ok bool, err error) {
	// As in ReadAt: a cancelled scan stops on its next read.
	if err := f.ctx.Err(); err != nil {
		f.setErr(err)
		return nil, nil, false, err
	}
	// Ranges at the file's end are left to ReadAt, which owns io.EOF.
	if f.mapped || off < 0 || n <= 0 || off+n > f.info.Size {
		return nil, nil, false, nil
	}
	if b, ok := f.tailBorrow(off, n); ok {
		return b, func() {}, true, nil
	}
	var lent *pending
	ok, err = f.readPlanned(off, n, func(p *pending, seg []byte) {
		b, lent = seg, p
		f.plan.lend(p)
	})
	if err != nil {
		f.noteErr(err)
		return nil, nil, false, err
	}
	if !ok {
		return nil, nil, false, nil
	}
	return b, f.releaser(lent), true, nil
}

// releaser returns the release function of one borrow of p.
func (f *File) releaser(p *pending) func() {
	var released atomic.Bool
	return func() {
		if released.Swap(true) {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		fr := f.plan.returned(p)
		f.freeLocked(fr)
		if len(fr.bufs) > 0 {
			// Consumed (or closed) while lent, and now free: the budget
			// may let this file read ahead again.
			f.readaheadLocked()
		}
	}
}

// tailBorrow lends [off, off+n) from the loaded tail read when it holds
// the range: a small file read whole (Warm) has its pages there and
// nowhere else, since Prefetch plans no range the tail holds. The tail is
// a garbage-collected buffer nothing writes after it is loaded, so the
// borrow needs no release; its budget is given back at Close.
func (f *File) tailBorrow(off, n int64) ([]byte, bool) {
	if !f.inTail(off, n) {
		return nil, false
	}
	f.ledger.tailRead(off, n)
	from := off - f.tail.off
	return f.tail.buf[from : from+n : from+n], true
}
