//go:build linux

package local

import (
	"os"
	"strconv"
)

// descriptorPath returns the absolute path the kernel has for an open
// file (readlink of /proc/self/fd/N): where the file was found when it
// was opened, whatever links led there. ok is false where /proc is not
// mounted.
func descriptorPath(f *os.File) (p string, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var lerr error
	cerr := rc.Control(func(fd uintptr) {
		p, lerr = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	})
	if cerr != nil || lerr != nil {
		return "", false
	}
	return p, true
}
