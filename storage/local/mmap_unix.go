//go:build linux || darwin || freebsd || netbsd || openbsd

package local

import (
	"os"
	"syscall"
)

const mmapSupported = true

func mmap(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

func munmap(b []byte) error { return syscall.Munmap(b) }

// openNonblock keeps opening a FIFO from blocking.
const openNonblock = syscall.O_NONBLOCK
