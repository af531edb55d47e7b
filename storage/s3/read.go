package s3

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/internal/ranged"
)

// read fills d's spans with the bytes of d's range, which all exist as far
// as the Stat knew.
//
// The SDK retries a request until its response headers arrive; a body
// that breaks off afterwards (connection reset, a proxy closing the
// connection, a stall) comes back from Read and the SDK does not retry it.
// ranged.Read does, as for every object store: a new ranged GET for the
// bytes still missing, with the same If-Match, so that the retried bytes
// are the same version, bounded by the Bucket's policy.
func (o *object) read(ctx context.Context, d *ranged.Dest) (int64, error) {
	return ranged.Read(ctx, "s3: read "+o.info.Name, d, o.b.policy, o.open)
}

// open is ranged.Open for this object: one ranged GET of [off, end),
// pinned to the planned version, its response checked before the body is
// read.
func (o *object) open(ctx context.Context, off, end int64) (io.ReadCloser, error) {
	last := end - 1
	in := &awss3.GetObjectInput{
		Bucket: &o.bucket,
		Key:    &o.key,
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", off, last)),
	}
	if etag := o.pinned(); etag != "" {
		in.IfMatch = &etag
	}
	out, err := o.b.client.GetObject(ctx, in)
	if err != nil {
		return nil, o.b.objectError(ctx, "read", o.bucket, o.key, fmt.Sprintf(" bytes %d-%d", off, last), err)
	}
	if err := o.checkResponse(out, off, last); err != nil {
		out.Body.Close()
		return nil, err
	}
	return out.Body, nil
}

// checkResponse makes sure a GET answered the range asked for, of the
// version planned. The ETag and size checks back up If-Match for stores
// that ignore it.
func (o *object) checkResponse(out *awss3.GetObjectOutput, off, end int64) error {
	name := o.info.Name
	if o.etag.Load() == nil {
		// Open was given no version: the first response pins it. Of two
		// first GETs racing, the one that loses compares below.
		o.etag.CompareAndSwap(nil, ptr(aws.ToString(out.ETag)))
	}
	if got, pinned := version(aws.ToString(out.ETag)), o.pinned(); pinned != "" && got != "" && got != version(pinned) {
		return fmt.Errorf("s3: read %s: version %s, planned %s: %w", name, got, version(pinned), storage.ErrChanged)
	}
	cr := aws.ToString(out.ContentRange)
	if cr == "" {
		// A 200 instead of a 206: the store ignored Range and sends the
		// whole object, which is only what we asked for if we asked for
		// all of it.
		if off != 0 || aws.ToInt64(out.ContentLength) != end+1 {
			return fmt.Errorf("s3: read %s bytes %d-%d: the store ignored the Range header", name, off, end)
		}
		return nil
	}
	var first, last, total int64
	if _, err := fmt.Sscanf(cr, "bytes %d-%d/%d", &first, &last, &total); err == nil {
		if total != o.info.Size {
			return fmt.Errorf("s3: read %s: size %d, planned %d: %w", name, total, o.info.Size, storage.ErrChanged)
		}
	} else if _, err := fmt.Sscanf(cr, "bytes %d-%d/*", &first, &last); err != nil {
		return fmt.Errorf("s3: read %s bytes %d-%d: unreadable Content-Range %q", name, off, end, cr)
	}
	if first != off || last != end {
		return fmt.Errorf("s3: read %s bytes %d-%d: the store sent bytes %d-%d", name, off, end, first, last)
	}
	return nil
}
