package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	gcs "cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/internal/objname"
	"github.com/scand/scand/storage/internal/ranged"
)

// Scheme is the URI scheme of the names this package serves; register the
// Bucket under it: mux.Handle(gcs.Scheme, b).
const Scheme = "gs"

const schemePrefix = Scheme + "://"

// store names the backend in messages.
const store = "gcs"

// Operation names passed to Config.Observe. They are meant as metric label
// values: keep them stable.
const (
	OpStat  = "stat"  // one Stat: an objects.get (metadata) request
	OpOpen  = "open"  // one Open that asks the store: an objects.get request
	OpList  = "list"  // one page of a List: an objects.list request
	OpRead  = "read"  // one ReadAt or ReadSpans, its retries included
	OpRetry = "retry" // one ranged read that failed mid-body and is retried
)

// Defaults for the zero values of Config.
const (
	DefaultMaxAttempts  = 5
	DefaultMaxBackoff   = 5 * time.Second
	DefaultStallTimeout = 30 * time.Second
	// maxIdleConnsPerHost is the idle connections kept to the endpoint: at
	// least the requests a server runs at once.
	maxIdleConnsPerHost = 256
)

// Observer is told about each operation when it ends: its name (one of
// the Op constants), the bytes it delivered (reads only), how long it took
// and its error. It is called concurrently and must not block.
type Observer func(op string, bytes int64, d time.Duration, err error)

// Config says how to reach Google Cloud Storage or an emulator. The zero
// value reads Google Cloud Storage with Application Default Credentials,
// or the emulator named by STORAGE_EMULATOR_HOST when that is set.
type Config struct {
	// Endpoint is the JSON API's base URL, such as
	// "http://127.0.0.1:4443/storage/v1/". Empty means Google's, or
	// STORAGE_EMULATOR_HOST's when set (which also turns authentication
	// off, as the SDK does).
	Endpoint string
	// CredentialsFile is a service account key (JSON). Empty means
	// Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS, the
	// gcloud user's, or the metadata server (GKE Workload Identity, GCE).
	CredentialsFile string
	// Anonymous sends unauthenticated requests, for public buckets.
	Anonymous bool
	// MaxAttempts bounds the attempts of each request, the first
	// included: the SDK's retries (429, 5xx, connection errors) and this
	// package's retries of reads whose body fails or stalls. Zero means
	// DefaultMaxAttempts.
	MaxAttempts int
	// MaxBackoff caps the wait between attempts. Zero means
	// DefaultMaxBackoff.
	MaxBackoff time.Duration
	// StallTimeout abandons and retries a read that receives no bytes for
	// this long. Zero means DefaultStallTimeout.
	StallTimeout time.Duration
	// ListPageSize is the maxResults of each objects.list request. Zero
	// means the store's default (1000).
	ListPageSize int
	// Observe, when set, is told about every operation (see Observer).
	Observe Observer
}

// Bucket reads objects named by "gs://bucket/key" URIs, from any bucket
// the credentials reach. It is a storage.Bucket, safe for concurrent use.
type Bucket struct {
	client   *gcs.Client
	policy   ranged.Policy
	pageSize int
	observe  Observer
}

var _ storage.Bucket = (*Bucket)(nil)

