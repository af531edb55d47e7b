package main

// The S3 stand-ins of bench/filter: versitygw, toxiproxy with a latency
// toxic, and a counting proxy in front of them. Adapted from
// bench/iosched/tools.go (package main there, so not importable); the
// counting proxy here also counts requests per object, which target (a)
// needs.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scand/scand/bench/internal/repo"
)

const (
	accessKey = "scandbench"
	secretKey = "scandbench-secret-0123456789"
	region    = "us-east-1"
	bucket    = "bench"
)

// repoRoot finds the scand module root from the working directory.
func repoRoot() (string, error) { return repo.Root() }

// tool finds a test server: $env, $SCAND_TOOLS/name, or <repo>/.tools/bin/name.
func tool(root, env, name string) (string, error) {
	var cands []string
	if p := os.Getenv(env); p != "" {
		cands = append(cands, p)
	}
	if d := os.Getenv("SCAND_TOOLS"); d != "" {
		cands = append(cands, filepath.Join(d, name))
	}
	cands = append(cands, filepath.Join(root, ".tools", "bin", name))
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s not found (tried %s): run scripts/install-tools.sh", name, strings.Join(cands, ", "))
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// process is a child server whose output goes to a log file.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// startProcess starts bin and waits up to 20 s for ready.
func startProcess(name, dir, bin string, args, env []string, ready func() bool) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("%s exited: %s", name, tail(out))
		case <-time.After(50 * time.Millisecond):
		}
		if ready() {
			return p, nil
		}
	}
	p.stop()
	out, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("%s did not come up in 20 s: %s", name, tail(out))
}

func (p *process) stop() {
	p.cmd.Process.Kill()
	<-p.exited
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

func httpUp(u string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func startVersity(root, dir string) (*process, string, error) {
	bin, err := tool(root, "SCAND_VERSITYGW", "versitygw")
	if err != nil {
		return nil, "", err
	}
	gw := filepath.Join(dir, "gw")
	if err := os.MkdirAll(gw, 0o755); err != nil {
		return nil, "", err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}
	p, err := startProcess("versitygw", dir, bin, []string{
		"--port", addr, "--access", accessKey, "--secret", secretKey, "--keep-alive", "--quiet", "posix", gw,
	}, env, func() bool { return httpUp("http://" + addr + "/") })
	return p, addr, err
}

// toxiproxy is toxiproxy's server and its HTTP API.
type toxiproxy struct {
	*process
	api string
}

func startToxiproxy(root, dir string) (*toxiproxy, error) {
	bin, err := tool(root, "SCAND_TOXIPROXY", "server")
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(addr)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	p, err := startProcess("toxiproxy", dir, bin, []string{"-host", host, "-port", port}, env,
		func() bool { return httpUp("http://" + addr + "/version") })
	if err != nil {
		return nil, err
	}
	return &toxiproxy{process: p, api: "http://" + addr}, nil
}

func (t *toxiproxy) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, t.api+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("toxiproxy %s %s: %s: %s", method, path, resp.Status, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// latencyProxy makes a proxy to upstream that delays every response by
// latency (a "latency" toxic on the downstream stream: each chunk of the
// response is held latency after it arrives, so throughput is unchanged) and
// returns its address.
func (t *toxiproxy) latencyProxy(upstream string, latency time.Duration) (string, error) {
	var created struct {
		Listen string `json:"listen"`
	}
	if err := t.call("POST", "/proxies", map[string]any{
		"name": "s3", "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true,
	}, &created); err != nil {
		return "", err
	}
	if latency > 0 {
		if err := t.call("POST", "/proxies/s3/toxics", map[string]any{
			"name": "latency", "type": "latency", "stream": "downstream", "toxicity": 1.0,
			"attributes": map[string]any{"latency": latency.Milliseconds(), "jitter": 0},
		}, nil); err != nil {
			return "", err
		}
	}
	return created.Listen, nil
}

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

// s3Client is an aws-sdk-go-v2 client for endpoint, path-style.
func s3Client(endpoint string) *awss3.Client {
	return awss3.New(awss3.Options{
		Region:                     region,
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

func upload(ctx context.Context, c *awss3.Client, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	_, err = c.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: f, ContentLength: aws.Int64(st.Size()),
	})
	if err != nil {
		return fmt.Errorf("upload %s: %w", key, err)
	}
	return nil
}
