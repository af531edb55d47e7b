package iosched

import (
	"fmt"
)

// Index reads: a reader's indexes (the Parquet page index: column and
// offset indexes) are small ranges it needs before it knows which data to
// fetch. They are planned together, apart from the data: coalesced with
// each other across the hole, and cut against the speculative tail read,
// which already holds whatever part of them lies in the file's last
// TailSize bytes (pyarrow and arrow-go write the page index just before
// the footer, so for most files the whole index is either in the tail or
// one GET ending where the tail starts):
//
//	file:   ... data pages ... | column indexes | offset indexes | footer |
//	tail:                                  [------ tail read (64 KiB) -----]
//	index GET:              [-----------------)  only the part before the tail
//
// Their requests and bytes count in Stats.IndexReads and
// Stats.IndexBytesFetched as well as in Reads and BytesFetched, so the
// data's share is the difference.

// ReadIndex returns the bytes of each range, in the order given, fetched
// in as few requests as the hole allows and served from the tail read
// where it holds them. Every range must lie inside the file. It is safe
// for concurrent use; the returned slices are the caller's.
func (f *File) ReadIndex(ranges []Range) ([][]byte, error) {
	for _, r := range ranges {
		if r.Off < 0 || r.Len < 0 || r.Off+r.Len > f.info.Size {
			return nil, fmt.Errorf("iosched: index range [%d, %d) outside %q (%d bytes)", r.Off, r.Off+r.Len, f.info.Name, f.info.Size)
		}
	}
	if err := f.ctx.Err(); err != nil {
		return nil, err
	}
	hole := f.hole(false)
	if f.sched.opts.NoCoalesce {
		hole = -1
	}
	reqs := Coalesce(ranges, hole, f.sched.opts.MaxRequest)
	spans := make([]segment, 0, len(reqs))
	for _, req := range reqs {
		buf, err := f.readIndexSpan(req)
		if err != nil {
			return nil, err
		}
		spans = append(spans, segment{off: req.Off, data: buf})
	}
	out := make([][]byte, len(ranges))
	for i, r := range ranges {
		for _, s := range spans {
			if r.Off >= s.off && r.Off+r.Len <= s.off+int64(len(s.data)) {
				out[i] = s.data[r.Off-s.off : r.Off-s.off+r.Len]
				break
			}
		}
	}
	return out, nil
}

// readIndexSpan reads req: the part inside the tail read (when the tail
// was read already) from it, the rest with one request counted as an
// index read.
func (f *File) readIndexSpan(req Request) ([]byte, error) {
	off, n := req.Off, req.Len
	buf := make([]byte, n)
	fetchEnd := off + n
	if tailOff, tail, ok := f.loadedTail(); ok && off+n > tailOff {
		from := max(off, tailOff)
		copy(buf[from-off:], tail[from-tailOff:off+n-tailOff])
		fetchEnd = from
	}
	if fetchEnd <= off {
		f.ledger.index(req, 0)
		return buf, nil
	}
	var err error
	if f.mapped {
		err = f.copyMapped(buf[:fetchEnd-off], off)
	} else {
		err = f.fetch(buf[:fetchEnd-off], off)
	}
	if err != nil {
		return nil, err
	}
	f.ledger.index(req, fetchEnd-off)
	f.io.indexReads.Add(1)
	f.io.indexFetched.Add(fetchEnd - off)
	return buf, nil
}

// loadedTail returns the tail read when it has been made and succeeded;
// it never starts one (a footer from the metadata cache needs none).
func (f *File) loadedTail() (off int64, buf []byte, ok bool) {
	if !f.tail.loaded.Load() {
		return 0, nil, false
	}
	return f.tail.off, f.tail.buf, true
}