// New returns a Bucket for cfg. It finds the credentials but sends no
// request: a wrong endpoint or credentials show on the first operation.
func New(ctx context.Context, cfg Config) (*Bucket, error) {
	if cfg.Anonymous && cfg.CredentialsFile != "" {
		return nil, errors.New("gcs: anonymous access and a credentials file are exclusive")
	}
	if cfg.MaxAttempts < 0 || cfg.MaxBackoff < 0 || cfg.StallTimeout < 0 || cfg.ListPageSize < 0 {
		return nil, errors.New("gcs: negative MaxAttempts, MaxBackoff, StallTimeout or ListPageSize")
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
	opts := []option.ClientOption{
		// JSON API reads: the generation precondition travels as
		// ifGenerationMatch, and emulators (fake-gcs-server) serve them.
		gcs.WithJSONReads(),
		// The SDK would otherwise export its own client metrics to Cloud
		// Monitoring; scand's are in Prometheus.
		gcs.WithDisabledClientMetrics(),
	}
	if cfg.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(cfg.Endpoint))
	}
	hc, err := httpClient(ctx, cfg, b.policy.StallTimeout)
	if err != nil {
		return nil, fmt.Errorf("gcs: %s", ranged.SafeText(err.Error()))
	}
	opts = append(opts, option.WithHTTPClient(hc))
	client, err := gcs.NewClient(ctx, opts...)
	if err != nil {
		// The message names a file or setting, never a secret.
		return nil, fmt.Errorf("gcs: %s", ranged.SafeText(err.Error()))
	}
	// The SDK retries until the ctx ends unless told otherwise: bound it,
	// so an outage fails with ErrUnavailable while the client still waits.
	client.SetRetry(
		gcs.WithMaxAttempts(b.policy.MaxAttempts),
		gcs.WithBackoff(gax.Backoff{Initial: 50 * time.Millisecond, Max: b.policy.MaxBackoff, Multiplier: 2}),
	)
	b.client = client
	return b, nil
}

// httpClient is the client's HTTP client: our own transport, with the
// credentials on top. The SDK's keeps 100 idle connections per host and no
// timeout for response headers: a metadata request or a listing on a
// connection that goes silent would hold planning until the caller's
// deadline, where ResponseHeaderTimeout fails the attempt and the SDK
// retries it.
func httpClient(ctx context.Context, cfg Config, stallTimeout time.Duration) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = maxIdleConnsPerHost
	tr.MaxIdleConns = maxIdleConnsPerHost
	tr.ResponseHeaderTimeout = stallTimeout
	if cfg.Anonymous || os.Getenv("STORAGE_EMULATOR_HOST") != "" {
		// Emulators take no credentials, as the SDK has it.
		return &http.Client{Transport: tr}, nil
	}
	auth := []option.ClientOption{option.WithScopes(gcs.ScopeReadOnly)}
	if cfg.CredentialsFile != "" {
		auth = append(auth, option.WithAuthCredentialsFile(option.ServiceAccount, cfg.CredentialsFile))
	}
	rt, err := htransport.NewTransport(ctx, tr, auth...)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt}, nil
}

// Close releases the client's connections.
func (b *Bucket) Close() error { return b.client.Close() }

