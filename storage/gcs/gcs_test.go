package gcs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/gcs"
	"github.com/scand/scand/storage/internal/testenv"
	"github.com/scand/scand/storage/storagetest"
)

// TestAcceptance runs the storage contract suite against fake-gcs-server.
func TestAcceptance(t *testing.T) {
	needEmulator(t)
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		bucket := newGCSBucket(t, objects)
		return testenv.Rel{B: newBackend(t, "", gcs.Config{}), Base: "gs://" + bucket + "/"}
	})
}

// TestAcceptanceSmallPages runs the suite again with two names per
// objects.list page, so every listing crosses page boundaries.
func TestAcceptanceSmallPages(t *testing.T) {
	needEmulator(t)
	if testing.Short() {
		t.Skip("-short")
	}
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		bucket := newGCSBucket(t, objects)
		return testenv.Rel{B: newBackend(t, "", gcs.Config{ListPageSize: 2}), Base: "gs://" + bucket + "/"}
	})
}

// TestExpandURIs checks globs written as gs:// URIs through a storage.Mux,
// as the server uses it.
func TestExpandURIs(t *testing.T) {
	bucket := newGCSBucket(t, map[string][]byte{
		"events/2025-12/part-0.parquet": []byte("a"),
		"events/2026-01/part-0.parquet": []byte("bb"),
		"events/2026-01/_SUCCESS":       nil,
		"other/x.parquet":               []byte("c"),
	})
	mux := &storage.Mux{}
	mux.Handle(gcs.Scheme, newBackend(t, "", gcs.Config{}))
	base := "gs://" + bucket + "/"
	for pattern, want := range map[string][]string{
		base + "events/2026-*/":      {base + "events/2026-01/part-0.parquet"},
		base + "events/**/*.parquet": {base + "events/2025-12/part-0.parquet", base + "events/2026-01/part-0.parquet"},
		base + "other/x.parquet":     {base + "other/x.parquet"},
		"gs://" + bucket + "/other/": {base + "other/x.parquet"},
	} {
		infos, err := storage.Expand(context.Background(), mux, pattern)
		if err != nil {
			t.Errorf("Expand(%q): %v", pattern, err)
			continue
		}
		var got []string
		for _, info := range infos {
			got = append(got, info.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("Expand(%q) = %q, want %q", pattern, got, want)
		}
	}
}

// TestChanged overwrites an object between planning and reading. The
// emulator ignores ifGenerationMatch on reads, so what catches it there is
// the generation the response carries; the precondition itself is tested
// through a proxy that enforces it the way GCS does (412).
func TestChanged(t *testing.T) {
	bucket := newGCSBucket(t, map[string][]byte{"a.bin": bytes.Repeat([]byte("x"), 1000)})
	name := "gs://" + bucket + "/a.bin"
	enforcing := newPreconditionProxy(t)
	for _, tc := range []struct {
		what string
		ep   string
	}{
		{"emulator (response generation)", ""},
		{"precondition (412)", enforcing.URL + "/storage/v1/"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			b := newBackend(t, tc.ep, gcs.Config{})
			ctx := context.Background()
			put(t, bucket, "a.bin", bytes.Repeat([]byte("x"), 1000))
			info, err := b.Stat(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			o, err := b.Open(ctx, info) // trusts size and version: no request
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if err := o.ReadAt(ctx, make([]byte, 10), 0); err != nil {
				t.Fatalf("read before the change: %v", err)
			}
			put(t, bucket, "a.bin", bytes.Repeat([]byte("y"), 1000))
			err = o.ReadAt(ctx, make([]byte, 10), 0)
			if !errors.Is(err, storage.ErrChanged) || !strings.Contains(err.Error(), name) {
				t.Fatalf("read after the change = %v, want storage.ErrChanged naming %s", err, name)
			}
			if tc.ep != "" && !strings.Contains(err.Error(), "precondition") {
				t.Errorf("read after the change = %v, want the 412's message", err)
			}
			// Open without a trusted size asks the store and fails early.
			if _, err := b.Open(ctx, storage.Info{Name: name, Version: info.Version}); !errors.Is(err, storage.ErrChanged) {
				t.Errorf("Open with the old generation = %v, want storage.ErrChanged", err)
			}
		})
	}
	if enforcing.checked.Load() == 0 {
		t.Error("no read carried ifGenerationMatch")
	}
}

// preconditionProxy is a fault-injecting wrapper around the emulator: it
// answers 412 conditionNotMet, as GCS does, to a read whose
// ifGenerationMatch is not the object's generation.
type preconditionProxy struct {
	*httptest.Server
	checked atomic.Int64
}

func newPreconditionProxy(t *testing.T) *preconditionProxy {
	t.Helper()
	needEmulator(t)
	up, _ := url.Parse("http://" + emuAddr)
	rp := httputil.NewSingleHostReverseProxy(up)
	p := &preconditionProxy{}
	rp.ModifyResponse = func(resp *http.Response) error {
		want := resp.Request.URL.Query().Get("ifGenerationMatch")
		if want == "" || resp.Request.URL.Query().Get("alt") != "media" {
			return nil
		}
		p.checked.Add(1)
		if got := resp.Header.Get("X-Goog-Generation"); got == want {
			return nil
		}
		resp.Body.Close()
		body := `{"error":{"code":412,"message":"At least one of the pre-conditions you specified did not hold.","errors":[{"reason":"conditionNotMet","message":"At least one of the pre-conditions you specified did not hold."}]}}`
		resp.StatusCode, resp.Status = 412, "412 Precondition Failed"
		resp.Header = http.Header{"Content-Type": {"application/json"}}
		resp.Body = io.NopCloser(strings.NewReader(body))
		resp.ContentLength = int64(len(body))
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

func TestNotFound(t *testing.T) {
	bucket := newGCSBucket(t, map[string][]byte{"a": []byte("a")})
	b := newBackend(t, "", gcs.Config{})
	ctx := context.Background()
	_, err := b.Stat(ctx, "gs://"+bucket+"/missing")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no such object") {
		t.Errorf("Stat(missing key) = %v, want fs.ErrNotExist saying no such object", err)
	}
	_, err = b.Stat(ctx, "gs://no-such-bucket-x/a")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), `bucket "no-such-bucket-x" does not exist`) {
		t.Errorf("Stat(missing bucket) = %v, want fs.ErrNotExist naming the bucket", err)
	}
	err = b.List(ctx, "gs://no-such-bucket-x/", func(storage.Info) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("List(missing bucket) = %v, want fs.ErrNotExist", err)
	}
	for _, name := range []string{"gs://b/../x", "gs://b/a/./x", "gs:///x"} {
		if _, err := b.Stat(ctx, name); !errors.Is(err, fs.ErrPermission) && !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Stat(%q) = %v, want fs.ErrPermission or fs.ErrInvalid", name, err)
		}
	}
}

