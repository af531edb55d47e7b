//go:build linux || openbsd || darwin || freebsd || netbsd

package local

import (
	"io/fs"
	"strconv"
	"syscall"
)

// fileID is the part of a Version only the platform's stat has: change
// time, inode and device.
func fileID(st fs.FileInfo) string {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return ",ctime:" + strconv.FormatInt(ctimeNano(s), 10) +
		",ino:" + strconv.FormatUint(uint64(s.Ino), 10) + ",dev:" + strconv.FormatUint(uint64(s.Dev), 10)
}

// modifiedSince reports whether the file was written between the two
// stats of its descriptor: its size, modification or change time moved.
// A change time that moved along with the link count is an unlink or a
// rename over the file (replacing it the safe way), not a write, and does
// not count.
func modifiedSince(before, after fs.FileInfo) bool {
	if before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime()) {
		return true
	}
	b, ok1 := before.Sys().(*syscall.Stat_t)
	a, ok2 := after.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 {
		return false
	}
	return changeTime(b) != changeTime(a) && b.Nlink == a.Nlink
}

func ctimeNano(s *syscall.Stat_t) int64 {
	t := changeTime(s)
	return t.Nano()
}
