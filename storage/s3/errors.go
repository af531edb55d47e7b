package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/internal/ranged"
	"github.com/scand/scand/storage/internal/storeerr"
)

// opError is what this package reports for a failed request (see storeerr).
type opError = storeerr.Error

// kindOf maps an S3 error code, or the HTTP status when the code says
// nothing (a HEAD response has no body to carry one), to a storage
// sentinel.
func kindOf(code string, status int) error {
	switch code {
	case "NoSuchKey", "NoSuchBucket", "NotFound":
		return fs.ErrNotExist
	case "AccessDenied", "Forbidden", "AllAccessDisabled", "AccountProblem",
		"InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
		"InvalidToken", "TokenRefreshRequired", "InvalidSecurity",
		"XAdminUserNotFound": // versitygw's 404 for an unknown access key
		return fs.ErrPermission
	case "PreconditionFailed":
		return storage.ErrChanged
	}
	switch status {
	case 404:
		return fs.ErrNotExist
	case 401, 403:
		return fs.ErrPermission
	case 412:
		return storage.ErrChanged
	case 500, 502, 503, 504:
		// Throttling and server errors the SDK retried until it gave up.
		return storage.ErrUnavailable
	}
	return nil
}

// unreachable reports a transport failure: the store could not be reached
// or stopped answering (refused, reset, timed out, a body cut short). By
// the time it reaches a caller the retries are spent, so it is
// storage.ErrUnavailable: worth trying again later, not the client's
// mistake nor the server's bug.
func unreachable(err error) bool {
	var ne net.Error
	var qe *ratelimit.QuotaExceededError
	return errors.As(err, &ne) || errors.As(err, &qe) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ETIMEDOUT) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded)
}

// classify is kindOf for any SDK error: the store's answer, or else what
// the transport says.
func classify(err error, code string, status int) error {
	if kind := kindOf(code, status); kind != nil {
		return kind
	}
	if code == "" && status == 0 && unreachable(err) {
		return storage.ErrUnavailable
	}
	switch code {
	case "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout":
		return storage.ErrUnavailable
	}
	return nil
}

// unavailableWhat is the part of a message that says the store could not
// be reached, and what to do.
const unavailableWhat = ranged.UnavailableWhat

// describe returns the S3 error code, the HTTP status and a one-line text
// of err fit for a message.
func describe(err error) (code string, status int, text string) {
	var requestID string
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status, requestID = re.HTTPStatusCode(), re.ServiceRequestID()
	}
	var ae smithy.APIError
	switch {
	case errors.As(err, &ae):
		code = ae.ErrorCode()
		text = code
		if msg := ae.ErrorMessage(); msg != "" && msg != code {
			text += ": " + msg
		}
		if status != 0 {
			text += fmt.Sprintf(" (HTTP %d, request id %q)", status, requestID)
		}
	case status != 0:
		text = fmt.Sprintf("HTTP %d (request id %q)", status, requestID)
	default:
		text = ranged.ErrText(err)
	}
	var me *retry.MaxAttemptsError
	if errors.As(err, &me) {
		text += fmt.Sprintf(", after %d attempts", me.Attempt)
	}
	return code, status, ranged.SafeText(text)
}

// objectError turns an SDK error from a request about one object into the
// error the storage contract asks for. op names the request ("stat",
// "read"); detail, if any, follows the object's name (" bytes 0-99").
func (b *Bucket) objectError(ctx context.Context, op, bucket, key, detail string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	code, status, text := describe(err)
	kind := classify(err, code, status)
	what := ""
	switch {
	case kind == storage.ErrUnavailable:
		what = unavailableWhat
	case code == "NoSuchBucket":
		what = fmt.Sprintf("bucket %q does not exist: ", bucket)
	case kind == fs.ErrNotExist && code != "NoSuchKey":
		// A HEAD 404 ("NotFound") has no body to say whether the key or
		// the bucket is missing, and versitygw answers 404 for an unknown
		// access key too. One listing request tells which.
		switch probeKind, probeText := b.probe(ctx, bucket, key); probeKind {
		case fs.ErrNotExist:
			what = fmt.Sprintf("bucket %q does not exist: ", bucket)
		case fs.ErrPermission:
			kind, what, text = fs.ErrPermission, "access denied (check the credentials and the bucket policy): ", probeText
		default:
			what = "no such key: "
		}
	case kind == fs.ErrNotExist:
		what = "no such key: "
	case kind == fs.ErrPermission:
		what = "access denied (check the credentials and the bucket policy): "
	case kind == storage.ErrChanged:
		what = "the object changed since it was opened: "
	}
	return &opError{
		Msg:  fmt.Sprintf("s3: %s %s%s: %s%s", op, uri(bucket, key), detail, what, text),
		Kind: kind,
		Err:  err,
	}
}

// bucketError is objectError for requests about a bucket (List).
func (b *Bucket) bucketError(ctx context.Context, op, bucket, prefix string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	code, status, text := describe(err)
	kind := classify(err, code, status)
	what := ""
	switch kind {
	case storage.ErrUnavailable:
		what = unavailableWhat
	case fs.ErrNotExist:
		what = fmt.Sprintf("bucket %q does not exist: ", bucket)
	case fs.ErrPermission:
		what = "access denied (check the credentials and the bucket policy): "
	}
	return &opError{
		Msg:  fmt.Sprintf("s3: %s %s: %s%s", op, prefix, what, text),
		Kind: kind,
		Err:  err,
	}
}

// probe lists at most one key of the bucket, to learn whether the bucket
// exists and the credentials work, and returns the storage sentinel of the
// answer (nil when the listing worked or failed otherwise) and its text.
func (b *Bucket) probe(ctx context.Context, bucket, key string) (error, string) {
	_, err := b.client.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: &bucket, Prefix: &key, MaxKeys: aws.Int32(1)})
	if err == nil {
		return nil, ""
	}
	code, status, text := describe(err)
	return kindOf(code, status), text
}
