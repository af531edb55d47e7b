package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

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
}

func (c counts) sub(o counts) counts {
	return counts{c.Gets - o.Gets, c.Heads - o.Heads, c.Lists - o.Lists, c.Other - o.Other, c.Bytes - o.Bytes}
}

// countingProxy is an HTTP reverse proxy in front of the S3 endpoint that
// counts requests by kind and the bytes of object GET responses, so that
// scand and pyarrow are measured the same way.
type countingProxy struct {
	gets, heads, lists, other, bytes atomic.Int64
	srv                              *http.Server
	addr                             string
}

func startCountingProxy(upstream string) (*countingProxy, error) {
	target, err := url.Parse("http://" + upstream)
	if err != nil {
		return nil, err
	}
	cp := &countingProxy{}
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
		switch {
		case r.Method == http.MethodHead:
			cp.heads.Add(1)
		case r.Method == http.MethodGet && (r.URL.Query().Get("list-type") != "" || !isObjectPath(r.URL)):
			cp.lists.Add(1)
		case r.Method == http.MethodGet:
			cp.gets.Add(1)
		default:
			cp.other.Add(1)
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

func (cp *countingProxy) counts() counts {
	return counts{cp.gets.Load(), cp.heads.Load(), cp.lists.Load(), cp.other.Load(), cp.bytes.Load()}
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

// measureLink estimates the time to first byte and the bandwidth of the
// path scand reads through, with ranged GETs of 1 byte and of size bytes
// (the best of n each): TTFB = t(1 byte), bandwidth = size / (t(size) - TTFB).
func measureLink(ctx context.Context, c *awss3.Client, key string, size int64, n int) (time.Duration, float64, error) {
	get := func(len int64) (time.Duration, error) {
		best := time.Duration(1<<62 - 1)
		for range n {
			start := time.Now()
			out, err := c.GetObject(ctx, &awss3.GetObjectInput{
				Bucket: aws.String(s3bench.Bucket), Key: aws.String(key), Range: aws.String(fmt.Sprintf("bytes=0-%d", len-1)),
			})
			if err != nil {
				return 0, err
			}
			_, err = io.Copy(io.Discard, out.Body)
			out.Body.Close()
			if err != nil {
				return 0, err
			}
			best = min(best, time.Since(start))
		}
		return best, nil
	}
	ttfb, err := get(1)
	if err != nil {
		return 0, 0, err
	}
	big, err := get(size)
	if err != nil {
		return 0, 0, err
	}
	if big <= ttfb {
		return ttfb, 0, nil
	}
	return ttfb, float64(size) / (big - ttfb).Seconds(), nil
}
