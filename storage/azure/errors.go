package azure

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/internal/ranged"
	"github.com/scand/scand/storage/internal/storeerr"
)

// opError is what this package reports for a failed request (see storeerr).
type opError = storeerr.Error

// errContainerMissing marks a 404 known to be the container's.
var errContainerMissing = errors.New("container missing")

// classify maps an SDK error to a storage sentinel and a one-line text fit
// for a message. azcore.ResponseError's own text quotes the request URL,
// SAS token included, so only its status and error code are used.
func classify(err error) (kind error, text string) {
	var re *azcore.ResponseError
	var ce *credentialError
	switch {
	case errors.As(err, &re):
		text = fmt.Sprintf("HTTP %d", re.StatusCode)
		if re.ErrorCode != "" {
			text += " " + re.ErrorCode
		}
		switch re.ErrorCode {
		case "ContainerNotFound":
			return errContainerMissing, text
		case "BlobNotFound", "ResourceNotFound":
			return fs.ErrNotExist, text
		case "ConditionNotMet":
			return storage.ErrChanged, text
		case "AuthenticationFailed", "AuthorizationFailure", "AuthorizationPermissionMismatch",
			"AuthorizationProtocolMismatch", "AuthorizationSourceIPMismatch", "AuthorizationResourceTypeMismatch",
			"AuthorizationServiceMismatch", "InsufficientAccountPermissions", "InvalidAuthenticationInfo",
			"AccountIsDisabled", "NoAuthenticationInformation":
			return fs.ErrPermission, text
		case "ServerBusy", "OperationTimedOut", "InternalError":
			return storage.ErrUnavailable, text
		}
		switch {
		case re.StatusCode == 404:
			return fs.ErrNotExist, text
		case re.StatusCode == 401 || re.StatusCode == 403:
			return fs.ErrPermission, text
		case re.StatusCode == 412:
			return storage.ErrChanged, text
		case re.StatusCode == 408 || re.StatusCode == 429 || re.StatusCode >= 500:
			// Throttling and server errors the SDK retried until it gave up.
			return storage.ErrUnavailable, text
		}
		return nil, text
	case errors.As(err, &ce):
		// No token: the identity is missing (no workload identity, no
		// managed identity, no login) or refused.
		return fs.ErrPermission, "could not get a token for the storage account: " + ranged.SafeText(ce.Error())
	case ranged.Unreachable(err):
		return storage.ErrUnavailable, ranged.ErrText(err)
	}
	return nil, ranged.ErrText(err)
}

const deniedWhat = "access denied (check the credentials, and that the identity holds a role such as Storage Blob Data Reader on the container): "

// objectError turns an SDK error from a request about one blob into the
// error the storage contract asks for. op names the request ("stat",
// "read"); detail, if any, follows the blob's name (" bytes 0-99").
func (b *Bucket) objectError(ctx context.Context, op, ctr, key, detail string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	kind, text := classify(err)
	what := ""
	switch kind {
	case storage.ErrUnavailable:
		what = ranged.UnavailableWhat
	case errContainerMissing:
		kind, what = fs.ErrNotExist, fmt.Sprintf("container %q does not exist: ", ctr)
	case fs.ErrNotExist:
		if text == "HTTP 404" {
			// A HEAD's 404 without an error code does not say whether the
			// container is there: one listing of at most one name tells.
			if b.probe(ctx, ctr, key) == errContainerMissing {
				what = fmt.Sprintf("container %q does not exist: ", ctr)
				break
			}
		}
		what = "no such blob: "
	case fs.ErrPermission:
		what = deniedWhat
	case storage.ErrChanged:
		what = "the blob changed since it was planned (If-Match failed): "
	}
	return &opError{Msg: fmt.Sprintf("azure: %s %s%s: %s%s", op, uri(ctr, key), detail, what, text), Kind: kind, Err: err}
}

// bucketError is objectError for requests about a container (List).
func (b *Bucket) bucketError(ctx context.Context, op, ctr, prefix string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	kind, text := classify(err)
	what := ""
	switch kind {
	case storage.ErrUnavailable:
		what = ranged.UnavailableWhat
	case errContainerMissing, fs.ErrNotExist:
		kind, what = fs.ErrNotExist, fmt.Sprintf("container %q does not exist: ", ctr)
	case fs.ErrPermission:
		what = deniedWhat
	}
	return &opError{Msg: fmt.Sprintf("azure: %s %s: %s%s", op, prefix, what, text), Kind: kind, Err: err}
}

// probe lists at most one blob of the container and returns the kind of
// the answer's error (nil when the listing worked).
func (b *Bucket) probe(ctx context.Context, ctr, key string) error {
	one := int32(1)
	pages := b.client.NewContainerClient(ctr).NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &key, MaxResults: &one})
	_, err := pages.NextPage(ctx)
	if err == nil {
		return nil
	}
	kind, _ := classify(err)
	return kind
}
