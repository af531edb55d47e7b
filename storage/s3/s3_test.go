package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/s3"
	"github.com/scand/scand/storage/storagetest"
)

// TestAcceptance runs the storage contract suite against versitygw. The
// suite names objects relative to a root; relBucket maps them to
// "s3://bucket/name" and back.
func TestAcceptance(t *testing.T) {
	needGW(t)
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		bucket := newS3Bucket(t, objects)
		return relBucket{b: newBackend(t, "", s3.Config{}), base: "s3://" + bucket + "/"}
	})
}

// TestAcceptanceSmallPages runs the suite again with two keys per
// ListObjectsV2 page, so every listing crosses page boundaries.
func TestAcceptanceSmallPages(t *testing.T) {
	needGW(t)
	if testing.Short() {
		t.Skip("-short")
	}
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		bucket := newS3Bucket(t, objects)
		return relBucket{b: newBackend(t, "", s3.Config{ListPageSize: 2}), base: "s3://" + bucket + "/"}
	})
}

type relBucket struct {
	b    storage.Bucket
	base string
}

func (r relBucket) Stat(ctx context.Context, name string) (storage.Info, error) {
	info, err := r.b.Stat(ctx, r.base+name)
	info.Name = strings.TrimPrefix(info.Name, r.base)
	return info, err
}

func (r relBucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	info.Name = r.base + info.Name
	o, err := r.b.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	return relObject{o, r.base}, nil
}

func (r relBucket) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return r.ListPruned(ctx, prefix, storage.Pruning{}, fn)
}

func (r relBucket) Canonical(name string) (string, error) { return name, nil }

func (r relBucket) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	strip := func(want func(string) bool) func(string) bool {
		if want == nil {
			return nil
		}
		return func(name string) bool { return want(strings.TrimPrefix(name, r.base)) }
	}
	p = storage.Pruning{Dir: strip(p.Dir), Object: strip(p.Object)}
	return r.b.ListPruned(ctx, r.base+prefix, p, func(info storage.Info) error {
		if !strings.HasPrefix(info.Name, r.base) {
			return fmt.Errorf("listed %q, outside %q", info.Name, r.base)
		}
		info.Name = strings.TrimPrefix(info.Name, r.base)
		return fn(info)
	})
}

type relObject struct {
	storage.Object
	base string
}

func (o relObject) Info() storage.Info {
	info := o.Object.Info()
	info.Name = strings.TrimPrefix(info.Name, o.base)
	return info
}

func names(infos []storage.Info) []string {
	out := []string{}
	for _, info := range infos {
		out = append(out, info.Name)
	}
	return out
}

