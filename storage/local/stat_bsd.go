//go:build darwin || freebsd || netbsd

package local

import "syscall"

// changeTime is the inode's change time; only its field name differs
// between platforms (stat_unix.go).
func changeTime(s *syscall.Stat_t) syscall.Timespec { return s.Ctimespec }
