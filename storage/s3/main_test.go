package s3_test

// The tests in this package run against a real S3 server: versitygw, an
// S3 gateway over a temporary directory, started once for the package by
// TestMain. Fault tests put toxiproxy between the backend and versitygw.
// Both come from scripts/install-tools.sh; without them the tests that need
// them skip and say so.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"go.uber.org/goleak"

	"github.com/scand/scand/storage/s3"
)

const (
	accessKey   = "scandtest"
	secretKey   = "scandtest-secret-0123456789"
	installHint = "run scripts/install-tools.sh"
)

var (
	// gwAddr is versitygw's host:port; gwErr says why it is not running.
	gwAddr string
	gwErr  error
	gwSkip string
	// admin uploads test objects straight to versitygw.
	admin *awss3.Client

	toxi struct {
		once sync.Once
		addr string // the control API's host:port
		skip string
		err  error
		stop func()
	}
	scratch string // removed when the tests end
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	scratch, err = os.MkdirTemp("", "scand-s3-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(scratch)
	stop := startVersity()
	defer stop()
	defer func() {
		if toxi.stop != nil {
			toxi.stop()
		}
	}()
	code := m.Run()
	if code == 0 {
		// Reads must leave no goroutine behind (watchdogs, bodies). Idle
		// keep-alive connections of the backends' transports may stay.
		if err := goleak.Find(
			goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
			// The waiters of the test servers, which stop after this.
			goleak.IgnoreAnyFunction("github.com/scand/scand/storage/s3_test.startServer.func1"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			return 1
		}
	}
	return code
}

// tool finds a test server: $env, else <repo>/.tools/bin/name.
func tool(env, name string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", env, err)
		}
		return p, nil
	}
	p, err := filepath.Abs(filepath.Join("..", "..", ".tools", "bin", name))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", nil
	}
	return p, nil
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startServer starts a test server and waits until ready answers true,
// for up to 15 s. Its output goes to a log file in scratch, whose tail is
// in the error when the server does not come up. stop kills it.
func startServer(name, bin string, args []string, ready func() bool) (stop func(), err error) {
	logPath := filepath.Join(scratch, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Only what the server needs: versitygw reads ROOT_ACCESS_KEY, VGW_*
	// and AWS_* from the environment.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + scratch, "TMPDIR=" + scratch}
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("%s exited: %s", name, tail(out))
		case <-time.After(50 * time.Millisecond):
		}
		if ready() {
			return func() {
				cmd.Process.Kill()
				<-exited
			}, nil
		}
	}
	cmd.Process.Kill()
	<-exited
	out, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("%s did not come up in 15 s: %s", name, tail(out))
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

func startVersity() (stop func()) {
	stop = func() {}
	bin, err := tool("SCAND_VERSITYGW", "versitygw")
	if err != nil || bin == "" {
		gwErr = err
		gwSkip = "versitygw not found: " + installHint + " or set SCAND_VERSITYGW"
		return stop
	}
	root := filepath.Join(scratch, "gw")
	if err := os.Mkdir(root, 0o755); err != nil {
		gwErr = err
		return stop
	}
	addr, err := freeAddr()
	if err != nil {
		gwErr = err
		return stop
	}
	ctx := context.Background()
	admin = awss3.New(awss3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String("http://" + addr),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	stopGW, err := startServer("versitygw", bin, []string{
		"--port", addr, "--access", accessKey, "--secret", secretKey, "--keep-alive", "--quiet",
		"posix", root,
	}, func() bool {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := admin.ListBuckets(ctx, &awss3.ListBucketsInput{})
		return err == nil
	})
	if err != nil {
		gwErr = err
		return stop
	}
	gwAddr = addr
	return stopGW
}

// needGW skips the test when versitygw is not installed and fails it when
// it is but did not start.
func needGW(t *testing.T) {
	t.Helper()
	switch {
	case gwErr != nil:
		t.Fatalf("versitygw: %v", gwErr)
	case gwSkip != "":
		t.Skip(gwSkip)
	}
}

var bucketSeq atomic.Int64

// newS3Bucket creates a bucket holding objects (key -> content) and returns
// its name.
func newS3Bucket(t *testing.T, objects map[string][]byte) string {
	t.Helper()
	needGW(t)
	ctx := context.Background()
	name := fmt.Sprintf("scand-test-%d", bucketSeq.Add(1))
	if _, err := admin.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("CreateBucket(%s): %v", name, err)
	}
	for key, data := range objects {
		put(t, name, key, data)
	}
	return name
}

func put(t *testing.T, bucket, key string, data []byte) {
	t.Helper()
	if err := putErr(bucket, key, data); err != nil {
		t.Fatal(err)
	}
}

func putErr(bucket, key string, data []byte) error {
	_, err := admin.PutObject(context.Background(), &awss3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return fmt.Errorf("PutObject(%s/%s): %w", bucket, key, err)
	}
	return nil
}

