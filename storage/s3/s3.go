package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/internal/objname"
	"github.com/scand/scand/storage/internal/ranged"
)

// Operation names passed to Config.Observe. They are meant as metric label
// values: keep them stable.
const (
	OpStat  = "stat"  // one Stat: a HEAD request
	OpOpen  = "open"  // one Open: a HEAD request
	OpList  = "list"  // one page of a List: a ListObjectsV2 request
	OpRead  = "read"  // one ReadAt that sends GETs, its retries included
	OpRetry = "retry" // one ranged GET that failed mid-read and is retried
)

// Defaults for the zero values of Config.
const (
	DefaultMaxAttempts  = 5
	DefaultMaxBackoff   = 5 * time.Second
	DefaultStallTimeout = 30 * time.Second
	// defaultRegion is used with an Endpoint and no region: S3-compatible
	// stores accept any region, but SigV4 needs one.
	defaultRegion = "us-east-1"
	// maxIdleConnsPerHost is the idle connections kept per endpoint: at
	// least the requests a server runs at once (see New).
	maxIdleConnsPerHost = 256
)

// Observer is told about each operation when it ends: its name (one of the
// Op constants), the bytes it delivered to the caller (reads only), how long
// it took and its error (nil on success; a cancelled caller shows as
// context.Canceled). It is called concurrently and must not block.
type Observer func(op string, bytes int64, d time.Duration, err error)