func orDefault[T int | time.Duration](v, def T) T {
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

func uri(bucket, key string) string { return schemePrefix + bucket + "/" + key }

// Canonical implements storage.Bucket: a gs:// URI has one spelling.
func (b *Bucket) Canonical(name string) (string, error) { return name, nil }

// Stat implements storage.Bucket with a metadata request.
func (b *Bucket) Stat(ctx context.Context, name string) (info storage.Info, err error) {
	defer func(start time.Time) { b.done(OpStat, start, 0, err) }(time.Now())
	bucket, key, err := objname.Object(store, schemePrefix, name)
	if err != nil {
		return storage.Info{}, err
	}
	return b.attrs(ctx, "stat", bucket, key)
}

func (b *Bucket) attrs(ctx context.Context, op, bucket, key string) (storage.Info, error) {
	a, err := b.client.Bucket(bucket).Object(key).Attrs(ctx)
	if err != nil {
		return storage.Info{}, b.objectError(ctx, op, bucket, key, "", err)
	}
	return storage.Info{
		Name:    uri(bucket, key),
		Size:    a.Size,
		Version: strconv.FormatInt(a.Generation, 10),
		ModTime: a.Updated,
	}, nil
}

// Open implements storage.Bucket. When info carries the size and version
// (a generation) of a listing or a ticket, Open sends nothing: every read
// carries that generation as a precondition, so a replaced or deleted
// object fails the first read with ErrChanged or NotFound. Otherwise it
// asks for the object's metadata and fails early with ErrChanged when the
// object is no longer the planned version.
func (b *Bucket) Open(ctx context.Context, info storage.Info) (_ storage.Object, err error) {
	defer func(start time.Time) { b.done(OpOpen, start, 0, err) }(time.Now())
	bucket, key, err := objname.Object(store, schemePrefix, info.Name)
	if err != nil {
		return nil, err
	}
	if info.Version != "" && info.Size > 0 {
		gen, perr := strconv.ParseInt(info.Version, 10, 64)
		if perr != nil || gen <= 0 {
			// Not a generation: planned against another store, or forged.
			return nil, fmt.Errorf("gcs: open %s: version %q is not a generation: %w", info.Name, info.Version, storage.ErrChanged)
		}
		info.Name = uri(bucket, key)
		return b.newObject(bucket, key, gen, info), nil
	}
	got, err := b.attrs(ctx, "open", bucket, key)
	if err != nil {
		return nil, err
	}
	if info.Version != "" && got.Version != info.Version {
		return nil, fmt.Errorf("gcs: open %s: generation %s, planned %s: %w", info.Name, got.Version, info.Version, storage.ErrChanged)
	}
	gen, _ := strconv.ParseInt(got.Version, 10, 64)
	return b.newObject(bucket, key, gen, got), nil
}

func (b *Bucket) newObject(bucket, key string, gen int64, info storage.Info) *object {
	h := b.client.Bucket(bucket).Object(key)
	if gen > 0 {
		h = h.If(gcs.Conditions{GenerationMatch: gen})
	}
	return &object{b: b, h: h, bucket: bucket, key: key, gen: gen, info: info}
}

// List implements storage.Bucket.
func (b *Bucket) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return b.ListPruned(ctx, prefix, storage.Pruning{}, fn)
}

// ListPruned implements storage.Bucket with objects.list, a page at a
// time. GCS lists flat, with sizes and generations, and in lexical
// order of names, so p is applied to each listed name (storage.Pruning.Wants).
// Names ending in "/" (folder placeholders) and keys this package refuses
// to read are skipped.
func (b *Bucket) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	bucket, keyPrefix, err := objname.Prefix(store, schemePrefix, prefix)
	if err != nil {
		return err
	}
	q := &gcs.Query{Prefix: keyPrefix}
	if err := q.SetAttrSelection([]string{"Name", "Size", "Generation", "Updated"}); err != nil {
		return fmt.Errorf("gcs: list %s: %w", prefix, err)
	}
	it := b.client.Bucket(bucket).Objects(ctx, q)
	if b.pageSize > 0 {
		it.PageInfo().MaxSize = b.pageSize
	}
	last := ""
	for {
		start := time.Now()
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			err = b.bucketError(ctx, "list", bucket, prefix, err)
			b.done(OpList, start, 0, err)
			return err
		}
		if it.PageInfo().Remaining() == 0 {
			b.done(OpList, start, 0, nil) // the last item of a page
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if a.Name <= last {
			// A store that breaks the ordering would make Expand return
			// unsorted or duplicate files: refuse it loudly.
			return fmt.Errorf("gcs: list %s: the store returned %q after %q, out of order", prefix, a.Name, last)
		}
		last = a.Name
		if a.Name == "" || a.Name[len(a.Name)-1] == '/' || objname.CheckKey(a.Name) != nil {
			continue
		}
		name := uri(bucket, a.Name)
		if !p.Wants(prefix, name) {
			continue
		}
		if err := fn(storage.Info{
			Name:    name,
			Size:    a.Size,
			Version: strconv.FormatInt(a.Generation, 10),
			ModTime: a.Updated,
		}); err != nil {
			return err
		}
	}
}