// newBackend returns the backend under test talking to endpoint (versitygw
// when ""), with cfg's other fields as given.
func newBackend(t *testing.T, endpoint string, cfg s3.Config) *s3.Bucket {
	t.Helper()
	needGW(t)
	if endpoint == "" {
		endpoint = "http://" + gwAddr
	}
	cfg.Endpoint = endpoint
	cfg.PathStyle = true
	if cfg.AccessKey == "" {
		cfg.AccessKey, cfg.SecretKey = accessKey, secretKey
	}
	b, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("s3.New: %v", err)
	}
	return b
}

// needToxiproxy starts toxiproxy's server once, or skips the test when it
// is not installed.
func needToxiproxy(t *testing.T) {
	t.Helper()
	needGW(t)
	toxi.once.Do(func() {
		bin, err := tool("SCAND_TOXIPROXY", "server")
		if err != nil || bin == "" {
			toxi.err = err
			toxi.skip = "toxiproxy (server) not found: " + installHint + " or set SCAND_TOXIPROXY"
			return
		}
		addr, err := freeAddr()
		if err != nil {
			toxi.err = err
			return
		}
		host, port, _ := net.SplitHostPort(addr)
		toxi.stop, toxi.err = startServer("toxiproxy", bin, []string{"-host", host, "-port", port}, func() bool {
			resp, err := http.Get("http://" + addr + "/version")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		toxi.addr = addr
	})
	switch {
	case toxi.err != nil:
		t.Fatalf("toxiproxy: %v", toxi.err)
	case toxi.skip != "":
		t.Skip(toxi.skip)
	}
}

// proxy is one toxiproxy proxy in front of versitygw.
type proxy struct {
	t    *testing.T
	name string
	addr string // where it listens
}

var proxySeq atomic.Int64

// newProxy creates a proxy to versitygw, deleted when the test ends.
func newProxy(t *testing.T) *proxy {
	t.Helper()
	needToxiproxy(t)
	p := &proxy{t: t, name: fmt.Sprintf("gw%d", proxySeq.Add(1))}
	var created struct {
		Listen string `json:"listen"`
	}
	toxiAPI(t, "POST", "/proxies", map[string]any{
		"name": p.name, "listen": "127.0.0.1:0", "upstream": gwAddr, "enabled": true,
	}, &created)
	p.addr = created.Listen
	t.Cleanup(func() { toxiAPI(t, "DELETE", "/proxies/"+p.name, nil, nil) })
	return p
}

func (p *proxy) endpoint() string { return "http://" + p.addr }

// add adds a toxic to the responses (downstream) and returns its name.
func (p *proxy) add(typ string, attributes map[string]any) string {
	p.t.Helper()
	name := fmt.Sprintf("%s-%d", typ, proxySeq.Add(1))
	toxiAPI(p.t, "POST", "/proxies/"+p.name+"/toxics", map[string]any{
		"name": name, "type": typ, "stream": "downstream", "toxicity": 1.0, "attributes": attributes,
	}, nil)
	return name
}

func (p *proxy) remove(toxic string) {
	p.t.Helper()
	toxiAPI(p.t, "DELETE", "/proxies/"+p.name+"/toxics/"+toxic, nil, nil)
}

// toxiAPI calls toxiproxy's HTTP API. It may be called from any goroutine:
// it reports failures with t.Errorf.
func toxiAPI(t *testing.T, method, path string, body, out any) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Errorf("toxiproxy %s %s: %v", method, path, err)
			return
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+toxi.addr+path, rd)
	if err != nil {
		t.Errorf("toxiproxy %s %s: %v", method, path, err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("toxiproxy %s %s: %v", method, path, err)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Errorf("toxiproxy %s %s: %s: %s", method, path, resp.Status, data)
		return
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Errorf("toxiproxy %s %s: %v", method, path, err)
		}
	}
}

// recorder is a WrapTransport that records the GETs the backend sends.
type recorder struct {
	mu    sync.Mutex
	gets  []recorded
	heads int
}

type recorded struct{ Range, IfMatch string }

func (r *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		r.mu.Lock()
		switch {
		case req.Method == http.MethodGet && req.Header.Get("Range") != "":
			r.gets = append(r.gets, recorded{Range: req.Header.Get("Range"), IfMatch: req.Header.Get("If-Match")})
		case req.Method == http.MethodHead:
			r.heads++
		}
		r.mu.Unlock()
		return next.RoundTrip(req)
	})
}

func (r *recorder) headCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.heads
}

func (r *recorder) ranged() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.gets...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// observed counts Observer calls by operation.
type observed struct {
	mu      sync.Mutex
	ops     map[string]int
	onRetry func(err error)
}

func (o *observed) observe(op string, _ int64, _ time.Duration, err error) {
	o.mu.Lock()
	if o.ops == nil {
		o.ops = map[string]int{}
	}
	o.ops[op]++
	f := o.onRetry
	o.mu.Unlock()
	if op == s3.OpRetry && f != nil {
		f(err)
	}
}

func (o *observed) count(op string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ops[op]
}