// TestExpandURIs checks globs and directory prefixes written as s3:// URIs,
// as requests name them, through a storage.Mux as the server uses it.
func TestExpandURIs(t *testing.T) {
	bucket := newS3Bucket(t, map[string][]byte{
		"events/2025-12/part-0.parquet": []byte("a"),
		"events/2026-01/part-0.parquet": []byte("bb"),
		"events/2026-01/part-1.parquet": []byte("ccc"),
		"events/2026-01/_SUCCESS":       nil,
		"events/2026-02/part-0.parquet": []byte("dddd"),
		"events/2026-02/x.csv":          []byte("e"),
		"prefix/a.parquet":              []byte("f"),
		"prefix/sub/b.parquet":          []byte("g"),
		"prefix2/c.parquet":             []byte("h"),
	})
	var mux storage.Mux
	mux.Handle(s3.Scheme, newBackend(t, "", s3.Config{}))
	u := func(keys ...string) []string {
		out := []string{}
		for _, k := range keys {
			out = append(out, "s3://"+bucket+"/"+k)
		}
		return out
	}
	tests := []struct {
		pattern string
		want    []string
		wantErr error
	}{
		{pattern: "events/2026-*/part-*.parquet", want: u(
			"events/2026-01/part-0.parquet", "events/2026-01/part-1.parquet", "events/2026-02/part-0.parquet")},
		{pattern: "events/**/*.parquet", want: u("events/2025-12/part-0.parquet",
			"events/2026-01/part-0.parquet", "events/2026-01/part-1.parquet", "events/2026-02/part-0.parquet")},
		{pattern: "events/2026-02/", want: u("events/2026-02/part-0.parquet", "events/2026-02/x.csv")},
		{pattern: "prefix/", want: u("prefix/a.parquet", "prefix/sub/b.parquet")},
		{pattern: "prefix/a.parquet", want: u("prefix/a.parquet")},
		{pattern: "*/a.parquet", want: u("prefix/a.parquet")},
		{pattern: "events/2027-*/*.parquet", wantErr: fs.ErrNotExist},
		{pattern: "nothing/", wantErr: fs.ErrNotExist},
		{pattern: "missing.parquet", wantErr: fs.ErrNotExist},
		{pattern: "../x/*", wantErr: fs.ErrPermission},
	}
	for _, tt := range tests {
		name := "s3://" + bucket + "/" + tt.pattern
		t.Run(tt.pattern, func(t *testing.T) {
			infos, err := storage.Expand(context.Background(), &mux, name)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Expand(%q) = %q, %v; want %v", name, names(infos), err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Expand(%q): %v", name, err)
			}
			if got := names(infos); !slices.Equal(got, tt.want) {
				t.Errorf("Expand(%q) =\n\t%q\nwant\n\t%q", name, got, tt.want)
			}
		})
	}
	// A missing bucket, and a glob in the bucket name, fail cleanly.
	if _, err := storage.Expand(context.Background(), &mux, "s3://no-such-bucket/x/*.parquet"); !errors.Is(err, fs.ErrNotExist) ||
		!strings.Contains(err.Error(), `bucket "no-such-bucket" does not exist`) {
		t.Errorf("Expand in a missing bucket = %v, want fs.ErrNotExist naming the bucket", err)
	}
	if _, err := storage.Expand(context.Background(), &mux, "s3://scand-*/x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Expand with a glob in the bucket = %v, want fs.ErrInvalid", err)
	}
}