// Config says how to reach S3 or an S3-compatible store. The zero value
// uses AWS S3 with the standard credential chain and the region from the
// environment or the shared config.
type Config struct {
	// Endpoint is the base URL of an S3-compatible store, such as
	// "http://127.0.0.1:7070". Empty means AWS S3 in Region.
	Endpoint string
	// Region signs requests and, for AWS, picks the endpoint. Empty means
	// the standard chain (AWS_REGION, the shared config), and "us-east-1"
	// when Endpoint is set and the chain has none.
	Region string
	// AccessKey and SecretKey, when set, are static credentials (with
	// SessionToken for temporary ones). When empty, the standard chain
	// applies: environment, shared config and credentials files, web
	// identity (IRSA), ECS and EC2 instance roles.
	AccessKey, SecretKey, SessionToken string
	// Anonymous sends unsigned requests, for public buckets.
	Anonymous bool
	// PathStyle addresses buckets as endpoint/bucket/key instead of
	// bucket.endpoint/key; most S3-compatible stores need it.
	PathStyle bool
	// MaxAttempts bounds the attempts of each request, the first included:
	// the SDK's retries of throttling (503 SlowDown), 5xx and connection
	// errors, and this package's retries of GETs whose body fails or stalls
	// mid-transfer. Zero means DefaultMaxAttempts.
	MaxAttempts int
	// MaxBackoff caps the wait between attempts. Zero means
	// DefaultMaxBackoff.
	MaxBackoff time.Duration
	// StallTimeout abandons and retries a request that receives no bytes
	// for this long: a GET, of headers or body; other requests, of
	// headers. Zero means DefaultStallTimeout.
	StallTimeout time.Duration
	// ListPageSize is the MaxKeys of each ListObjectsV2 request. Zero
	// means the store's default (1000 on S3).
	ListPageSize int32
	// Observe, when set, is told about every operation (see Observer).
	Observe Observer
	// WrapTransport, when set, wraps the HTTP transport, for metrics by
	// status code or tracing. It sees every attempt, retries included.
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// Bucket reads objects named by "s3://bucket/key" URIs, from any bucket the
// credentials reach. It is a storage.Bucket, safe for concurrent use.
type Bucket struct {
	client   *awss3.Client
	policy   ranged.Policy
	pageSize int32
	observe  Observer
}

var _ storage.Bucket = (*Bucket)(nil)

// New returns a Bucket for cfg. It resolves the configuration and
// credential sources but sends no request: a wrong endpoint or credentials
// show on the first operation.
func New(ctx context.Context, cfg Config) (*Bucket, error) {
	if (cfg.AccessKey == "") != (cfg.SecretKey == "") {
		return nil, errors.New("s3: an access key needs a secret key and the other way round")
	}
	if cfg.Anonymous && cfg.AccessKey != "" {
		return nil, errors.New("s3: anonymous access and static keys are exclusive")
	}
	if cfg.MaxAttempts < 0 || cfg.MaxBackoff < 0 || cfg.StallTimeout < 0 || cfg.ListPageSize < 0 {
		return nil, errors.New("s3: negative MaxAttempts, MaxBackoff, StallTimeout or ListPageSize")
	}
	b := &Bucket{
		policy: ranged.Policy{
			MaxAttempts:  orDefault(cfg.MaxAttempts, DefaultMaxAttempts),
			MaxBackoff:   orDefault(cfg.MaxBackoff, DefaultMaxBackoff),
			StallTimeout: orDefault(cfg.StallTimeout, DefaultStallTimeout),
		},
		pageSize: cfg.ListPageSize,
		observe:  cfg.Observe,
	}
	b.policy.OnRetry = func(n int64, d time.Duration, err error) {
		if b.observe != nil {
			b.observe(OpRetry, n, d, err)
		}
	}

	var opts []func(*config.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	switch {
	case cfg.Anonymous:
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	case cfg.AccessKey != "":
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		// The message names a config file or setting, never a secret.
		return nil, fmt.Errorf("s3: load AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		if cfg.Endpoint == "" {
			return nil, errors.New("s3: no region: set one in the config or AWS_REGION")
		}
		awsCfg.Region = defaultRegion
	}

	// Our own http.Client rather than the SDK's BuildableClient, so that
	// WrapTransport sees the real transport. The SDK's per-connection read
	// timeout is left out: the stall watchdog in get does that job for
	// GETs, and retries. ResponseHeaderTimeout does it for the other
	// requests, whose answers are small: the SDK retries its timeout
	// error. Redirects are not followed, as the SDK expects.
	tr := awshttp.NewBuildableClient().GetTransport()
	tr.ResponseHeaderTimeout = b.policy.StallTimeout
	// The SDK keeps 10 idle connections per host; a server runs many more
	// GETs at once on one endpoint (--io-concurrency, 64 by default with
	// S3: footers while planning, files ahead). Past 10 every burst would
	// close its extra connections and open them again, each a TCP and TLS
	// handshake (round trips) before its first byte.
	tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, maxIdleConnsPerHost)
	tr.MaxIdleConns = max(tr.MaxIdleConns, maxIdleConnsPerHost)
	var transport http.RoundTripper = tr
	if cfg.WrapTransport != nil {
		transport = cfg.WrapTransport(transport)
	}
	httpClient := &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	b.client = awss3.NewFromConfig(awsCfg, func(o *awss3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		o.HTTPClient = httpClient
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = b.policy.MaxAttempts
			so.MaxBackoff = b.policy.MaxBackoff
		})
		// Ranged GETs carry no whole-object checksum to validate, and we
		// upload nothing: skip the SDK's checksum work and its warnings.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return b, nil
}

func orDefault[T int | int32 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func (b *Bucket) done(op string, start time.Time, n int64, err error) {
	if b.observe != nil {
		b.observe(op, n, time.Since(start), err)
	}
}

// Canonical implements storage.Bucket: an s3:// URI has one spelling.
func (b *Bucket) Canonical(name string) (string, error) { return name, nil }

// Stat implements storage.Bucket with a HEAD request.
func (b *Bucket) Stat(ctx context.Context, name string) (info storage.Info, err error) {
	defer func(start time.Time) { b.done(OpStat, start, 0, err) }(time.Now())
	bucket, key, err := parseName(name)
	if err != nil {
		return storage.Info{}, err
	}
	info, _, err = b.head(ctx, "stat", bucket, key)
	return info, err
}

// head returns the object's Info and its ETag as the store sent it.
func (b *Bucket) head(ctx context.Context, op, bucket, key string) (storage.Info, string, error) {
	out, err := b.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return storage.Info{}, "", b.objectError(ctx, op, bucket, key, "", err)
	}
	etag := aws.ToString(out.ETag)
	return storage.Info{
		Name:    uri(bucket, key),
		Size:    aws.ToInt64(out.ContentLength),
		Version: version(etag),
		ModTime: aws.ToTime(out.LastModified),
	}, etag, nil
}

// Open implements storage.Bucket. When info carries the size and version
// (an ETag) of a listing or a ticket, Open sends nothing: every GET of the
// handle carries that ETag as If-Match, so a replaced or deleted object
// fails the first read with ErrChanged or NotFound. When it carries the
// size alone (a table's metadata records data files' sizes, not their
// ETags), Open sends nothing either: the first GET's response pins the
// version (Info reports it from then on), later GETs carry it as
// If-Match, and a size other than the one given fails that GET with
// ErrChanged. A footer then costs one ranged GET instead of a HEAD and
// a GET. Otherwise Open sends one HEAD to learn them, and fails early
// with ErrChanged when the object is no longer the planned version.
func (b *Bucket) Open(ctx context.Context, info storage.Info) (_ storage.Object, err error) {
	defer func(start time.Time) { b.done(OpOpen, start, 0, err) }(time.Now())
	bucket, key, err := parseName(info.Name)
	if err != nil {
		return nil, err
	}
	if info.Size > 0 {
		info.Name = uri(bucket, key)
		o := &object{b: b, bucket: bucket, key: key, info: info}
		if info.Version != "" {
			o.etag.Store(ptr(`"` + info.Version + `"`))
		}
		return o, nil
	}
	got, etag, err := b.head(ctx, "open", bucket, key)
	if err != nil {
		return nil, err
	}
	if info.Version != "" && got.Version != info.Version {
		return nil, fmt.Errorf("s3: open %s: version %s, planned %s: %w", info.Name, got.Version, info.Version, storage.ErrChanged)
	}
	o := &object{b: b, bucket: bucket, key: key, info: got}
	if etag != "" {
		o.etag.Store(&etag)
	}
	return o, nil
}

func ptr(s string) *string { return &s }

// List implements storage.Bucket with ListObjectsV2, a page at a time.
// prefix is "s3://bucket/key-prefix" ("s3://bucket" or "s3://bucket/"
// lists the whole bucket). S3 returns keys in UTF-8 byte order, which is Go
// string order. Keys ending in "/" (directory markers) and keys this
// package refuses to open (see parseName) are skipped.
func (b *Bucket) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return b.ListPruned(ctx, prefix, storage.Pruning{}, fn)
}

