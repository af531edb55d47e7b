package azure_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/azure"
	"github.com/scand/scand/storage/internal/testenv"
	"github.com/scand/scand/storage/storagetest"
)

// TestAcceptance runs the storage contract suite against Azurite.
func TestAcceptance(t *testing.T) {
	needEmulator(t)
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		ctr := newContainer(t, objects)
		return testenv.Rel{B: newBackend(t, "", azure.Config{}), Base: "az://" + ctr + "/"}
	})
}

// TestAcceptanceSmallPages runs the suite again with two names per List
// Blobs page, so every listing crosses page boundaries.
func TestAcceptanceSmallPages(t *testing.T) {
	needEmulator(t)
	if testing.Short() {
		t.Skip("-short")
	}
	storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
		ctr := newContainer(t, objects)
		return testenv.Rel{B: newBackend(t, "", azure.Config{ListPageSize: 2}), Base: "az://" + ctr + "/"}
	})
}

// TestConnectionString reads with the credentials of a connection string,
// as AZURE_STORAGE_CONNECTION_STRING gives them.
func TestConnectionString(t *testing.T) {
	ctr := newContainer(t, map[string][]byte{"dir/a": []byte("abcdef")})
	b, err := azure.New(context.Background(), azure.Config{ConnectionString: connString(emuAddr)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var infos []storage.Info
	if err := b.List(ctx, "az://"+ctr+"/dir/", func(info storage.Info) error {
		infos = append(infos, info)
		return nil
	}); err != nil || len(infos) != 1 {
		t.Fatalf("List = %v, %v", infos, err)
	}
	o, err := b.Open(ctx, infos[0])
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	p := make([]byte, 3)
	if err := o.ReadAt(ctx, p, 2); err != nil || string(p) != "cde" {
		t.Errorf("ReadAt = %q, %v", p, err)
	}
	// The connection string names the account: abfss names of it resolve.
	if got, err := b.Canonical("abfss://" + ctr + "@" + account + ".dfs.core.windows.net/dir/a"); err != nil || got != infos[0].Name {
		t.Errorf("Canonical(abfss) = %q, %v; want %q", got, err, infos[0].Name)
	}
}

// TestAliases checks that Spark's and Hadoop's spellings name the same
// blobs, through a storage.Mux as the server uses it, and that another
// account's are refused.
func TestAliases(t *testing.T) {
	ctr := newContainer(t, map[string][]byte{
		"events/2026-01/part-0.parquet": []byte("a"),
		"events/2026-01/_SUCCESS":       nil,
		"events/2026-02/part-0.parquet": []byte("bb"),
	})
	b := newBackend(t, "", azure.Config{})
	mux := &storage.Mux{}
	mux.Handle(azure.Scheme, b)
	for _, s := range azure.AliasSchemes {
		mux.Handle(s, b)
	}
	want := "az://" + ctr + "/events/2026-01/part-0.parquet,az://" + ctr + "/events/2026-02/part-0.parquet"
	for _, pattern := range []string{
		"az://" + ctr + "/events/",
		"abfss://" + ctr + "@" + account + ".dfs.core.windows.net/events/**/*.parquet",
		"wasbs://" + ctr + "@" + account + ".blob.core.windows.net/events/*/",
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
		if strings.Join(got, ",") != want {
			t.Errorf("Expand(%q) = %q, want %s", pattern, got, want)
		}
	}
	if _, err := mux.Canonical("abfss://" + ctr + "@other.dfs.core.windows.net/x"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("another account's name = %v, want fs.ErrPermission", err)
	}
	if _, err := mux.Canonical("abfss://" + account + ".dfs.core.windows.net/x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("a name without a container = %v, want fs.ErrInvalid", err)
	}
}

// TestChanged overwrites a blob between planning and reading: Azurite
// answers If-Match with 412; the backup check of the response's ETag is
// tested through a proxy that drops If-Match, as a store that ignores it
// would.
func TestChanged(t *testing.T) {
	ctr := newContainer(t, nil)
	name := "az://" + ctr + "/a.bin"
	dropping := newDropIfMatchProxy(t)
	for _, tc := range []struct {
		what string
		addr string
		msg  string
	}{
		{"If-Match (412)", "", "If-Match failed"},
		{"response ETag", dropping, "planned"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			cfg := azure.Config{}
			if tc.addr != "" {
				cfg.SAS = accountSAS(t)
			}
			b := newBackend(t, tc.addr, cfg)
			ctx := context.Background()
			put(t, ctr, "a.bin", bytes.Repeat([]byte("x"), 1000))
			info, err := b.Stat(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			o, err := b.Open(ctx, info)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if err := o.ReadAt(ctx, make([]byte, 10), 0); err != nil {
				t.Fatalf("read before the change: %v", err)
			}
			put(t, ctr, "a.bin", bytes.Repeat([]byte("y"), 1000))
			err = o.ReadAt(ctx, make([]byte, 10), 0)
			if !errors.Is(err, storage.ErrChanged) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("read after the change = %v, want storage.ErrChanged naming %s (%s)", err, name, tc.msg)
			}
			if _, err := b.Open(ctx, storage.Info{Name: name, Version: info.Version}); !errors.Is(err, storage.ErrChanged) {
				t.Errorf("Open with the old version = %v, want storage.ErrChanged", err)
			}
		})
	}
}

// newDropIfMatchProxy is a fault-injecting proxy in front of Azurite that
// removes If-Match from requests, as a store that ignores it would, and
// returns its host:port. A shared key signs If-Match, so the backend
// behind this proxy authenticates with a SAS, which signs the URL only.
func newDropIfMatchProxy(t *testing.T) string {
	t.Helper()
	needEmulator(t)
	up, _ := url.Parse("http://" + emuAddr)
	rp := httputil.NewSingleHostReverseProxy(up)
	director := rp.Director
	rp.Director = func(r *http.Request) {
		director(r)
		r.Header.Del("If-Match")
	}
	s := httptest.NewServer(rp)
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// accountSAS returns a read and list SAS of the development account,
// valid for an hour.
func accountSAS(t *testing.T) string {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(account, accountKey)
	if err != nil {
		t.Fatal(err)
	}
	q, err := sas.AccountSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		ExpiryTime:    time.Now().Add(time.Hour),
		Permissions:   (&sas.AccountPermissions{Read: true, List: true}).String(),
		ResourceTypes: (&sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String(),
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	return q.Encode()
}

func TestNotFound(t *testing.T) {
	ctr := newContainer(t, map[string][]byte{"a": []byte("a")})
	b := newBackend(t, "", azure.Config{})
	ctx := context.Background()
	_, err := b.Stat(ctx, "az://"+ctr+"/missing")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no such blob") {
		t.Errorf("Stat(missing blob) = %v, want fs.ErrNotExist saying no such blob", err)
	}
	_, err = b.Stat(ctx, "az://no-such-container/a")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), `container "no-such-container" does not exist`) {
		t.Errorf("Stat(missing container) = %v, want fs.ErrNotExist naming the container", err)
	}
	err = b.List(ctx, "az://no-such-container/", func(storage.Info) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("List(missing container) = %v, want fs.ErrNotExist", err)
	}
}