// TestChanged overwrites an object after Stat and after Open: Open with the
// old version, and reads through the open handle, fail with ErrChanged.
// The handle sends the ETag as If-Match on every GET.
func TestChanged(t *testing.T) {
	ctx := context.Background()
	const key = "data.parquet"
	old := bytes.Repeat([]byte("old!"), 1000)
	for _, tt := range []struct {
		name string
		new  []byte
	}{
		{"same size", bytes.Repeat([]byte("new!"), 1000)},
		{"shorter", []byte("new")},
		{"longer", bytes.Repeat([]byte("new!"), 2000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bucket := newS3Bucket(t, map[string][]byte{key: old})
			var rec recorder
			b := newBackend(t, "", s3.Config{WrapTransport: rec.wrap})
			name := "s3://" + bucket + "/" + key
			info, err := b.Stat(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			o, err := b.Open(ctx, info)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			p := make([]byte, 100)
			if err := o.ReadAt(ctx, p, 10); err != nil || !bytes.Equal(p, old[10:110]) {
				t.Fatalf("ReadAt before the overwrite = %v", err)
			}

			put(t, bucket, key, tt.new)
			err = o.ReadAt(ctx, p, 10)
			errorIs(t, "ReadAt after the overwrite", err, storage.ErrChanged)
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name the object", err)
			}
			// Open trusts the known size and version (no HEAD); the first
			// GET's If-Match finds the change.
			o3, err := b.Open(ctx, info)
			if err != nil {
				t.Fatalf("Open with a known version sent a request: %v", err)
			}
			errorIs(t, "ReadAt with the old version", o3.ReadAt(ctx, p, 0), storage.ErrChanged)
			o3.Close()
			gets := rec.ranged()
			if len(gets) != 3 {
				t.Fatalf("sent %d ranged GETs, want 3: %+v", len(gets), gets)
			}
			for _, g := range gets {
				if g.IfMatch == "" || strings.Trim(g.IfMatch, `"`) != info.Version {
					t.Errorf("GET %s sent If-Match %q, want the version %q", g.Range, g.IfMatch, info.Version)
				}
			}
			if gets[0].Range != "bytes=10-109" {
				t.Errorf("GET Range = %q, want bytes=10-109", gets[0].Range)
			}

			// A new Open takes the new version.
			o2, err := b.Open(ctx, storage.Info{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			defer o2.Close()
			q := make([]byte, len(tt.new))
			if err := o2.ReadAt(ctx, q, 0); err != nil || !bytes.Equal(q, tt.new) {
				t.Errorf("ReadAt of the new version = %v", err)
			}
		})
	}
}

// TestOpenBySize opens objects by their size alone, as a table's listing
// knows its data files: Open sends no HEAD, the first GET pins the
// version (Info reports it once read), later GETs carry it as If-Match,
// and a changed object or a wrong size fails a read with ErrChanged.
func TestOpenBySize(t *testing.T) {
	ctx := context.Background()
	const key = "data.parquet"
	data := bytes.Repeat([]byte("old!"), 1000)
	for _, tt := range []struct {
		name   string
		size   int64                             // the size Open is given
		change func(t *testing.T, bucket string) // between the two reads
		first  error                             // what the first read returns
		second error
	}{
		{name: "unchanged", size: int64(len(data))},
		{name: "overwritten", size: int64(len(data)), change: func(t *testing.T, bucket string) {
			put(t, bucket, key, bytes.Repeat([]byte("new!"), 1000))
		}, second: storage.ErrChanged},
		{name: "wrong size", size: int64(len(data)) + 1, first: storage.ErrChanged},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bucket := newS3Bucket(t, map[string][]byte{key: data})
			var rec recorder
			b := newBackend(t, "", s3.Config{WrapTransport: rec.wrap})
			name := "s3://" + bucket + "/" + key
			want, err := b.Stat(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			heads := rec.headCount()
			o, err := b.Open(ctx, storage.Info{Name: name, Size: tt.size})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if n := rec.headCount() - heads; n != 0 {
				t.Errorf("Open by size sent %d HEADs, want none", n)
			}
			if v := o.Info().Version; v != "" {
				t.Errorf("Info().Version before any read = %q, want empty", v)
			}
			p := make([]byte, 100)
			err = o.ReadAt(ctx, p, 200)
			if tt.first != nil {
				errorIs(t, "first ReadAt", err, tt.first)
				return
			}
			if err != nil || !bytes.Equal(p, data[200:300]) {
				t.Fatalf("first ReadAt = %v", err)
			}
			if got := o.Info(); got.Version != want.Version || got.Size != want.Size {
				t.Errorf("Info() after a read = %+v, want version %q size %d", got, want.Version, want.Size)
			}
			if tt.change != nil {
				tt.change(t, bucket)
			}
			err = o.ReadAt(ctx, p, 0)
			if tt.second != nil {
				errorIs(t, "second ReadAt", err, tt.second)
			} else if err != nil || !bytes.Equal(p, data[:100]) {
				t.Fatalf("second ReadAt = %v", err)
			}
			gets := rec.ranged()
			if len(gets) != 2 || gets[0].IfMatch != "" || strings.Trim(gets[1].IfMatch, `"`) != want.Version {
				t.Errorf("GETs %+v: want the first without If-Match, the second with %q", gets, want.Version)
			}
		})
	}
}

// TestNotFound checks that a missing key and a missing bucket wrap
// fs.ErrNotExist and say which one is missing.
func TestNotFound(t *testing.T) {
	ctx := context.Background()
	bucket := newS3Bucket(t, map[string][]byte{"a": []byte("x")})
	b := newBackend(t, "", s3.Config{})
	missingKey := "s3://" + bucket + "/missing"
	missingBucket := "s3://no-such-bucket/a"
	for _, tt := range []struct {
		what, name, want string
		call             func(name string) error
	}{
		{"Stat", missingKey, "no such key", func(n string) error { _, err := b.Stat(ctx, n); return err }},
		{"Open", missingKey, "no such key", func(n string) error { _, err := b.Open(ctx, storage.Info{Name: n}); return err }},
		{"Stat", missingBucket, `bucket "no-such-bucket" does not exist`, func(n string) error { _, err := b.Stat(ctx, n); return err }},
		{"Open", missingBucket, `bucket "no-such-bucket" does not exist`, func(n string) error {
			_, err := b.Open(ctx, storage.Info{Name: n})
			return err
		}},
		{"List", "s3://no-such-bucket/", `bucket "no-such-bucket" does not exist`, func(n string) error {
			return b.List(ctx, n, func(storage.Info) error { return nil })
		}},
	} {
		err := tt.call(tt.name)
		errorIs(t, fmt.Sprintf("%s(%q)", tt.what, tt.name), err, fs.ErrNotExist)
		if err != nil && (!strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.name)) {
			t.Errorf("%s(%q) = %q, want a message naming it and saying %q", tt.what, tt.name, err, tt.want)
		}
	}
	// An empty prefix lists nothing, without error.
	if err := b.List(ctx, "s3://"+bucket+"/nothing/", func(storage.Info) error {
		return errors.New("called")
	}); err != nil {
		t.Errorf("List of an empty prefix = %v", err)
	}
}

