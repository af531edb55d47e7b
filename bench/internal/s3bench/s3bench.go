// Package s3bench holds what the benchmark programs share to stand up S3:
// finding the test servers scripts/install-tools.sh installs, running them
// as child processes, versitygw as the store, toxiproxy for latency, and an
// S3 client with the benchmark's credentials.
package s3bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	AccessKey = "scandbench"
	SecretKey = "scandbench-secret-0123456789"
	Region    = "us-east-1"
	Bucket    = "bench"
)

// Tool finds a test server: $env, $SCAND_TOOLS/name, or <repo>/.tools/bin/name.
func Tool(root, env, name string) (string, error) {
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

// FreeAddr is a free 127.0.0.1 port, as host:port.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Process is a child server whose output goes to a log file.
type Process struct {
	Name   string
	Cmd    *exec.Cmd
	Log    string
	Exited chan struct{}
}

// StartProcess starts bin and waits up to 20 s for ready.
func StartProcess(name, dir, bin string, args, env []string, ready func() bool) (*Process, error) {
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
	p := &Process{Name: name, Cmd: cmd, Log: logPath, Exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.Exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.Exited:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("%s exited: %s", name, Tail(out))
		case <-time.After(50 * time.Millisecond):
		}
		if ready() {
			return p, nil
		}
	}
	p.Stop()
	out, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("%s did not come up in 20 s: %s", name, Tail(out))
}

// Stop kills the process and waits for it.
func (p *Process) Stop() {
	p.Cmd.Process.Kill()
	<-p.Exited
}

// Tail is the end of a log, for an error message.
func Tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// HTTPUp says whether u answers at all.
func HTTPUp(u string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// StartVersity starts versitygw on a posix folder under dir and returns it
// and its address.
func StartVersity(root, dir string) (*Process, string, error) {
	bin, err := Tool(root, "SCAND_VERSITYGW", "versitygw")
	if err != nil {
		return nil, "", err
	}
	gw := filepath.Join(dir, "gw")
	if err := os.MkdirAll(gw, 0o755); err != nil {
		return nil, "", err
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, "", err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}
	p, err := StartProcess("versitygw", dir, bin, []string{
		"--port", addr, "--access", AccessKey, "--secret", SecretKey, "--keep-alive", "--quiet", "posix", gw,
	}, env, func() bool { return HTTPUp("http://" + addr + "/") })
	return p, addr, err
}

// Toxiproxy is Toxiproxy's server and its HTTP API.
type Toxiproxy struct {
	*Process
	API string
}

func StartToxiproxy(root, dir string) (*Toxiproxy, error) {
	bin, err := Tool(root, "SCAND_TOXIPROXY", "server")
	if err != nil {
		return nil, err
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(addr)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	p, err := StartProcess("toxiproxy", dir, bin, []string{"-host", host, "-port", port}, env,
		func() bool { return HTTPUp("http://" + addr + "/version") })
	if err != nil {
		return nil, err
	}
	return &Toxiproxy{Process: p, API: "http://" + addr}, nil
}

func (t *Toxiproxy) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, t.API+path, rd)
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

// LatencyProxy makes a proxy to upstream that delays every response by
// latency (a "latency" toxic on the downstream stream: each chunk of the
// response is held latency after it arrives, so throughput is unchanged) and
// returns its address.
func (t *Toxiproxy) LatencyProxy(upstream string, latency time.Duration) (string, error) {
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

// S3Client is a path-style client of endpoint with the benchmark's keys.
func S3Client(endpoint string) *awss3.Client {
	return awss3.New(awss3.Options{
		Region:                     Region,
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// Upload puts the file at path into Bucket under key.
func Upload(ctx context.Context, c *awss3.Client, key, path string) error {
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
		Bucket: aws.String(Bucket), Key: aws.String(key), Body: f, ContentLength: aws.Int64(st.Size()),
	})
	if err != nil {
		return fmt.Errorf("upload %s: %w", key, err)
	}
	return nil
}

// HTTPGet is the body of u.
func HTTPGet(u string) (string, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// BandwidthProxy makes a proxy named name to upstream whose responses are
// limited to rate bytes per second (a "bandwidth" toxic on the downstream
// stream; toxiproxy counts in KB/s) and delayed by latency, and returns its
// address. One per server stands in for each node's own network link.
func (t *Toxiproxy) BandwidthProxy(name, upstream string, rate int64, latency time.Duration) (string, error) {
	var created struct {
		Listen string `json:"listen"`
	}
	if err := t.call("POST", "/proxies", map[string]any{
		"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true,
	}, &created); err != nil {
		return "", err
	}
	toxics := []map[string]any{{
		"name": "bandwidth", "type": "bandwidth", "stream": "downstream", "toxicity": 1.0,
		"attributes": map[string]any{"rate": max(rate/1000, 1)},
	}}
	if latency > 0 {
		toxics = append(toxics, map[string]any{
			"name": "latency", "type": "latency", "stream": "downstream", "toxicity": 1.0,
			"attributes": map[string]any{"latency": latency.Milliseconds(), "jitter": 0},
		})
	}
	for _, toxic := range toxics {
		if err := t.call("POST", "/proxies/"+name+"/toxics", toxic, nil); err != nil {
			return "", err
		}
	}
	return created.Listen, nil
}

// ScandBinary is the scand binary a benchmark runs: given, else
// <repo>/.tools/bin/scand (which scripts/bench.sh builds), else one built
// from the tree at root into dir.
func ScandBinary(root, dir, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if p := filepath.Join(root, ".tools", "bin", "scand"); fileExists(p) {
		return p, nil
	}
	out := filepath.Join(dir, "scand")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/scand")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building scand: %w", err)
	}
	return out, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Stack is what an S3 benchmark runs on: a scratch folder, the scand
// binary, versitygw and toxiproxy. Stop ends the processes and removes the
// folder.
type Stack struct {
	Dir         string
	Bin         string // scand
	GatewayAddr string // versitygw, host:port
	Toxiproxy   *Toxiproxy
	gw          *Process
}

// StartStack makes a scratch folder named after name, finds or builds the
// scand binary (ScandBinary's given), and starts versitygw and toxiproxy.
func StartStack(root, name, given string) (st *Stack, err error) {
	dir, err := os.MkdirTemp("", "scand-"+name+"-")
	if err != nil {
		return nil, err
	}
	st = &Stack{Dir: dir}
	defer func() {
		if err != nil {
			st.Stop()
		}
	}()
	if st.Bin, err = ScandBinary(root, dir, given); err != nil {
		return nil, err
	}
	if st.gw, st.GatewayAddr, err = StartVersity(root, dir); err != nil {
		return nil, err
	}
	if st.Toxiproxy, err = StartToxiproxy(root, dir); err != nil {
		return nil, err
	}
	return st, nil
}

// Stop stops what StartStack started and removes its folder.
func (st *Stack) Stop() {
	if st.Toxiproxy != nil {
		st.Toxiproxy.Stop()
	}
	if st.gw != nil {
		st.gw.Stop()
	}
	os.RemoveAll(st.Dir)
}
