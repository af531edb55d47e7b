package rangecache

import (
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
	ReadFile(path string) ([]byte, error)
	ReadDir(path string) ([]fs.DirEntry, error)
}

// OSFS is FS on the operating system's files.
type OSFS struct{}

func (OSFS) MkdirAll(path string) error                 { return os.MkdirAll(path, 0o755) }
func (OSFS) Rename(oldpath, newpath string) error       { return os.Rename(oldpath, newpath) }
func (OSFS) Remove(path string) error                   { return os.Remove(path) }
func (OSFS) ReadFile(path string) ([]byte, error)       { return os.ReadFile(path) }
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