// TestBadCredentials checks that wrong keys wrap fs.ErrPermission, and that
// messages show neither the secret nor the endpoint.
func TestBadCredentials(t *testing.T) {
	ctx := context.Background()
	bucket := newS3Bucket(t, map[string][]byte{"a": []byte("x")})
	for _, tt := range []struct{ access, secret string }{
		{accessKey, "wrong-secret-key-4711"},
		{"no-such-access-key", "wrong-secret-key-4711"},
	} {
		b := newBackend(t, "", s3.Config{AccessKey: tt.access, SecretKey: tt.secret})
		name := "s3://" + bucket + "/a"
		_, statErr := b.Stat(ctx, name)
		_, openErr := b.Open(ctx, storage.Info{Name: name})
		listErr := b.List(ctx, "s3://"+bucket+"/", func(storage.Info) error { return nil })
		for what, err := range map[string]error{"Stat": statErr, "Open": openErr, "List": listErr} {
			errorIs(t, fmt.Sprintf("%s with access key %q", what, tt.access), err, fs.ErrPermission)
			if err == nil {
				continue
			}
			if msg := err.Error(); strings.Contains(msg, tt.secret) || strings.Contains(msg, gwAddr) || strings.Contains(msg, "http://") {
				t.Errorf("%s: message shows a secret or the endpoint: %s", what, msg)
			}
		}
	}
}

// TestEndpointDown checks that an unreachable endpoint fails within the
// retry bound, with a message that does not show the endpoint.
func TestEndpointDown(t *testing.T) {
	needGW(t)
	addr := "127.0.0.1:1" // nothing listens on port 1
	b := newBackend(t, "http://"+addr, s3.Config{MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond})
	start := time.Now()
	_, err := b.Stat(context.Background(), "s3://b/k")
	if err == nil {
		t.Fatal("Stat against a closed port succeeded")
	}
	if strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "http://") {
		t.Errorf("message shows the endpoint: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Stat took %v", d)
	}
	t.Logf("error: %v", err)
}

