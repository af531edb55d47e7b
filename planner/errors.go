package planner

import "fmt"

// Error is the planner's refusal of a request: what the request asks for
// is malformed, too large, or not read by scand, or planning ran out of
// time. The server maps Kind to a gRPC code once, at its edge. Errors of
// the layers below (storage, scanner, filter, source) pass through
// wrapped, classified by their own types and sentinels.
type Error struct {
	Kind ErrorKind
	Msg  string
}

// ErrorKind classifies an Error.
type ErrorKind int

const (
	// Invalid: the request (or a ticket) is malformed.
	Invalid ErrorKind = iota + 1
	// TooLarge: the request asks for more than one plan may hold.
	TooLarge
	// DeadlineExceeded: planning took longer than Config.Timeout.
	DeadlineExceeded
	// Unimplemented: the source listed something the planner does not
	// read yet.
	Unimplemented
)

func (e *Error) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, args...)}
}

func tooLargef(format string, args ...any) error {
	return &Error{Kind: TooLarge, Msg: fmt.Sprintf(format, args...)}
}

func unimplementedf(format string, args ...any) error {
	return &Error{Kind: Unimplemented, Msg: fmt.Sprintf(format, args...)}
}
