package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is a failed call to scand. It keeps the gRPC status, so
// status.Code(err) and status.FromError(err) see the server's code and
// message through any further wrapping, while Error() reads as a sentence.
type Error struct {
	// Op is what the client was doing: "plan scan", "scan", "version", ...
	Op string
	// Addr is the server, host:port.
	Addr string
	// Code is the gRPC status code.
	Code codes.Code
	// Message is the server's message (or gRPC's, for transport errors).
	Message string

	err error
}

func (e *Error) Error() string {
	if e.Unreachable() {
		return fmt.Sprintf("scand at %s is not reachable (is `scand serve` running?): %s", e.Addr, e.Message)
	}
	return fmt.Sprintf("%s: %s: %s", e.Op, CodeWords(e.Code), e.Message)
}

// Unwrap returns the gRPC status error.
func (e *Error) Unwrap() error { return e.err }

// GRPCStatus returns the status as the server (or transport) sent it, so
// status.FromError keeps the server's message rather than Error().
func (e *Error) GRPCStatus() *status.Status {
	return status.New(e.Code, e.Message)
}

// Unreachable reports whether the call failed because no connection to the
// server could be made, as opposed to the server answering with an error.
// gRPC reports both as Unavailable; only transport failures carry messages
// about connecting or resolving, which is what this looks for.
func (e *Error) Unreachable() bool {
	if e.Code != codes.Unavailable {
		return false
	}
	for _, s := range []string{"connection error", "transport:", "name resolver", "produced zero addresses", "connection refused", "no such host"} {
		if strings.Contains(e.Message, s) {
			return true
		}
	}
	return false
}

// wrap turns the error of a gRPC call into an *Error. Context errors of the
// caller's ctx pass through unwrapped so that errors.Is(err,
// context.Canceled) holds for a caller that cancelled.
func (c *Client) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return context.Cause(ctx)
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	e := &Error{Op: op, Addr: c.addr, Code: codes.Unknown, Message: err.Error(), err: err}
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		if st := gs.GRPCStatus(); st != nil {
			e.Code, e.Message = st.Code(), st.Message()
		}
	}
	return e
}

// CodeWords spells a gRPC code in lower-case words for messages:
// codes.InvalidArgument becomes "invalid argument".
func CodeWords(c codes.Code) string {
	if c == codes.OK {
		return "ok"
	}
	name := c.String()
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
