package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scand/scand/storage"
)

// resumable is a GET that failed after the SDK handed over the response,
// or that stalled: the SDK does not retry those, read does. msg is fit for
// a message (no addresses); err is the cause.
type resumable struct {
	msg string
	err error
}

func (r *resumable) Error() string { return r.msg }
func (r *resumable) Unwrap() error { return r.err }

// read fills d's spans with the bytes of d's range, which all exist as far
// as Open knew.
//
// The SDK retries a request until its response headers arrive; a body
// that breaks off afterwards (connection reset, a proxy closing the
// connection, a stall) comes back from Read and the SDK does not retry it.
// read does: it issues a new ranged GET for the bytes still missing, with
// the same If-Match, so that the retried bytes are the same version. It
// gives up after MaxAttempts GETs in a row that delivered nothing, or
// 3*MaxAttempts failed GETs in all, so a connection that always breaks
// after a little progress still ends.
func (o *object) read(ctx context.Context, d *dest) (int64, error) {
	var done int64
	failed, stuck := 0, 0
	for {
		start := time.Now()
		n, err := o.get(ctx, d, d.off+done)
		done += n
		if err == nil {
			return done, nil
		}
		var r *resumable
		if !errors.As(err, &r) {
			return done, err
		}
		o.b.done(OpRetry, start, int64(n), r)
		failed++
		if n > 0 {
			stuck = 0
		} else {
			stuck++
		}
		if stuck >= o.b.maxAttempts || failed >= 3*o.b.maxAttempts {
			return done, &opError{
				Msg: fmt.Sprintf("s3: read %s bytes %d-%d: %sgave up after %d failed GETs (%d of %d bytes read), the last: %s",
					o.info.Name, d.off, d.end-1, unavailableWhat, failed, done, d.end-d.off, r.msg),
				Kind: storage.ErrUnavailable,
				Err:  r.err,
			}
		}
		if err := sleep(ctx, o.b.backoff(failed)); err != nil {
			return done, err
		}
	}
}

// backoff is the wait before the retry after the n-th failure: exponential
// from 50 ms with full jitter in its upper half, capped at MaxBackoff.
func (b *Bucket) backoff(n int) time.Duration {
	d := b.maxBackoff
	if n < 20 {
		d = min(d, 50*time.Millisecond<<(n-1))
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// dest is where the bytes of a range [off, end) go: into the spans the
// caller keeps, and, for the gaps between spans, into scratch, which is
// overwritten and so discards them as they arrive.
type dest struct {
	spans    []storage.Span // in order, inside [off, end)
	off, end int64
	scratch  []byte
}

// scratchSize is the buffer gap bytes are read into and dropped from.
const scratchSize = 64 << 10

func oneSpan(p []byte, off int64) *dest {
	return &dest{spans: []storage.Span{{Off: off, Buf: p}}, off: off, end: off + int64(len(p))}
}

// window returns the buffer for the bytes from pos on: the rest of the
// span that holds pos, or scratch up to the next span.
func (d *dest) window(pos int64) []byte {
	i := sort.Search(len(d.spans), func(i int) bool { return d.spans[i].Off+int64(len(d.spans[i].Buf)) > pos })
	if i < len(d.spans) && d.spans[i].Off <= pos {
		return d.spans[i].Buf[pos-d.spans[i].Off:]
	}
	next := d.end
	if i < len(d.spans) {
		next = d.spans[i].Off
	}
	if d.scratch == nil {
		d.scratch = make([]byte, scratchSize)
	}
	return d.scratch[:min(int64(len(d.scratch)), next-pos)]
}

// get is one ranged GET of d's bytes from pos to its end. It returns how
// many bytes arrived, and a *resumable error when the rest is worth
// another GET.
//
// A watchdog cancels the GET when no bytes, of headers or body, arrive
// for StallTimeout: without it a connection that goes silent (a dead peer,
// a full proxy) would hold the read until the caller's deadline.
func (o *object) get(ctx context.Context, d *dest, off int64) (n int64, err error) {
	attemptCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stalled atomic.Bool
	watchdog := time.AfterFunc(o.b.stallTimeout, func() {
		stalled.Store(true)
		cancel()
	})
	defer watchdog.Stop()
	stall := func() error {
		return &resumable{msg: fmt.Sprintf("no data for %v", o.b.stallTimeout), err: os.ErrDeadlineExceeded}
	}

	end := d.end - 1
	want := d.end - off
	in := &awss3.GetObjectInput{
		Bucket: &o.bucket,
		Key:    &o.key,
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", off, end)),
	}
	if o.etag != "" {
		in.IfMatch = &o.etag
	}
	out, err := o.b.client.GetObject(attemptCtx, in)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return 0, ctx.Err()
		case stalled.Load():
			return 0, stall()
		}
		return 0, o.b.objectError(ctx, "read", o.bucket, o.key, fmt.Sprintf(" bytes %d-%d", off, end), err)
	}
	defer out.Body.Close()
	if err := o.checkResponse(out, off, end); err != nil {
		return 0, err
	}
	for n < want {
		watchdog.Reset(o.b.stallTimeout)
		m, err := out.Body.Read(d.window(off + n))
		n += int64(m)
		switch {
		case err == nil:
		case err == io.EOF && n == want:
		case ctx.Err() != nil:
			return n, ctx.Err()
		case stalled.Load():
			return n, stall()
		default:
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, &resumable{msg: fmt.Sprintf("body broke off after %d of %d bytes: %s", n, want, errText(err)), err: err}
		}
	}
	return n, nil
}

// checkResponse makes sure a GET answered the range asked for, of the
// version planned. The ETag and size checks back up If-Match for stores
// that ignore it.
func (o *object) checkResponse(out *awss3.GetObjectOutput, off, end int64) error {
	name := o.info.Name
	if got := version(aws.ToString(out.ETag)); o.etag != "" && got != "" && got != version(o.etag) {
		return fmt.Errorf("s3: read %s: version %s, planned %s: %w", name, got, version(o.etag), storage.ErrChanged)
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
