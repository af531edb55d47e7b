package limits

import (
	"errors"
	"fmt"
)

// ErrExceeded is wrapped by every error this package returns: a key has
// reached one of its limits. The server maps it to RESOURCE_EXHAUSTED.
var ErrExceeded = errors.New("limits: limit exceeded")

// ExceededError says which key hit which limit.
type ExceededError struct {
	Key   string // the identity or peer the limit applies to
	Limit string // what is limited, e.g. "concurrent streams"
	Max   string // the configured limit, e.g. "8" or "5 per second"
	Hint  string // what the client can do about it
}

func (e *ExceededError) Error() string {
	return fmt.Sprintf("limits: %q is over its limit of %s %s; %s", e.Key, e.Max, e.Limit, e.Hint)
}

// Unwrap makes errors.Is(err, ErrExceeded) hold.
func (e *ExceededError) Unwrap() error { return ErrExceeded }