var _ storage.Object = (*object)(nil)

// object is an open GCS object. Its fields are set by Open and never
// written again, so reads may run concurrently.
type object struct {
	b           *Bucket
	h           *gcs.ObjectHandle // with the generation precondition
	bucket, key string
	gen         int64
	info        storage.Info
	closed      atomic.Bool
}

// Info implements storage.Object.
func (o *object) Info() storage.Info { return o.info }

// Close implements storage.Object. An object holds no connection between
// reads, so Close only marks it closed.
func (o *object) Close() error {
	if o.closed.Swap(true) {
		return fmt.Errorf("gcs: close %s: %w", o.info.Name, fs.ErrClosed)
	}
	return nil
}

// Capabilities implements storage.Object: ranged reads read spans.
func (o *object) Capabilities() storage.Capabilities {
	return storage.Capabilities{SpanReads: true}
}

// Recheck implements storage.Object. Every read carries the generation as
// a precondition and checks the generation it was served: nothing to do.
func (o *object) Recheck(ctx context.Context) error { return ctx.Err() }

// ReadAt implements storage.Object with one ranged read. Reads past the
// end are clamped to the size Open saw, and reported as
// io.ErrUnexpectedEOF.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64) (err error) {
	if err := o.check(ctx); err != nil {
		return err
	}
	if off < 0 {
		return fmt.Errorf("gcs: read %s at %d: negative offset: %w", o.info.Name, off, fs.ErrInvalid)
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

// ReadSpans implements storage.Object: one ranged read from the first span
// to the end of the last, the bytes between spans dropped as they arrive.
func (o *object) ReadSpans(ctx context.Context, spans []storage.Span) (err error) {
	if err := o.check(ctx); err != nil {
		return err
	}
	d, err := storage.SpanRange(spans)
	if err != nil {
		return fmt.Errorf("gcs: read %s: %w", o.info.Name, err)
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

func (o *object) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.closed.Load() {
		return fmt.Errorf("gcs: read %s: %w", o.info.Name, fs.ErrClosed)
	}
	return nil
}

func (o *object) read(ctx context.Context, d *ranged.Dest) (int64, error) {
	return ranged.Read(ctx, "gcs: read "+o.info.Name, d, o.b.policy, o.open)
}

// open is ranged.Open for this object: one ranged read, with the
// generation precondition, whose response must be the planned generation
// and size (the backup of the precondition, for stores that ignore it).
func (o *object) open(ctx context.Context, off, end int64) (io.ReadCloser, error) {
	r, err := o.h.NewRangeReader(ctx, off, end-off)
	if err != nil {
		return nil, o.b.objectError(ctx, "read", o.bucket, o.key, fmt.Sprintf(" bytes %d-%d", off, end-1), err)
	}
	name := o.info.Name
	switch {
	case r.Attrs.Decompressed:
		// Ranged reads of a gzip-encoded object are served whole and
		// decompressed: no offset in it means what the file's footer says.
		r.Close()
		return nil, fmt.Errorf("gcs: read %s: the object is stored with Content-Encoding gzip; store columnar files without it: %w", name, fs.ErrInvalid)
	case o.gen > 0 && r.Attrs.Generation != 0 && r.Attrs.Generation != o.gen:
		r.Close()
		return nil, fmt.Errorf("gcs: read %s: generation %d, planned %d: %w", name, r.Attrs.Generation, o.gen, storage.ErrChanged)
	case r.Attrs.Size != o.info.Size:
		r.Close()
		return nil, fmt.Errorf("gcs: read %s: size %d, planned %d: %w", name, r.Attrs.Size, o.info.Size, storage.ErrChanged)
	case r.Attrs.StartOffset != off:
		r.Close()
		return nil, fmt.Errorf("gcs: read %s bytes %d-%d: the store sent bytes from %d", name, off, end-1, r.Attrs.StartOffset)
	}
	return r, nil
}
