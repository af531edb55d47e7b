package gcs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"cloud.google.com/go/auth"
	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/internal/ranged"
	"github.com/scand/scand/storage/internal/storeerr"
)

// opError is what this package reports for a failed request (see storeerr).
type opError = storeerr.Error

// errBucketMissing marks a 404 known to be the bucket's.
var errBucketMissing = errors.New("bucket missing")

// classify maps an SDK error to a storage sentinel and a one-line text fit
// for a message.
func classify(err error) (kind error, text string) {
	var ge *googleapi.Error
	var ae *auth.Error
	switch {
	case errors.Is(err, gcs.ErrBucketNotExist):
		return errBucketMissing, "bucket not found (HTTP 404)"
	case errors.Is(err, gcs.ErrObjectNotExist):
		return fs.ErrNotExist, "not found (HTTP 404)"
	case errors.As(err, &ge):
		text = fmt.Sprintf("HTTP %d", ge.Code)
		if ge.Message != "" {
			text += ": " + ge.Message
		} else if len(ge.Errors) > 0 {
			text += ": " + ge.Errors[0].Message
		}
		text = ranged.SafeText(text)
		switch {
		case ge.Code == 404:
			return fs.ErrNotExist, text
		case ge.Code == 401 || ge.Code == 403:
			return fs.ErrPermission, text
		case ge.Code == 412:
			return storage.ErrChanged, text
		case ge.Code == 408 || ge.Code == 429 || ge.Code >= 500:
			// Throttling and server errors the SDK retried until it gave up.
			return storage.ErrUnavailable, text
		}
		return nil, text
	case errors.As(err, &ae) && ae.Response != nil:
		// The token endpoint refused the credentials (a revoked key, an
		// unbound service account).
		return fs.ErrPermission, "the credentials were refused: " + ranged.SafeText(ae.Error())
	case ranged.Unreachable(err):
		return storage.ErrUnavailable, ranged.ErrText(err)
	}
	return nil, ranged.ErrText(err)
}

const deniedWhat = "access denied (check the credentials and the bucket's IAM roles; reading needs storage.objects.get and storage.objects.list): "

// objectError turns an SDK error from a request about one object into the
// error the storage contract asks for. op names the request ("stat",
// "read"); detail, if any, follows the object's name (" bytes 0-99").
func (b *Bucket) objectError(ctx context.Context, op, bucket, key, detail string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	kind, text := classify(err)
	what := ""
	switch kind {
	case storage.ErrUnavailable:
		what = ranged.UnavailableWhat
	case errBucketMissing:
		kind, what = fs.ErrNotExist, fmt.Sprintf("bucket %q does not exist: ", bucket)
	case fs.ErrNotExist:
		// A 404 for an object does not say whether the bucket is there:
		// one listing of at most one name tells.
		switch pk, ptext := b.probe(ctx, bucket, key); pk {
		case errBucketMissing:
			what = fmt.Sprintf("bucket %q does not exist: ", bucket)
		case fs.ErrPermission:
			kind, what, text = fs.ErrPermission, deniedWhat, ptext
		default:
			what = "no such object: "
		}
	case fs.ErrPermission:
		what = deniedWhat
	case storage.ErrChanged:
		what = "the object changed since it was planned (generation precondition failed): "
	}
	return &opError{Msg: fmt.Sprintf("gcs: %s %s%s: %s%s", op, uri(bucket, key), detail, what, text), Kind: kind, Err: err}
}

// bucketError is objectError for requests about a bucket (List).
func (b *Bucket) bucketError(ctx context.Context, op, bucket, prefix string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	kind, text := classify(err)
	what := ""
	switch kind {
	case storage.ErrUnavailable:
		what = ranged.UnavailableWhat
	case errBucketMissing, fs.ErrNotExist:
		kind, what = fs.ErrNotExist, fmt.Sprintf("bucket %q does not exist: ", bucket)
	case fs.ErrPermission:
		what = deniedWhat
	}
	return &opError{Msg: fmt.Sprintf("gcs: %s %s: %s%s", op, prefix, what, text), Kind: kind, Err: err}
}

// probe lists at most one name of the bucket, to learn whether the bucket
// exists and the credentials work.
func (b *Bucket) probe(ctx context.Context, bucket, key string) (error, string) {
	it := b.client.Bucket(bucket).Objects(ctx, &gcs.Query{Prefix: key})
	it.PageInfo().MaxSize = 1
	_, err := it.Next()
	if err == nil || errors.Is(err, iterator.Done) {
		return nil, ""
	}
	kind, text := classify(err)
	if kind == fs.ErrNotExist {
		kind = errBucketMissing // a listing's 404 is the bucket's
	}
	return kind, text
}
