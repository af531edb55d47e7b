package local

import "fmt"

// ReadMode is how a local bucket reads its files. The zero value is the
// default, ReadPread.
type ReadMode uint8

const (
	// ReadPread reads with pread through the IO scheduler's buffers.
	ReadPread ReadMode = iota
	// ReadMmap maps each file read-only and copies from the mapping (see
	// WithMmap).
	ReadMmap
)

var readModeNames = [...]string{ReadPread: "pread", ReadMmap: "mmap"}

// String is the mode's name as --local-read spells it.
func (m ReadMode) String() string {
	if int(m) < len(readModeNames) {
		return readModeNames[m]
	}
	return fmt.Sprintf("ReadMode(%d)", uint8(m))
}

// ParseReadMode reads a mode's name; "" is the default.
func ParseReadMode(s string) (ReadMode, error) {
	switch s {
	case "", "pread":
		return ReadPread, nil
	case "mmap":
		return ReadMmap, nil
	}
	return 0, fmt.Errorf("unknown local read mode %q; want pread or mmap", s)
}
