package main

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The counting proxy of bench/iosched (tools.go), trimmed to what this
// program prints: object GETs and LISTs, whoever sends them.

// counts are the requests a counting proxy saw.
type counts struct{ Gets, Lists, Other int64 }

func (c counts) sub(o counts) counts {
	return counts{c.Gets - o.Gets, c.Lists - o.Lists, c.Other - o.Other}
}

// countingProxy is an HTTP reverse proxy in front of the S3 endpoint that
// counts requests by kind, so that scand and pyarrow are measured the same
// way.
type countingProxy struct {
	gets, lists, other atomic.Int64
	srv                *http.Server
	addr               string

	mu     sync.Mutex
	record bool       // keep a timeline (startTimeline)
	spans  []httpSpan // the requests of the timeline
	t0     time.Time  // the timeline's start
}

// httpSpan is one request of a timeline: when it reached the proxy and
// when its response was done, relative to the timeline's start.
type httpSpan struct {
	list       bool
	start, end time.Duration
}

func startCountingProxy(upstream string) (*countingProxy, error) {
	target, err := url.Parse("http://" + upstream)
	if err != nil {
		return nil, err
	}
	cp := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target) // keeps the client's Host header, which SigV4 signed
	rp.Transport = &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: 90 * time.Second, DisableCompression: true}
	rp.FlushInterval = -1
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && (r.URL.Query().Get("list-type") != "" || !isObjectPath(r.URL)):
			cp.lists.Add(1)
		case r.Method == http.MethodGet:
			cp.gets.Add(1)
		default:
			cp.other.Add(1)
		}
		start := time.Now()
		rp.ServeHTTP(w, r)
		cp.note(r.Method == http.MethodGet && (r.URL.Query().Get("list-type") != "" || !isObjectPath(r.URL)), start)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cp.addr = l.Addr().String()
	cp.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
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
	return counts{cp.gets.Load(), cp.lists.Load(), cp.other.Load()}
}

func (cp *countingProxy) endpoint() string { return "http://" + cp.addr }

// note adds a request to the timeline, when one is kept.
func (cp *countingProxy) note(list bool, start time.Time) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.record {
		cp.spans = append(cp.spans, httpSpan{list: list, start: start.Sub(cp.t0), end: time.Since(cp.t0)})
	}
}

// startTimeline starts keeping every request's span.
func (cp *countingProxy) startTimeline() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.record, cp.spans, cp.t0 = true, nil, time.Now()
}

// stopTimeline stops keeping spans and returns them.
func (cp *countingProxy) stopTimeline() []httpSpan {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.record = false
	return cp.spans
}
