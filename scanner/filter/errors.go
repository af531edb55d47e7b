package filter

import (
	"errors"
	"fmt"
)

// Limits on what a filter may ask, whichever front end it came through.
// Beyond them a filter fails with ErrTooComplex.
const (
	MaxTextBytes = 1 << 20 // SQL text, or a serialized Substrait message
	MaxDepth     = 100     // nesting of operations and parentheses
	MaxInValues  = 100_000 // values of one IN list
)

// ErrTooComplex marks a filter beyond the limits above; the server answers
// RESOURCE_EXHAUSTED.
var ErrTooComplex = errors.New("filter too large or too deeply nested")

// Error is a filter the user must fix (INVALID_ARGUMENT): a syntax error, an
// unknown column, a type mismatch, an unsupported function. The message says
// where and what was expected.
type Error struct {
	// Pos is the byte offset in the SQL text where the problem is, or -1
	// when there is no text (Substrait, binding).
	Pos int
	Msg string
}

func (e *Error) Error() string {
	if e.Pos >= 0 {
		return fmt.Sprintf("filter: at position %d: %s", e.Pos, e.Msg)
	}
	return "filter: " + e.Msg
}

// Errorf returns an *Error without a position.
func Errorf(format string, args ...any) error {
	return &Error{Pos: -1, Msg: fmt.Sprintf(format, args...)}
}
