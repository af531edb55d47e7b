// Package ranged is the ranged-read loop the object store backends of
// package storage share (s3, gcs, azure): one request per range, whose body
// is read into the caller's spans with the bytes between spans dropped as
// they arrive, resumed with a new request where a body breaks off or
// stalls, bounded in attempts, and giving up with storage.ErrUnavailable.
//
// The SDKs retry a request until its response headers arrive; what breaks
// afterwards (a reset mid-body, a proxy closing the connection, a peer
// that goes silent) comes back from the body's Read. Read handles those,
// so every backend resumes the same way and says the same thing when it
// gives up.
package ranged

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"sync/atomic"
	"time"

	"github.com/scand/scand/storage"
)

// Dest is where the bytes of a range [Off, End) go: into the spans the
// caller keeps and, for the gaps between spans, into a scratch buffer that
// is overwritten and so drops them.
type Dest struct {
	Spans    []storage.Span // in order, inside [Off, End)
	Off, End int64
	scratch  []byte
}

// scratchSize is the buffer gap bytes are read into and dropped from.
const scratchSize = 64 << 10

// OneSpan is the Dest of a plain ReadAt.
func OneSpan(p []byte, off int64) *Dest {
	return &Dest{Spans: []storage.Span{{Off: off, Buf: p}}, Off: off, End: off + int64(len(p))}
}

// window returns the buffer for the bytes from pos on: the rest of the
// span that holds pos, or scratch up to the next span.
func (d *Dest) window(pos int64) []byte {
	i := sort.Search(len(d.Spans), func(i int) bool { return d.Spans[i].Off+int64(len(d.Spans[i].Buf)) > pos })
	if i < len(d.Spans) && d.Spans[i].Off <= pos {
		return d.Spans[i].Buf[pos-d.Spans[i].Off:]
	}
	next := d.End
	if i < len(d.Spans) {
		next = d.Spans[i].Off
	}
	if d.scratch == nil {
		d.scratch = make([]byte, scratchSize)
	}
	return d.scratch[:min(int64(len(d.scratch)), next-pos)]
}

// Open starts one ranged request for the bytes [off, end) of the object
// and returns its body, checked to be those bytes of the planned version.
// Its error ends the read as it is (the SDK has retried what it retries),
// unless ctx was cancelled by the stall watchdog.
type Open func(ctx context.Context, off, end int64) (io.ReadCloser, error)

// Policy bounds a Read.
type Policy struct {
	// MaxAttempts: Read gives up after this many requests in a row that
	// delivered nothing, or 3*MaxAttempts failed requests in all.
	MaxAttempts int
	// MaxBackoff caps the wait between attempts.
	MaxBackoff time.Duration
	// StallTimeout abandons a request that receives nothing, headers or
	// body, for this long.
	StallTimeout time.Duration
	// OnRetry, when set, is told about each failed request that is retried:
	// the bytes it delivered, how long it ran and why it failed.
	OnRetry func(n int64, d time.Duration, err error)
}

// UnavailableWhat is the part of a message that says the store could not
// be reached, and what to do.
const UnavailableWhat = "storage unreachable after retries (try again later): "

// resumable is a request whose body failed or stalled: worth another one.
type resumable struct {
	msg string
	err error
}

func (r *resumable) Error() string { return r.msg }
func (r *resumable) Unwrap() error { return r.err }

// gaveUp is Read's error when the retries are spent: it wraps
// storage.ErrUnavailable and the last cause.
type gaveUp struct {
	msg string
	err error
}

func (g *gaveUp) Error() string   { return g.msg }
func (g *gaveUp) Unwrap() []error { return []error{storage.ErrUnavailable, g.err} }

// Read fills d's spans with the bytes of d's range, which all exist as far
// as Open knew, and returns how many bytes arrived. A cancelled ctx
// returns ctx.Err() unwrapped. When the retries are spent the error wraps
// storage.ErrUnavailable and says what happened, without addresses, after
// what ("gcs: read gs://bucket/key").
func Read(ctx context.Context, what string, d *Dest, p Policy, open Open) (int64, error) {
	var done int64
	failed, stuck := 0, 0
	for {
		start := time.Now()
		n, err := get(ctx, d, d.Off+done, p.StallTimeout, open)
		done += n
		if err == nil {
			return done, nil
		}
		var r *resumable
		if !errors.As(err, &r) {
			return done, err
		}
		if p.OnRetry != nil {
			p.OnRetry(n, time.Since(start), r)
		}
		failed++
		if n > 0 {
			stuck = 0
		} else {
			stuck++
		}
		if stuck >= p.MaxAttempts || failed >= 3*p.MaxAttempts {
			return done, &gaveUp{
				msg: fmt.Sprintf("%s bytes %d-%d: %sgave up after %d failed requests (%d of %d bytes read), the last: %s",
					what, d.Off, d.End-1, UnavailableWhat, failed, done, d.End-d.Off, r.msg),
				err: r.err,
			}
		}
		if err := Sleep(ctx, Backoff(failed, p.MaxBackoff)); err != nil {
			return done, err
		}
	}
}

// get is one request for d's bytes from off to its end.
func get(ctx context.Context, d *Dest, off int64, stallTimeout time.Duration, open Open) (n int64, err error) {
	attemptCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stalled atomic.Bool
	watchdog := time.AfterFunc(stallTimeout, func() {
		stalled.Store(true)
		cancel()
	})
	defer watchdog.Stop()
	stall := func() error {
		return &resumable{msg: fmt.Sprintf("no data for %v", stallTimeout), err: os.ErrDeadlineExceeded}
	}
	body, err := open(attemptCtx, off, d.End)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return 0, ctx.Err()
		case stalled.Load():
			return 0, stall()
		}
		return 0, err
	}
	defer body.Close()
	want := d.End - off
	for n < want {
		watchdog.Reset(stallTimeout)
		m, err := body.Read(d.window(off + n))
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
			return n, &resumable{msg: fmt.Sprintf("body broke off after %d of %d bytes: %s", n, want, ErrText(err)), err: err}
		}
	}
	return n, nil
}

// Backoff is the wait before the retry after the n-th failure: exponential
// from 50 ms with full jitter in its upper half, capped at maxBackoff.
func Backoff(n int, maxBackoff time.Duration) time.Duration {
	d := maxBackoff
	if n < 20 {
		d = min(d, 50*time.Millisecond<<(n-1))
	}
	return d/2 + rand.N(d/2+1)
}

// Sleep waits d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Unreachable reports a transport failure: the store could not be reached
// or stopped answering (refused, reset, timed out, a body cut short). By
// the time it reaches a caller the SDK's retries are spent.
func Unreachable(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, errConnReset) || errors.Is(err, errConnRefused)
}

// ErrText is the text of a transport error without the request URL or the
// addresses of the connection.
func ErrText(err error) string {
	var ue *url.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &oe):
		// "read tcp 10.0.0.1:5->10.0.0.2:7070: read: connection reset by
		// peer" becomes "read tcp: read: connection reset by peer".
		return SafeText(fmt.Sprintf("%s %s: %v", oe.Op, oe.Net, oe.Err))
	case errors.As(err, &ue):
		// url.Error's text holds the request URL: endpoint, bucket, key
		// and query. Keep only what went wrong.
		return SafeText(ue.Err.Error())
	}
	return SafeText(err.Error())
}

var urlPattern = regexp.MustCompile(`https?://[^\s"'<>]+`)

// SafeText blanks anything that looks like a URL: error texts from the
// SDKs and net/http may quote the endpoint, and SAS tokens travel in it.
func SafeText(s string) string {
	return urlPattern.ReplaceAllString(s, "<url>")
}
