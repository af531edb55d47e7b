//go:build !(linux || openbsd || darwin || freebsd || netbsd)

package local

import "io/fs"

// fileID adds nothing where the platform's stat is not a syscall.Stat_t:
// the Version is size and modification time only.
func fileID(fs.FileInfo) string { return "" }

// modifiedSince reports whether the file's size or modification time
// moved between the two stats of its descriptor.
func modifiedSince(before, after fs.FileInfo) bool {
	return before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime())
}
