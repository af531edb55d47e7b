package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/scand/scand/storage"
)

// Option configures a Bucket.
type Option func(*Bucket)

// WithMmap makes the bucket map each opened file read-only into memory
// and serve ReadAt by copying from the mapping: no system call per read,
// and the file's pages are shared with the kernel's page cache instead of
// being copied out of it by pread. It suits data sets that are read many
// times and stay in the page cache, and files that are never modified in
// place while served (replacing a file by rename is safe: the old mapping
// keeps the old file).
//
// A file truncated while mapped cannot be read past its new end: touching
// a page that no longer exists raises SIGBUS, which ReadAt turns into an
// error wrapping storage.ErrChanged (debug.SetPanicOnFault), so the scan
// fails and the server keeps running. Bytes past the new end within the
// file's new last page read as zeros, which pread would have reported as a
// short read; Object.Recheck, on the descriptor the object keeps open,
// reports that the file changed. A file overwritten in place shows its new
// bytes at once, where the old layout is expected; the server asks Recheck
// when such bytes fail to decode, and reports the change, not corruption.
func WithMmap() Option { return func(b *Bucket) { b.mmap = true } }

var errNoMmap = errors.New("memory-mapped reads are not supported on this platform")

var _ storage.Object = (*mappedObject)(nil)

// mappedObject is a file mapped read-only. It is safe for concurrent use;
// Close waits for reads in progress before unmapping. It keeps the file
// open too, for Recheck's fstat.
type mappedObject struct {
	opened
	mu   sync.RWMutex
	data []byte // the mapping; nil once closed
}

// openMapped maps f (of info.Size bytes, > 0); the object owns f, and
// closes it on failure.
func openMapped(f opened) (storage.Object, error) {
	info := f.info
	if int64(int(info.Size)) != info.Size {
		f.f.Close()
		return nil, fmt.Errorf("map %q: %d bytes do not fit in the address space: %w", info.Name, info.Size, fs.ErrInvalid)
	}
	data, err := mmap(f.f, int(info.Size))
	if err != nil {
		f.f.Close()
		return nil, fmt.Errorf("map %q: %w", info.Name, err)
	}
	o := &mappedObject{opened: f, data: data}
	// A handle nobody closes must not keep its mapping for ever.
	runtime.SetFinalizer(o, (*mappedObject).Close)
	return o, nil
}

func (o *mappedObject) Info() storage.Info { return o.info }

// Capabilities implements storage.Object: reads copy from the mapping.
func (o *mappedObject) Capabilities() storage.Capabilities {
	return storage.Capabilities{Mapped: true, Local: true}
}

// ReadSpans implements storage.Object, a copy per span.
func (o *mappedObject) ReadSpans(ctx context.Context, spans []storage.Span) error {
	return storage.ReadSpansAt(ctx, o, spans)
}

// Recheck implements storage.Object: fstat on the file kept open. Bytes
// a shrunk file no longer has read as zeros up to the end of its last
// page; Recheck after the reads is what catches that.
func (o *mappedObject) Recheck(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.data == nil {
		return fmt.Errorf("recheck %q: %w", o.info.Name, fs.ErrClosed)
	}
	return o.recheck()
}

// ReadAt implements storage.Object. It follows the pread object's rules,
// with the mapping's length (the size at Open) as the end.
func (o *mappedObject) ReadAt(ctx context.Context, p []byte, off int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if off < 0 {
		return fmt.Errorf("read %q at %d: negative offset: %w", o.info.Name, off, fs.ErrInvalid)
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.data == nil {
		return fmt.Errorf("read %q: %w", o.info.Name, fs.ErrClosed)
	}
	if off >= int64(len(o.data)) {
		if len(p) == 0 {
			return nil
		}
		return io.EOF
	}
	n, fault := copyGuarded(p, o.data[off:])
	if fault != nil {
		return fmt.Errorf("read %q [%d, %d): the file shrank while mapped (%v, SIGBUS): %w",
			o.info.Name, off, off+int64(len(p)), fault, storage.ErrChanged)
	}
	if n < len(p) {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// copyGuarded copies src into dst, turning a memory fault (SIGBUS on a
// mapped page the file no longer has) into an error instead of a crash.
// SetPanicOnFault applies to the calling goroutine only, and is restored.
func copyGuarded(dst, src []byte) (n int, fault error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			// The runtime.Error of a fault has Addr; any other panic is
			// not ours to swallow.
			f, ok := r.(interface{ Addr() uintptr })
			if _, isRuntime := r.(runtime.Error); !ok || !isRuntime {
				panic(r)
			}
			n, fault = 0, fmt.Errorf("memory fault at %#x", f.Addr())
		}
	}()
	return copy(dst, src), nil
}

// Close unmaps the file once the reads in progress are done. Later reads
// fail with fs.ErrClosed.
func (o *mappedObject) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.data == nil {
		return nil
	}
	runtime.SetFinalizer(o, nil)
	data := o.data
	o.data = nil
	ferr := o.f.Close()
	if err := munmap(data); err != nil {
		return fmt.Errorf("unmap %q: %w", o.info.Name, err)
	}
	return ferr
}
