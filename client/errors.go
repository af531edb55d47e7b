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
// message through any further wrapping.
//
// # Message format
//
// Error() is "<CODE_NAME>: <server message>", the code as gRPC spells it
// (INVALID_ARGUMENT, NOT_FOUND, ...). [Error.Hint] is an extra line of
// advice, empty unless there is something specific to say about that code
// and message. The Python client (scand.ScandError) and `scand` print the
// same two lines, so a message reads the same whichever client met it.
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
	// failover marks the errors of failover.go, whose message already
	// says what broke where: never "not reachable" on top of it.
	failover bool
}

func (e *Error) Error() string {
	if e.Unreachable() {
		return fmt.Sprintf("%s: scand at %s is not reachable: %s", CodeName(e.Code), e.Addr, e.Message)
	}
	return CodeName(e.Code) + ": " + trimCodeSuffix(e.Message, e.Code)
}

// Hint is advice for the error, or "" when the code and message call for
// none beyond themselves.
func (e *Error) Hint() string {
	if e.Unreachable() {
		return "is `scand serve` running there? Check the address and port"
	}
	return hint(e.Code, e.Message)
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
	if e.Code != codes.Unavailable || e.failover {
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
	return wrapAt(ctx, op, c.addr, err)
}

// wrapAt is wrap for a call to the server at addr (a replica).
func wrapAt(ctx context.Context, op, addr string, err error) error {
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
	e := &Error{Op: op, Addr: addr, Code: codes.Unknown, Message: err.Error(), err: err}
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		if st := gs.GRPCStatus(); st != nil {
			e.Code, e.Message = st.Code(), st.Message()
		}
	}
	return e
}

// CodeName spells a gRPC code as the gRPC spec and other languages'
// clients do: codes.InvalidArgument becomes "INVALID_ARGUMENT",
// codes.Canceled "CANCELLED".
func CodeName(c codes.Code) string {
	if c == codes.Canceled {
		return "CANCELLED" // Go's constant drops an L the spec has
	}
	return strings.ToUpper(strings.ReplaceAll(CodeWords(c), " ", "_"))
}

// trimCodeSuffix drops a trailing ": <code in words>" from msg: the
// server's message for a wrapped fs.ErrInvalid ends in ": invalid
// argument", which would only repeat the code printed before it.
func trimCodeSuffix(msg string, c codes.Code) string {
	if t, ok := strings.CutSuffix(msg, ": "+CodeWords(c)); ok && t != "" {
		return t
	}
	return msg
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

// hint is the advice for a status with code and message, or "" when there
// is nothing to say beyond them. The Python client (scand/_errors.py) gives
// the same advice for the same status; keep the two in step.
func hint(c codes.Code, msg string) string {
	switch c {
	case codes.InvalidArgument:
		return columnHint(msg)
	case codes.NotFound:
		if strings.Contains(msg, "://") {
			// An object store's name (s3://, gs://, az://): --root has
			// nothing to do with it.
			return "check the bucket (or container) and the object name; the message says which is missing"
		}
		return "paths are relative to the server's --root; check the name or the glob"
	case codes.FailedPrecondition:
		if strings.Contains(msg, "changed") {
			return "a file changed while it was scanned: run the scan again once writers are done"
		}
	}
	return ""
}

// columnHint advises on an unknown column from the server's list of the
// file's own columns ("unknown column "x"; available columns: a, b"): the
// closest name, or else how nested fields are named when the file has some.
func columnHint(msg string) string {
	head, list, ok := strings.Cut(msg, "; available columns: ")
	if !ok || !strings.HasPrefix(head, "unknown column") {
		return ""
	}
	list, _, _ = strings.Cut(list, " and ") // " and N more"
	avail := strings.Split(list, ", ")
	if _, name, ok := strings.Cut(head, `"`); ok {
		name, _, _ = strings.Cut(name, `"`)
		if best := closest(name, avail); best != "" {
			return fmt.Sprintf("did you mean %q?", best)
		}
	}
	for _, a := range avail {
		if strings.Contains(a, ".") {
			return fmt.Sprintf("nested fields are named by their path, as %q", a)
		}
	}
	return ""
}

// closest is the name of names nearest to s by edit distance, or "" when
// none is near enough (at most a third of s's length, at least 2) to be a
// likely typo. Ties go to the first.
func closest(s string, names []string) string {
	best, bestD := "", max(2, len(s)/3)+1
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
