package main

// The S3 stand-ins of bench/filter: versitygw, toxiproxy with a latency
// toxic, and a counting proxy in front of them. Adapted from
// bench/iosched/tools.go (package main there, so not importable); the
// counting proxy here also counts requests per object, which target (a)
// needs.

import (
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scand/scand/bench/internal/repo"
	"github.com/scand/scand/bench/internal/s3bench"
)

// The S3 test servers and client are bench/internal/s3bench's, shared with
// the other benchmark programs; process is its child process.
type process = s3bench.Process

// repoRoot finds the scand module root from the working directory.
func repoRoot() (string, error) { return repo.Root() }

// counts are the requests a counting proxy saw.
type counts struct {
	Gets, Heads, Lists, Other int64
	Bytes                     int64 // response body bytes of object GETs
	// PerKey: object GETs and HEADs by key (bucket-relative).
	PerKey map[string]int64
}

// sub returns the requests seen since o.
func (c counts) sub(o counts) counts {
	d := counts{c.Gets - o.Gets, c.Heads - o.Heads, c.Lists - o.Lists, c.Other - o.Other, c.Bytes - o.Bytes, map[string]int64{}}
	for k, n := range c.PerKey {
		if n -= o.PerKey[k]; n > 0 {
			d.PerKey[k] = n
		}
	}
	return d
}

// countingProxy is an HTTP reverse proxy in front of the S3 endpoint that
// counts requests by kind and by object and the bytes of object GET
// responses, so that scand and pyarrow are measured the same way. It is
// safe for concurrent use.
type countingProxy struct {
	gets, heads, lists, other, bytes atomic.Int64
	mu                               sync.Mutex
	perKey                           map[string]int64
	srv                              *http.Server
	addr                             string
}

func startCountingProxy(upstream string) (*countingProxy, error) {
	target, err := url.Parse("http://" + upstream)
	if err != nil {
		return nil, err
	}
	cp := &countingProxy{perKey: map[string]int64{}}
	rp := httputil.NewSingleHostReverseProxy(target) // keeps the client's Host header, which SigV4 signed
	rp.Transport = &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodGet && isObjectPath(resp.Request.URL) && resp.Request.URL.Query().Get("list-type") == "" {
			resp.Body = &countingBody{ReadCloser: resp.Body, n: &cp.bytes}
		}
		return nil
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		object := false
		switch {
		case r.Method == http.MethodHead:
			cp.heads.Add(1)
			object = isObjectPath(r.URL)
		case r.Method == http.MethodGet && (r.URL.Query().Get("list-type") != "" || !isObjectPath(r.URL)):
			cp.lists.Add(1)
		case r.Method == http.MethodGet:
			cp.gets.Add(1)
			object = true
		default:
			cp.other.Add(1)
		}
		if object {
			key := objectKey(r.URL)
			cp.mu.Lock()
			cp.perKey[key]++
			cp.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cp.addr = l.Addr().String()
	cp.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go cp.srv.Serve(l)
	return cp, nil
}

// isObjectPath: path-style /bucket/key (not /bucket or /).
func isObjectPath(u *url.URL) bool {
	p := strings.TrimPrefix(u.Path, "/")
	i := strings.Index(p, "/")
	return i >= 0 && i < len(p)-1
}

// objectKey is the key of a path-style object URL, without the bucket.
func objectKey(u *url.URL) string {
	p := strings.TrimPrefix(u.Path, "/")
	_, key, _ := strings.Cut(p, "/")
	return key
}

func (cp *countingProxy) counts() counts {
	cp.mu.Lock()
	per := make(map[string]int64, len(cp.perKey))
	for k, n := range cp.perKey {
		per[k] = n
	}
	cp.mu.Unlock()
	return counts{cp.gets.Load(), cp.heads.Load(), cp.lists.Load(), cp.other.Load(), cp.bytes.Load(), per}
}

func (cp *countingProxy) endpoint() string { return "http://" + cp.addr }

func (cp *countingProxy) close() { cp.srv.Close() }

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
