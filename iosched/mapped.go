package iosched

import (
	"io"
	"time"

	"github.com/scand/scand/storage"
)

// Capabilities reports what the file's object declares it can do
// (scanner.Capable): readers learn from it whether the file is mapped.
func (f *File) Capabilities() storage.Capabilities { return f.obj.Capabilities() }

// Mapped reports whether the file's object serves reads from a memory
// mapping (storage.Capabilities.Mapped, local.WithMmap). Such a file is read straight
// from the mapping: each ReadAt is one copy into the caller's buffer, with
// no prefetch buffer, memory budget, tail read or request slot in between.
// Prefetching it would only copy the mapping into buffers no read uses, so
// readers do not announce ranges to a mapped file (scanner.Prefetch checks
// this).
func (f *File) Mapped() bool { return f.mapped }

// readMapped serves ReadAt for a mapped object: want is p cut at the end
// of the file, short whether it was cut. It counts as one read of
// len(want) bytes, all used.
func (f *File) readMapped(want []byte, off int64, short bool) (int, error) {
	if err := f.copyMapped(want, off); err != nil {
		return 0, err
	}
	f.ledger.direct(int64(len(want)))
	if short {
		return len(want), io.EOF
	}
	return len(want), nil
}

// copyMapped copies [off, off+len(p)) from the mapping into p, counted as
// one read; the caller counts the bytes.
func (f *File) copyMapped(p []byte, off int64) error {
	start := time.Now()
	err := f.obj.ReadAt(f.ctx, p, off)
	f.io.ioNanos.Add(int64(time.Since(start)))
	f.io.reads.Add(1)
	if err != nil {
		f.noteErr(err)
	}
	return err
}
