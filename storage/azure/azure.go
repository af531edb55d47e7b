package azure

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

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/internal/objname"
	"github.com/scand/scand/storage/internal/ranged"
)

// Scheme is the URI scheme of the names this package serves:
// "az://container/path". Register the Bucket under it and under
// AliasSchemes: the Bucket's Canonical turns those into az:// names.
const Scheme = "az"

// AliasSchemes are the other spellings of an Azure Blob name that Spark,
// Hadoop and Iceberg write, "abfss://container@account.dfs.core.windows.net/path"
// and the like; Canonical turns them into az:// names of this account.
var AliasSchemes = []string{"abfss", "abfs", "wasbs", "wasb"}

const schemePrefix = Scheme + "://"

// store names the backend in messages.
const store = "azure"

// Operation names passed to Config.Observe. They are meant as metric label
// values: keep them stable.
const (
	OpStat  = "stat"  // one Stat: a Get Blob Properties (HEAD) request
	OpOpen  = "open"  // one Open that asks the store: a HEAD request
	OpList  = "list"  // one page of a List: a List Blobs request
	OpRead  = "read"  // one ReadAt or ReadSpans, its retries included
	OpRetry = "retry" // one ranged GET that failed mid-body and is retried
)

// Defaults for the zero values of Config.
const (
	DefaultMaxAttempts  = 5
	DefaultMaxBackoff   = 5 * time.Second
	DefaultStallTimeout = 30 * time.Second
	// maxIdleConnsPerHost is the idle connections kept to the account's
	// endpoint: at least the requests a server runs at once.
	maxIdleConnsPerHost = 256
)

// Observer is told about each operation when it ends: its name (one of
// the Op constants), the bytes it delivered (reads only), how long it took
// and its error. It is called concurrently and must not block.
type Observer func(op string, bytes int64, d time.Duration, err error)

// Config says how to reach one Azure Storage account, or Azurite.
// Credentials are taken, in this order, from ConnectionString, Key, SAS,
// Anonymous, and otherwise azidentity's default chain (environment,
// workload identity on AKS, managed identity, the Azure CLI's login).
type Config struct {
	// Account is the storage account's name (AZURE_STORAGE_ACCOUNT). It is
	// needed unless ConnectionString names it.
	Account string
	// Endpoint is the Blob service URL, such as
	// "http://127.0.0.1:10000/devstoreaccount1" for Azurite. Empty means
	// "https://<Account>.blob.core.windows.net/", or the connection
	// string's BlobEndpoint.
	Endpoint string
	// ConnectionString (AZURE_STORAGE_CONNECTION_STRING) holds the account,
	// its endpoint and a key or SAS.
	ConnectionString string
	// Key is the account's shared key (AZURE_STORAGE_KEY).
	Key string
	// SAS is a shared access signature token (AZURE_STORAGE_SAS_TOKEN),
	// with or without its leading "?".
	SAS string
	// Anonymous sends unauthenticated requests, for public containers.
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
	// ListPageSize is the maxresults of each List Blobs request. Zero
	// means the store's default (5000).
	ListPageSize int
	// Observe, when set, is told about every operation (see Observer).
	Observe Observer
}

// Bucket reads blobs named by "az://container/path" URIs (and the
// AliasSchemes' spellings) from any container of one storage account that
// the credentials reach. It is a storage.Bucket, safe for concurrent use.
type Bucket struct {
	client   *service.Client
	account  string // lower case; "" when not known
	policy   ranged.Policy
	pageSize int32
	observe  Observer
}

var _ storage.Bucket = (*Bucket)(nil)