// TestEndpointDown checks that a store that cannot be reached fails with
// storage.ErrUnavailable once the retries are spent, quickly.
func TestEndpointDown(t *testing.T) {
	addr, err := testenv.FreeAddr() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(t, "http://"+addr+"/storage/v1/", gcs.Config{MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond})
	start := time.Now()
	_, err = b.Stat(context.Background(), "gs://b/k")
	if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), "gs://b/k") {
		t.Errorf("Stat with the store down = %v, want storage.ErrUnavailable naming the object", err)
	}
	if strings.Contains(err.Error(), addr) {
		t.Errorf("the error quotes the endpoint: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

// TestBadCredentials uses a service account key whose token endpoint
// refuses it: the error is a permission error naming the object.
func TestBadCredentials(t *testing.T) {
	bucket := newGCSBucket(t, map[string][]byte{"a": []byte("a")})
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`))
	}))
	defer tokens.Close()
	key := writeServiceAccount(t, tokens.URL+"/token")
	b := newBackend(t, "", gcs.Config{CredentialsFile: key, MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond})
	_, err := b.Stat(context.Background(), "gs://"+bucket+"/a")
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "gs://"+bucket+"/a") {
		t.Errorf("Stat with refused credentials = %v, want fs.ErrPermission naming the object", err)
	}
	if strings.Contains(err.Error(), "BEGIN") {
		t.Errorf("the error quotes the key: %v", err)
	}
}

// writeServiceAccount writes a service account key file with a fresh RSA
// key and the given token endpoint.
func writeServiceAccount(t *testing.T, tokenURI string) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "scand-test", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "reader@scand-test.iam.gserviceaccount.com", "client_id": "1",
		"token_uri": tokenURI,
	})
	p := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFaults reads through toxiproxy: latency, and connections reset
// mid-body, which the backend resumes with a new ranged read of the bytes
// still missing.
func TestFaults(t *testing.T) {
	needEmulator(t)
	data := storagetest.Content("big", 3<<20)
	bucket := newGCSBucket(t, map[string][]byte{"big": data})
	p := toxi.NewProxy(t, emuAddr)
	var retries atomic.Int64
	b := newBackend(t, "http://"+p.Addr+"/storage/v1/", gcs.Config{
		MaxBackoff: 20 * time.Millisecond,
		Observe: func(op string, _ int64, _ time.Duration, _ error) {
			if op == gcs.OpRetry {
				retries.Add(1)
			}
		},
	})
	ctx := context.Background()
	name := "gs://" + bucket + "/big"
	o, err := b.Open(ctx, storage.Info{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()

	latency := p.Add("latency", map[string]any{"latency": 30})
	buf := make([]byte, 1<<20)
	if err := o.ReadAt(ctx, buf, 1000); err != nil || !bytes.Equal(buf, data[1000:1000+len(buf)]) {
		t.Fatalf("read with 30 ms latency: %v", err)
	}
	p.Remove(latency)

	// Each connection is reset after 256 KiB of response: a 3 MiB read
	// needs several resumed requests and must still be exact.
	p.Add("limit_data", map[string]any{"bytes": 256 << 10})
	buf = make([]byte, len(data)-10)
	if err := o.ReadAt(ctx, buf, 10); err != nil {
		t.Fatalf("read through resets: %v", err)
	}
	if !bytes.Equal(buf, data[10:]) {
		t.Fatal("read through resets: wrong bytes")
	}
	// The SDK's reader reopens a broken body itself (pinned to the
	// generation it was first served), so the backend's own resumption
	// (Observe's OpRetry) is what is left when the SDK gives up.
	t.Logf("resumed by the backend: %d", retries.Load())
}

// TestGivesUp checks a read whose every request dies: it fails with
// storage.ErrUnavailable, naming the object, within its attempts.
func TestGivesUp(t *testing.T) {
	needEmulator(t)
	bucket := newGCSBucket(t, map[string][]byte{"a": storagetest.Content("a", 100_000)})
	p := toxi.NewProxy(t, emuAddr)
	b := newBackend(t, "http://"+p.Addr+"/storage/v1/", gcs.Config{MaxAttempts: 3, MaxBackoff: 10 * time.Millisecond})
	ctx := context.Background()
	info, err := b.Stat(ctx, "gs://"+bucket+"/a")
	if err != nil {
		t.Fatal(err)
	}
	o, err := b.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	p.Add("reset_peer", map[string]any{"timeout": 0})
	err = o.ReadAt(ctx, make([]byte, 50_000), 0)
	if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), info.Name) {
		t.Errorf("read with every connection reset = %v, want storage.ErrUnavailable naming the object", err)
	}
}

// TestObserver checks that every operation reaches Config.Observe.
func TestObserver(t *testing.T) {
	bucket := newGCSBucket(t, map[string][]byte{"a": []byte("abc")})
	var mu sync.Mutex
	ops := map[string]int{}
	b := newBackend(t, "", gcs.Config{Observe: func(op string, _ int64, _ time.Duration, _ error) {
		mu.Lock()
		ops[op]++
		mu.Unlock()
	}})
	ctx := context.Background()
	info, err := b.Stat(ctx, "gs://"+bucket+"/a")
	if err != nil {
		t.Fatal(err)
	}
	o, err := b.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	o.ReadAt(ctx, make([]byte, 2), 0)
	o.Close()
	b.List(ctx, "gs://"+bucket+"/", func(storage.Info) error { return nil })
	mu.Lock()
	defer mu.Unlock()
	for _, op := range []string{gcs.OpStat, gcs.OpOpen, gcs.OpRead, gcs.OpList} {
		if ops[op] == 0 {
			t.Errorf("no %s observed (%v)", op, ops)
		}
	}
}

// TestSilentStore checks that a store that accepts connections and never
// answers fails a Stat with storage.ErrUnavailable after the stall
// timeout and the retries, not at the caller's deadline.
func TestSilentStore(t *testing.T) {
	needEmulator(t)
	p := toxi.NewProxy(t, emuAddr)
	p.Add("timeout", map[string]any{"timeout": 0}) // hold every connection, pass nothing
	b := newBackend(t, "http://"+p.Addr+"/storage/v1/", gcs.Config{MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond, StallTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := b.Stat(ctx, "gs://b/k")
	if !errors.Is(err, storage.ErrUnavailable) || ctx.Err() != nil {
		t.Errorf("Stat of a silent store = %v, want storage.ErrUnavailable before the deadline", err)
	}
	t.Logf("gave up after %v: %v", time.Since(start), err)
}
