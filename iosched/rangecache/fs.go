package rangecache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FS is the file system the disk tier works through: the operating
// system's by default, a fault-injecting wrapper in tests. Paths are the
// operating system's. Implementations are safe for concurrent use.
type FS interface {
	MkdirAll(path string) error
	// WriteFile creates or truncates path and writes the parts to it, in
	// order (a page's header and its data, without joining them).
	WriteFile(path string, parts ...[]byte) error
	Rename(oldpath, newpath string) error
	Remove(path string) error
	// ReadFileInto fills the parts, in order, with the file's bytes from
	// its start (a page's header, then its data straight into the
	// caller's buffer). A file of another size than the parts' total is
	// an error wrapping ErrFileSize.
	ReadFileInto(path string, parts ...[]byte) error
	ReadDir(path string) ([]fs.DirEntry, error)
}

// OSFS is FS on the operating system's files.
type OSFS struct{}

func (OSFS) MkdirAll(path string) error                 { return os.MkdirAll(path, 0o755) }
func (OSFS) Rename(oldpath, newpath string) error       { return os.Rename(oldpath, newpath) }
func (OSFS) Remove(path string) error                   { return os.Remove(path) }
func (OSFS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

func (OSFS) WriteFile(path string, parts ...[]byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := f.Write(p); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// ErrFileSize reports a file shorter or longer than the read asked for:
// for a page file, a torn or foreign page.
var ErrFileSize = errors.New("file size differs from the read")

func (OSFS) ReadFileInto(path string, parts ...[]byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	var want int64
	for _, p := range parts {
		want += int64(len(p))
	}
	if info.Size() != want {
		return fmt.Errorf("%w: %s holds %d bytes, want %d", ErrFileSize, path, info.Size(), want)
	}
	off := int64(0)
	for _, p := range parts {
		n, err := f.ReadAt(p, off)
		if err == io.EOF && n == len(p) {
			err = nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) { // shrunk since the Stat
				return fmt.Errorf("%w: %s ended at %d bytes", ErrFileSize, path, off+int64(n))
			}
			return err
		}
		off += int64(n)
	}
	return nil
}