// New returns a Bucket for cfg. It finds the credentials but sends no
// request: a wrong endpoint or credentials show on the first operation.
func New(ctx context.Context, cfg Config) (*Bucket, error) {
	if cfg.MaxAttempts < 0 || cfg.MaxBackoff < 0 || cfg.StallTimeout < 0 || cfg.ListPageSize < 0 {
		return nil, errors.New("azure: negative MaxAttempts, MaxBackoff, StallTimeout or ListPageSize")
	}
	b := &Bucket{
		policy: ranged.Policy{
			MaxAttempts:  orDefault(cfg.MaxAttempts, DefaultMaxAttempts),
			MaxBackoff:   orDefault(cfg.MaxBackoff, DefaultMaxBackoff),
			StallTimeout: orDefault(cfg.StallTimeout, DefaultStallTimeout),
		},
		pageSize: int32(cfg.ListPageSize),
		observe:  cfg.Observe,
		account:  strings.ToLower(cfg.Account),
	}
	b.policy.OnRetry = func(n int64, d time.Duration, err error) {
		if b.observe != nil {
			b.observe(OpRetry, n, d, err)
		}
	}
	// Our own transport: the default keeps few idle connections per host,
	// and a server runs many requests at once on one account (footers
	// while planning, files ahead); past the idle limit every burst would
	// reconnect, a TCP and TLS handshake before each first byte. The
	// response header timeout bounds HEAD and List, whose answers are
	// small; the stall watchdog bounds GETs.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = maxIdleConnsPerHost
	tr.MaxIdleConns = maxIdleConnsPerHost
	tr.ResponseHeaderTimeout = b.policy.StallTimeout
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport:        &http.Client{Transport: tr},
		PerRetryPolicies: []policy.Policy{tracePolicy{}},
		Retry: policy.RetryOptions{
			MaxRetries:    int32(b.policy.MaxAttempts - 1),
			RetryDelay:    50 * time.Millisecond,
			MaxRetryDelay: b.policy.MaxBackoff,
		},
	}}
	if b.policy.MaxAttempts == 1 {
		opts.Retry.MaxRetries = -1 // 0 would mean the SDK's default, 3
	}
	endpoint := cfg.Endpoint
	if endpoint == "" && cfg.Account != "" {
		endpoint = "https://" + cfg.Account + ".blob.core.windows.net/"
	}
	var (
		c   *azblob.Client
		err error
	)
	switch {
	case cfg.ConnectionString != "":
		c, err = azblob.NewClientFromConnectionString(cfg.ConnectionString, opts)
		if err == nil && b.account == "" {
			b.account = strings.ToLower(connAccount(cfg.ConnectionString))
		}
	case endpoint == "":
		return nil, errors.New("azure: no storage account: set one (AZURE_STORAGE_ACCOUNT), an endpoint or a connection string")
	case cfg.Key != "":
		if cfg.Account == "" {
			return nil, errors.New("azure: a shared key needs the account's name")
		}
		var cred *azblob.SharedKeyCredential
		cred, err = azblob.NewSharedKeyCredential(cfg.Account, cfg.Key)
		if err == nil {
			c, err = azblob.NewClientWithSharedKeyCredential(endpoint, cred, opts)
		}
	case cfg.SAS != "":
		c, err = azblob.NewClientWithNoCredential(strings.TrimSuffix(endpoint, "?")+"?"+strings.TrimPrefix(cfg.SAS, "?"), opts)
	case cfg.Anonymous:
		c, err = azblob.NewClientWithNoCredential(endpoint, opts)
	default:
		var cred *azidentity.DefaultAzureCredential
		cred, err = azidentity.NewDefaultAzureCredential(nil)
		if err == nil {
			c, err = azblob.NewClient(endpoint, credential{cred}, opts)
		}
	}
	if err != nil {
		// Messages of the SDK name settings, and here never a key: keys are
		// not echoed by these constructors. URLs are blanked all the same.
		return nil, fmt.Errorf("azure: %s", ranged.SafeText(err.Error()))
	}
	b.client = c.ServiceClient()
	return b, nil
}

// connAccount is the AccountName of a connection string ("" without), or
// Azurite's account for UseDevelopmentStorage=true.
func connAccount(cs string) string {
	for kv := range strings.SplitSeq(cs, ";") {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.EqualFold(k, "AccountName"):
			return v
		case strings.EqualFold(k, "UseDevelopmentStorage") && strings.EqualFold(v, "true"):
			return "devstoreaccount1"
		}
	}
	return ""
}

// credential marks the errors of getting a token, so that a refused or
// missing identity reads as a permission problem, not a failed request.
type credential struct{ azcore.TokenCredential }

