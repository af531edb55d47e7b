//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package local

import "os"

const mmapSupported = false

func mmap(*os.File, int) ([]byte, error) { return nil, errNoMmap }

func munmap([]byte) error { return nil }

// openNonblock: no such flag here.
const openNonblock = 0