// ListPruned implements storage.Bucket. S3 lists flat, with the keys'
// sizes and ETags, so pruning costs no request and saves none: p is
// applied to each listed key (storage.Pruning.Wants).
func (b *Bucket) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	bucket, keyPrefix, err := parsePrefix(prefix)
	if err != nil {
		return err
	}
	in := &awss3.ListObjectsV2Input{Bucket: &bucket}
	if keyPrefix != "" {
		in.Prefix = &keyPrefix
	}
	if b.pageSize > 0 {
		in.MaxKeys = aws.Int32(b.pageSize)
	}
	pages := awss3.NewListObjectsV2Paginator(b.client, in)
	last := ""
	for pages.HasMorePages() {
		start := time.Now()
		page, err := pages.NextPage(ctx)
		if err != nil {
			err = b.bucketError(ctx, "list", bucket, prefix, err)
		}
		b.done(OpList, start, 0, err)
		if err != nil {
			return err
		}
		for _, obj := range page.Contents {
			if err := ctx.Err(); err != nil {
				return err
			}
			key := aws.ToString(obj.Key)
			if key <= last {
				// A store that breaks S3's ordering would make Expand
				// return unsorted or duplicate files: refuse it loudly.
				return fmt.Errorf("s3: list %s: the store returned key %q after %q, out of order", prefix, key, last)
			}
			last = key
			if strings.HasSuffix(key, "/") || objname.CheckKey(key) != nil {
				continue
			}
			name := uri(bucket, key)
			if !p.Wants(prefix, name) {
				continue
			}
			err := fn(storage.Info{
				Name:    name,
				Size:    aws.ToInt64(obj.Size),
				Version: version(aws.ToString(obj.ETag)),
				ModTime: aws.ToTime(obj.LastModified),
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// version is an ETag as Info.Version: without the quotes, which S3 sends
// in some responses and some S3-compatible stores omit in others.
func version(etag string) string {
	return strings.Trim(etag, `"`)
}

var _ storage.Object = (*object)(nil)

// object is an open S3 object. Its fields are set by Open and never
// written again, but for etag, which the first response sets when Open
// did not know it; so ReadAt may run concurrently.
type object struct {
	b           *Bucket
	bucket, key string
	// etag is the version reads are pinned to, as the store sent it, for
	// If-Match: nil until known (Open was given no version and no GET has
	// answered yet), or "" if the store sends none.
	etag   atomic.Pointer[string]
	info   storage.Info
	closed atomic.Bool
}

// pinned is the ETag reads carry as If-Match, "" for none (yet).
func (o *object) pinned() string {
	if e := o.etag.Load(); e != nil {
		return *e
	}
	return ""
}

// Info implements storage.Object: the version is the one reads are
// pinned to, empty until the first GET when Open was given none.
func (o *object) Info() storage.Info {
	info := o.info
	if e := o.etag.Load(); e != nil {
		info.Version = version(*e)
	}
	return info
}

// Close implements storage.Object. An object holds no connection between
// reads, so Close only marks it closed.
func (o *object) Close() error {
	if o.closed.Swap(true) {
		return fmt.Errorf("s3: close %s: %w", o.info.Name, fs.ErrClosed)
	}
	return nil
}

// ReadAt implements storage.Object with ranged GETs. Reads past the end
// are clamped to the size Open saw, so the GET asks only for bytes that
// exist and the short read is reported as io.ErrUnexpectedEOF.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.closed.Load() {
		return fmt.Errorf("s3: read %s: %w", o.info.Name, fs.ErrClosed)
	}
	if off < 0 {
		return fmt.Errorf("s3: read %s at %d: negative offset: %w", o.info.Name, off, fs.ErrInvalid)
	}
	if len(p) == 0 {
		return nil
	}
	if off >= o.info.Size {
		return io.EOF
	}
	want := p
	if rest := o.info.Size - off; int64(len(p)) > rest {
		want = p[:rest]
	}
	var n int64
	defer func(start time.Time) { o.b.done(OpRead, start, n, err) }(time.Now())
	n, err = o.read(ctx, ranged.OneSpan(want, off))
	if err != nil {
		return err
	}
	if len(want) < len(p) {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// Capabilities implements storage.Object: ranged GETs read spans.
func (o *object) Capabilities() storage.Capabilities {
	return storage.Capabilities{SpanReads: true}
}

// Recheck implements storage.Object. Every GET carries the planned ETag
// as If-Match, so no read can return another version: nothing to check.
func (o *object) Recheck(ctx context.Context) error { return ctx.Err() }

// ReadSpans implements storage.Object: one ranged GET from the first
// span to the end of the last, the bytes between spans dropped as they
// arrive (retries resume where the body broke off, as for ReadAt).
func (o *object) ReadSpans(ctx context.Context, spans []storage.Span) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.closed.Load() {
		return fmt.Errorf("s3: read %s: %w", o.info.Name, fs.ErrClosed)
	}
	d, err := storage.SpanRange(spans)
	if err != nil {
		return fmt.Errorf("s3: read %s: %w", o.info.Name, err)
	}
	if d.End > o.info.Size {
		return io.ErrUnexpectedEOF
	}
	if d.End == d.Off {
		return nil
	}
	var n int64
	defer func(start time.Time) { o.b.done(OpRead, start, n, err) }(time.Now())
	n, err = o.read(ctx, &ranged.Dest{Spans: spans, Off: d.Off, End: d.End})
	return err
}