func (c credential) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := c.TokenCredential.GetToken(ctx, o)
	if err != nil && ctx.Err() == nil {
		err = &credentialError{err: err}
	}
	return tok, err
}

type credentialError struct{ err error }

func (e *credentialError) Error() string { return e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }

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

func uri(ctr, key string) string { return schemePrefix + ctr + "/" + key }

// Canonical implements storage.Bucket: az:// names are their own spelling,
// and the AliasSchemes' ("abfss://container@account.dfs.core.windows.net/path",
// "wasbs://container@account.blob.core.windows.net/path") become
// "az://container/path" when they name this Bucket's account. Another
// account's name is outside the bucket (fs.ErrPermission).
func (b *Bucket) Canonical(name string) (string, error) {
	scheme, rest, ok := strings.Cut(name, "://")
	if !ok || scheme == Scheme {
		return name, nil
	}
	authority, path, _ := strings.Cut(rest, "/")
	ctr, host, ok := strings.Cut(authority, "@")
	if !ok || ctr == "" {
		return "", fmt.Errorf("azure: %q: want %s://container@account.dfs.core.windows.net/path: %w", name, scheme, fs.ErrInvalid)
	}
	account, _, _ := strings.Cut(host, ".")
	if b.account != "" && !strings.EqualFold(account, b.account) {
		return "", fmt.Errorf("azure: %q is in storage account %q; this server reads account %q: %w", name, account, b.account, fs.ErrPermission)
	}
	return uri(ctr, path), nil
}

// parse splits any name this bucket serves into container and key.
func (b *Bucket) parse(name string, prefix bool) (ctr, key, canonical string, err error) {
	canonical, err = b.Canonical(name)
	if err != nil {
		return "", "", "", err
	}
	if prefix {
		ctr, key, err = objname.Prefix(store, schemePrefix, canonical)
	} else {
		ctr, key, err = objname.Object(store, schemePrefix, canonical)
	}
	return ctr, key, canonical, err
}

func (b *Bucket) blob(ctr, key string) *blob.Client {
	return b.client.NewContainerClient(ctr).NewBlobClient(key)
}

// Stat implements storage.Bucket with a Get Blob Properties request.
func (b *Bucket) Stat(ctx context.Context, name string) (info storage.Info, err error) {
	defer func(start time.Time) { b.done(OpStat, start, 0, err) }(time.Now())
	ctr, key, _, err := b.parse(name, false)
	if err != nil {
		return storage.Info{}, err
	}
	info, _, err = b.props(ctx, "stat", ctr, key)
	return info, err
}

// props returns the blob's Info and its ETag as the store sent it.
func (b *Bucket) props(ctx context.Context, op, ctr, key string) (storage.Info, azcore.ETag, error) {
	p, err := b.blob(ctr, key).GetProperties(ctx, nil)
	if err != nil {
		return storage.Info{}, "", b.objectError(ctx, op, ctr, key, "", err)
	}
	var etag azcore.ETag
	if p.ETag != nil {
		etag = *p.ETag
	}
	info := storage.Info{Name: uri(ctr, key), Version: version(etag)}
	if p.ContentLength != nil {
		info.Size = *p.ContentLength
	}
	if p.LastModified != nil {
		info.ModTime = *p.LastModified
	}
	if isFolder(p.Metadata) {
		// A directory of an account with a hierarchical namespace (ADLS
		// Gen2) is a blob to this API, and not an object.
		return storage.Info{}, "", &opError{Msg: fmt.Sprintf("azure: %s %s: a directory, not a blob", op, info.Name), Kind: fs.ErrNotExist, Err: fs.ErrNotExist}
	}
	return info, etag, nil
}

// version is an ETag as Info.Version: without the quotes.
func version(etag azcore.ETag) string { return strings.Trim(string(etag), `"`) }

// isFolder reports the metadata of a hierarchical namespace's directory.
func isFolder(md map[string]*string) bool {
	for k, v := range md {
		if strings.EqualFold(k, "hdi_isfolder") && v != nil && strings.EqualFold(*v, "true") {
			return true
		}
	}
	return false
}