// TestBadCredentials uses a wrong account key: a permission error naming
// the blob, without the key or the endpoint.
func TestBadCredentials(t *testing.T) {
	ctr := newContainer(t, map[string][]byte{"a": []byte("a")})
	wrong := "d3Jvbmcta2V5LWZvci10ZXN0aW5nLW9ubHktMDEyMzQ1Njc4OQ=="
	b := newBackend(t, "", azure.Config{Key: wrong, MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond})
	ctx := context.Background()
	name := "az://" + ctr + "/a"
	_, err := b.Stat(ctx, name)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), name) {
		t.Errorf("Stat with a wrong key = %v, want fs.ErrPermission naming the blob", err)
	}
	err = b.List(ctx, "az://"+ctr+"/", func(storage.Info) error { return nil })
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("List with a wrong key = %v, want fs.ErrPermission", err)
	}
	if err != nil && (strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), emuAddr)) {
		t.Errorf("the error quotes the key or the endpoint: %v", err)
	}
}

// TestEndpointDown checks that a store that cannot be reached fails with
// storage.ErrUnavailable once the retries are spent.
func TestEndpointDown(t *testing.T) {
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(t, addr, azure.Config{MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond})
	start := time.Now()
	_, err = b.Stat(context.Background(), "az://c/k")
	if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), "az://c/k") {
		t.Errorf("Stat with the store down = %v, want storage.ErrUnavailable naming the blob", err)
	}
	if err != nil && strings.Contains(err.Error(), addr) {
		t.Errorf("the error quotes the endpoint: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

// TestFaults reads through toxiproxy: latency, and connections cut
// mid-body, which the backend resumes with a new ranged GET (If-Match
// kept) of the bytes still missing.
func TestFaults(t *testing.T) {
	needEmulator(t)
	data := storagetest.Content("big", 3<<20)
	ctr := newContainer(t, map[string][]byte{"big": data})
	p := toxi.NewProxy(t, emuAddr)
	var mu sync.Mutex
	retries := 0
	b := newBackend(t, p.Addr, azure.Config{
		MaxBackoff: 20 * time.Millisecond,
		Observe: func(op string, _ int64, _ time.Duration, _ error) {
			if op == azure.OpRetry {
				mu.Lock()
				retries++
				mu.Unlock()
			}
		},
	})
	ctx := context.Background()
	o, err := b.Open(ctx, storage.Info{Name: "az://" + ctr + "/big"})
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
	p.Add("limit_data", map[string]any{"bytes": 256 << 10})
	buf = make([]byte, len(data)-10)
	if err := o.ReadAt(ctx, buf, 10); err != nil {
		t.Fatalf("read through cut connections: %v", err)
	}
	if !bytes.Equal(buf, data[10:]) {
		t.Fatal("read through cut connections: wrong bytes")
	}
	mu.Lock()
	defer mu.Unlock()
	if retries == 0 {
		t.Error("no read was resumed")
	}
}

// TestGivesUp checks a read whose every request dies: it fails with
// storage.ErrUnavailable, naming the blob.
func TestGivesUp(t *testing.T) {
	needEmulator(t)
	ctr := newContainer(t, map[string][]byte{"a": storagetest.Content("a", 100_000)})
	p := toxi.NewProxy(t, emuAddr)
	b := newBackend(t, p.Addr, azure.Config{MaxAttempts: 3, MaxBackoff: 10 * time.Millisecond})
	ctx := context.Background()
	info, err := b.Stat(ctx, "az://"+ctr+"/a")
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
		t.Errorf("read with every connection reset = %v, want storage.ErrUnavailable naming the blob", err)
	}
}

// TestSilentStore checks that a store that accepts connections and never
// answers fails a Stat with storage.ErrUnavailable after the stall
// timeout and the retries, not at the caller's deadline.
func TestSilentStore(t *testing.T) {
	needEmulator(t)
	p := toxi.NewProxy(t, emuAddr)
	p.Add("timeout", map[string]any{"timeout": 0}) // hold every connection, pass nothing
	b := newBackend(t, p.Addr, azure.Config{MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond, StallTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := b.Stat(ctx, "az://c/k")
	if !errors.Is(err, storage.ErrUnavailable) || ctx.Err() != nil {
		t.Errorf("Stat of a silent store = %v, want storage.ErrUnavailable before the deadline", err)
	}
	t.Logf("gave up after %v: %v", time.Since(start), err)
}
