// Package storeerr holds the error an object-store backend (S3, GCS,
// Azure) reports for a failed request: a message of the backend's own that
// names the operation and the object's URI but never the endpoint URL or
// credentials (an Azure URL may carry a SAS token), and a chain that holds
// the storage sentinel and the SDK's error, for errors.Is and errors.As.
package storeerr

// Error is one failed store request as a backend reports it.
type Error struct {
	Msg  string
	Kind error // fs.ErrNotExist, fs.ErrPermission, storage.ErrChanged, storage.ErrUnavailable or nil
	Err  error // the SDK's error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap gives the sentinel (when there is one) and the SDK's error.
func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}