// Open implements storage.Bucket. When info carries the size and version
// (an ETag) of a listing or a ticket, Open sends nothing: every GET
// carries that ETag as If-Match, so a replaced or deleted blob fails the
// first read with ErrChanged or NotFound. Otherwise it sends one HEAD and
// fails early with ErrChanged when the blob is no longer the planned
// version.
func (b *Bucket) Open(ctx context.Context, info storage.Info) (_ storage.Object, err error) {
	defer func(start time.Time) { b.done(OpOpen, start, 0, err) }(time.Now())
	ctr, key, canonical, err := b.parse(info.Name, false)
	if err != nil {
		return nil, err
	}
	if info.Version != "" && info.Size > 0 {
		info.Name = canonical
		return &object{b: b, c: b.blob(ctr, key), ctr: ctr, key: key, etag: azcore.ETag(`"` + info.Version + `"`), info: info}, nil
	}
	got, etag, err := b.props(ctx, "open", ctr, key)
	if err != nil {
		return nil, err
	}
	if info.Version != "" && got.Version != info.Version {
		return nil, fmt.Errorf("azure: open %s: version %s, planned %s: %w", canonical, got.Version, info.Version, storage.ErrChanged)
	}
	return &object{b: b, c: b.blob(ctr, key), ctr: ctr, key: key, etag: etag, info: got}, nil
}

// List implements storage.Bucket.
func (b *Bucket) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return b.ListPruned(ctx, prefix, storage.Pruning{}, fn)
}

// ListPruned implements storage.Bucket with List Blobs, a page at a time.
// Azure lists flat, with sizes and ETags, in lexical order of names, so
// p is applied to each listed name (storage.Pruning.Wants). Directories of
// a hierarchical namespace, names ending in "/" and keys this package
// refuses to read are skipped.
func (b *Bucket) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	ctr, keyPrefix, canonical, err := b.parse(prefix, true)
	if err != nil {
		return err
	}
	opts := &container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true}}
	if keyPrefix != "" {
		opts.Prefix = &keyPrefix
	}
	if b.pageSize > 0 {
		opts.MaxResults = &b.pageSize
	}
	pages := b.client.NewContainerClient(ctr).NewListBlobsFlatPager(opts)
	last := ""
	for pages.More() {
		start := time.Now()
		page, err := pages.NextPage(ctx)
		if err != nil {
			err = b.bucketError(ctx, "list", ctr, canonical, err)
		}
		b.done(OpList, start, 0, err)
		if err != nil {
			return err
		}
		if page.Segment == nil {
			continue
		}
		for _, item := range page.Segment.BlobItems {
			if err := ctx.Err(); err != nil {
				return err
			}
			if item.Name == nil || item.Properties == nil {
				continue
			}
			key := *item.Name
			if key <= last {
				// A store that breaks the ordering would make Expand
				// return unsorted or duplicate files: refuse it loudly.
				return fmt.Errorf("azure: list %s: the store returned %q after %q, out of order", canonical, key, last)
			}
			last = key
			if strings.HasSuffix(key, "/") || objname.CheckKey(key) != nil || isFolder(item.Metadata) {
				continue
			}
			name := uri(ctr, key)
			if !p.Wants(canonical, name) {
				continue
			}
			info := storage.Info{Name: name}
			if item.Properties.ContentLength != nil {
				info.Size = *item.Properties.ContentLength
			}
			if item.Properties.ETag != nil {
				info.Version = version(*item.Properties.ETag)
			}
			if item.Properties.LastModified != nil {
				info.ModTime = *item.Properties.LastModified
			}
			if err := fn(info); err != nil {
				return err
			}
		}
	}
	return nil
}

var _ storage.Object = (*object)(nil)

// object is an open blob. Its fields are set by Open and never written
// again, so reads may run concurrently.
type object struct {
	b        *Bucket
	c        *blob.Client
	ctr, key string
	etag     azcore.ETag // as the store sent it, for If-Match; "" if it sent none
	info     storage.Info
	closed   atomic.Bool
}

// Info implements storage.Object.
func (o *object) Info() storage.Info { return o.info }

// Close implements storage.Object. An object holds no connection between
// reads, so Close only marks it closed.
func (o *object) Close() error {
	if o.closed.Swap(true) {
		return fmt.Errorf("azure: close %s: %w", o.info.Name, fs.ErrClosed)
	}
	return nil
}

