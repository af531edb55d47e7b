package stream

import (
	"errors"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner"
)

// ChangedCause returns why f did not decode: a file rewritten in place
// under the read decodes as garbage, and that is the file changing
// (storage.ErrChanged, FAILED_PRECONDITION: plan again), not corruption
// (DATA_LOSS). A pread read rechecks the file after each fetch and fails
// with ErrChanged before it decodes; a mapped file shows new bytes at
// once, with no read to recheck after, so a decoding error is the moment
// to ask. err is returned as it is unless it wraps scanner.ErrCorrupt
// and f's Recheck finds a change.
func ChangedCause(f *iosched.File, err error) error {
	if f == nil || !errors.Is(err, scanner.ErrCorrupt) {
		return err
	}
	if rerr := f.Recheck(); rerr != nil {
		return rerr
	}
	return err
}

// changedCause is ChangedCause for the stream's current file.
func (st *stream) changedCause(err error) error {
	if st.file == nil {
		return err
	}
	return ChangedCause(st.file.IO, err)
}