// TestListPages lists a bucket page by page, with keys that sort
// differently from a directory walk ("a.x" < "a/" < "a0").
func TestListPages(t *testing.T) {
	ctx := context.Background()
	objects := map[string][]byte{}
	for i := range 25 {
		objects[fmt.Sprintf("k/%03d", i)] = []byte{byte(i)}
	}
	for _, k := range []string{"a.x", "a/b", "a/c/d", "a0", "a-", "b"} {
		objects[k] = []byte(k)
	}
	bucket := newS3Bucket(t, objects)
	var want []string
	for k := range objects {
		want = append(want, "s3://"+bucket+"/"+k)
	}
	slices.Sort(want)

	for _, pageSize := range []int32{0, 1, 7, 1000} {
		t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
			var obs observed
			b := newBackend(t, "", s3.Config{ListPageSize: pageSize, Observe: obs.observe})
			var got []string
			err := b.List(ctx, "s3://"+bucket, func(info storage.Info) error {
				got = append(got, info.Name)
				if info.Size != int64(len(objects[strings.TrimPrefix(info.Name, "s3://"+bucket+"/")])) || info.Version == "" {
					t.Errorf("listed %+v", info)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("List =\n\t%q\nwant\n\t%q", got, want)
			}
			pages := 1
			if pageSize > 0 {
				pages = (len(want) + int(pageSize) - 1) / int(pageSize)
			}
			// A store may end with an empty page; allow one more.
			if n := obs.count(s3.OpList); n != pages && n != pages+1 {
				t.Errorf("List took %d pages, want %d", n, pages)
			}
		})
	}
}

// TestListPagination lists more than 1000 keys, the default page size of
// S3, with the default page size. It uploads 1100 objects, so it skips
// under -short.
func TestListPagination(t *testing.T) {
	needGW(t)
	if testing.Short() {
		t.Skip("-short: uploads 1100 objects")
	}
	const n = 1100
	bucket := newS3Bucket(t, nil)
	sem := make(chan struct{}, 16)
	done := make(chan struct{})
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; done <- struct{}{} }()
			if err := putErr(bucket, fmt.Sprintf("p/%05d.parquet", i), nil); err != nil {
				t.Error(err)
			}
		}()
	}
	for range n {
		<-done
	}
	var obs observed
	b := newBackend(t, "", s3.Config{Observe: obs.observe})
	infos, err := storage.Expand(context.Background(), b, "s3://"+bucket+"/p/*.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != n {
		t.Fatalf("Expand found %d objects, want %d", len(infos), n)
	}
	for i, info := range infos {
		if want := fmt.Sprintf("s3://%s/p/%05d.parquet", bucket, i); info.Name != want {
			t.Fatalf("infos[%d] = %q, want %q", i, info.Name, want)
		}
	}
	if pages := obs.count(s3.OpList); pages < 2 {
		t.Errorf("listed %d keys in %d page(s)", n, pages)
	}
}

// TestObserver checks the operations the metrics hook sees.
func TestObserver(t *testing.T) {
	ctx := context.Background()
	bucket := newS3Bucket(t, map[string][]byte{"a": []byte("hello")})
	var obs observed
	b := newBackend(t, "", s3.Config{Observe: obs.observe})
	info, err := b.Stat(ctx, "s3://"+bucket+"/a")
	if err != nil {
		t.Fatal(err)
	}
	o, err := b.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.ReadAt(ctx, make([]byte, 5), 0); err != nil {
		t.Fatal(err)
	}
	if err := o.ReadAt(ctx, make([]byte, 5), 3); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ReadAt past the end = %v", err)
	}
	if err := b.List(ctx, "s3://"+bucket+"/", func(storage.Info) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for op, want := range map[string]int{s3.OpStat: 1, s3.OpOpen: 1, s3.OpRead: 2, s3.OpList: 1, s3.OpRetry: 0} {
		if got := obs.count(op); got != want {
			t.Errorf("observed %d %q, want %d", got, op, want)
		}
	}
}

func errorIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s = %v, want %v", what, err, want)
	}
}