// Capabilities implements storage.Object: ranged GETs read spans.
func (o *object) Capabilities() storage.Capabilities {
	return storage.Capabilities{SpanReads: true}
}

// Recheck implements storage.Object. Every GET carries the planned ETag
// as If-Match and checks the ETag it was served: nothing to do.
func (o *object) Recheck(ctx context.Context) error { return ctx.Err() }

// ReadAt implements storage.Object with one ranged GET. Reads past the
// end are clamped to the size Open saw, and reported as
// io.ErrUnexpectedEOF.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64) (err error) {
	if err := o.check(ctx); err != nil {
		return err
	}
	if off < 0 {
		return fmt.Errorf("azure: read %s at %d: negative offset: %w", o.info.Name, off, fs.ErrInvalid)
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
	n, err = ranged.Read(ctx, "azure: read "+o.info.Name, ranged.OneSpan(want, off), o.b.policy, o.open)
	if err != nil {
		return err
	}
	if len(want) < len(p) {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// ReadSpans implements storage.Object: one ranged GET from the first span
// to the end of the last, the bytes between spans dropped as they arrive.
func (o *object) ReadSpans(ctx context.Context, spans []storage.Span) (err error) {
	if err := o.check(ctx); err != nil {
		return err
	}
	d, err := storage.SpanRange(spans)
	if err != nil {
		return fmt.Errorf("azure: read %s: %w", o.info.Name, err)
	}
	if d.End > o.info.Size {
		return io.ErrUnexpectedEOF
	}
	if d.End == d.Off {
		return nil
	}
	var n int64
	defer func(start time.Time) { o.b.done(OpRead, start, n, err) }(time.Now())
	n, err = ranged.Read(ctx, "azure: read "+o.info.Name, &ranged.Dest{Spans: spans, Off: d.Off, End: d.End}, o.b.policy, o.open)
	return err
}

func (o *object) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.closed.Load() {
		return fmt.Errorf("azure: read %s: %w", o.info.Name, fs.ErrClosed)
	}
	return nil
}

// open is ranged.Open for this blob: one ranged GET with If-Match, whose
// response must be the planned version and size (the backup of If-Match,
// for stores that ignore it).
func (o *object) open(ctx context.Context, off, end int64) (io.ReadCloser, error) {
	opts := &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: end - off}}
	if o.etag != "" {
		etag := o.etag
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}
	}
	resp, err := o.c.DownloadStream(ctx, opts)
	if err != nil {
		return nil, o.b.objectError(ctx, "read", o.ctr, o.key, fmt.Sprintf(" bytes %d-%d", off, end-1), err)
	}
	name := o.info.Name
	fail := func(err error) (io.ReadCloser, error) {
		resp.Body.Close()
		return nil, err
	}
	if resp.ETag != nil && o.etag != "" && version(*resp.ETag) != version(o.etag) {
		return fail(fmt.Errorf("azure: read %s: version %s, planned %s: %w", name, version(*resp.ETag), version(o.etag), storage.ErrChanged))
	}
	cr := ""
	if resp.ContentRange != nil {
		cr = *resp.ContentRange
	}
	var first, last, total int64
	if _, err := fmt.Sscanf(cr, "bytes %d-%d/%d", &first, &last, &total); err != nil {
		// A 200 instead of a 206: the whole blob, which is only what was
		// asked for when all of it was.
		if cr != "" || off != 0 || resp.ContentLength == nil || *resp.ContentLength != end || end != o.info.Size {
			return fail(fmt.Errorf("azure: read %s bytes %d-%d: the store ignored the range (Content-Range %q)", name, off, end-1, cr))
		}
		return resp.Body, nil
	}
	if total != o.info.Size {
		return fail(fmt.Errorf("azure: read %s: size %d, planned %d: %w", name, total, o.info.Size, storage.ErrChanged))
	}
	if first != off || last != end-1 {
		return fail(fmt.Errorf("azure: read %s bytes %d-%d: the store sent bytes %d-%d", name, off, end-1, first, last))
	}
	return resp.Body, nil
}
