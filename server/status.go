package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"runtime/debug"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/planner"
	"github.com/scand/scand/planner/planmem"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/server/limits"
	"github.com/scand/scand/server/stream"
	"github.com/scand/scand/server/ticketsign"
	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// requestError is a problem with the request itself (InvalidArgument), or
// with its size (ResourceExhausted), found while parsing or planning it.
type requestError struct {
	code codes.Code
	msg  string
}

func (e *requestError) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &requestError{code: codes.InvalidArgument, msg: fmt.Sprintf(format, args...)}
}

func tooLargef(format string, args ...any) error {
	return &requestError{code: codes.ResourceExhausted, msg: fmt.Sprintf(format, args...)}
}

// deniedf is a name outside the caller's scope (PermissionDenied).
func deniedf(format string, args ...any) error {
	return &requestError{code: codes.PermissionDenied, msg: fmt.Sprintf(format, args...)}
}

// streamCodes are the codes of the stream's own errors (package
// server/stream).
var streamCodes = map[stream.Kind]codes.Code{
	stream.Invalid:     codes.InvalidArgument,
	stream.IdleTimeout: codes.DeadlineExceeded,
	stream.Panic:       codes.Internal,
}

// toStatus maps an error from any layer to the gRPC status a client sees.
// It is the only place that chooses codes.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var reqErr *requestError
	var streamErr *stream.Error
	var planErr *planner.Error
	var srcErr *source.Error
	var unknownCol *scanner.UnknownColumnError
	var filterErr *filter.Error
	code := codes.Internal
	switch {
	case errors.As(err, &reqErr):
		code = reqErr.code
	case errors.As(err, &streamErr):
		code = streamCodes[streamErr.Kind]
	case errors.As(err, &planErr):
		code = plannerCodes[planErr.Kind]
	case errors.As(err, &srcErr):
		code = sourceCodes[srcErr.Kind]
	case errors.Is(err, ticketsign.ErrOtherIdentity):
		code = codes.PermissionDenied
	case errors.Is(err, ticketsign.ErrUnsigned), errors.Is(err, ticketsign.ErrChanged),
		errors.Is(err, ticketsign.ErrUnknownKey), errors.Is(err, ticketsign.ErrExpired),
		errors.Is(err, ticketsign.ErrWrongKind):
		code = codes.Unauthenticated
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.As(err, &unknownCol), errors.As(err, &filterErr):
		code = codes.InvalidArgument
	case errors.Is(err, filter.ErrTooComplex):
		code = codes.ResourceExhausted
	case errors.Is(err, fs.ErrPermission):
		code = codes.PermissionDenied
	case errors.Is(err, fs.ErrNotExist):
		code = codes.NotFound
	case errors.Is(err, fs.ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, iosched.ErrOverBudget), errors.Is(err, admission.ErrOverBudget), errors.Is(err, admission.ErrCut), errors.Is(err, limits.ErrExceeded), errors.Is(err, planmem.ErrOverBudget):
		code = codes.ResourceExhausted
	case errors.Is(err, storage.ErrChanged):
		code = codes.FailedPrecondition
	case errors.Is(err, storage.ErrUnsupported):
		code = codes.Unimplemented
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, ErrDraining):
		code = codes.Unavailable
	case errors.Is(err, scanner.ErrNotColumnar):
		code = codes.InvalidArgument
	case errors.Is(err, scanner.ErrUnsupported):
		code = codes.Unimplemented
	case errors.Is(err, scanner.ErrCorrupt):
		code = codes.DataLoss
	}
	if code == codes.OK { // a kind without a code
		code = codes.Internal
	}
	return status.Error(code, truncateMessage(err.Error()+backendHint(err)))
}

// plannerCodes and sourceCodes are the codes of the planner's and the
// sources' classified errors; a kind not listed is Internal (the zero
// code, OK, becomes Internal).
var plannerCodes = map[planner.ErrorKind]codes.Code{
	planner.Invalid:          codes.InvalidArgument,
	planner.TooLarge:         codes.ResourceExhausted,
	planner.DeadlineExceeded: codes.DeadlineExceeded,
	planner.Unimplemented:    codes.Unimplemented,
}

var sourceCodes = map[source.ErrorKind]codes.Code{
	source.Invalid:       codes.InvalidArgument,
	source.NotFound:      codes.NotFound,
	source.Unimplemented: codes.Unimplemented,
	source.Corrupt:       codes.DataLoss,
	source.TooLarge:      codes.ResourceExhausted,
}

// backendFlags says, per URI scheme, how `scand serve` turns that
// backend on: the advice for a path whose backend this server lacks.
var backendFlags = map[string]string{
	"s3": "start scand serve with the --s3-* flags to serve s3:// paths: --s3-region for AWS, " +
		"--s3-endpoint URL (with --s3-path-style for most S3-compatible stores) otherwise; credentials from " +
		"--s3-access-key and --s3-secret-key, or the AWS credential chain",
	"gs": "start scand serve with --gcs to serve gs:// paths (Application Default Credentials; " +
		"--gcs-credentials-file FILE for a service account key, --gcs-anonymous for public buckets)",
	"az": "start scand serve with --azure-account NAME to serve az:// paths (credentials from --azure-key, " +
		"--azure-sas or --azure-connection-string, or their AZURE_STORAGE_* variables)",
}

// backendHint is "; <advice>" for a name whose backend is not configured,
// or "".
func backendHint(err error) string {
	var nb *storage.NoBackendError
	if !errors.As(err, &nb) {
		return ""
	}
	if nb.Scheme == "" {
		return "; start scand serve with --root DIR to serve plain paths"
	}
	if advice, ok := backendFlags[nb.Scheme]; ok {
		return "; " + advice
	}
	return ""
}

// maxMessageLen bounds a status message: messages echo user input (paths,
// column names, filters), and one too large for the HTTP/2 trailers
// reaches the client as a bare RST_STREAM instead of a status.
const maxMessageLen = 4 << 10

func truncateMessage(msg string) string {
	if len(msg) <= maxMessageLen {
		return msg
	}
	return strings.ToValidUTF8(msg[:maxMessageLen], "") + fmt.Sprintf("... (%d more bytes)", len(msg)-maxMessageLen)
}

// recoverHandler turns a panic that escaped the scanner's own containment
// into an Internal error for this request, and logs its stack.
func recoverHandler(log *slog.Logger, method string, err *error) {
	if r := recover(); r != nil {
		log.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
		*err = status.Errorf(codes.Internal, "%s failed: internal error (%v); the server logged the details", method, r)
	}
}
