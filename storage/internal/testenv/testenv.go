// Package testenv starts the real servers the object store backends' tests
// run against (emulators, toxiproxy) and adapts backends to the acceptance
// suite. It is for tests only.
//
// Servers are found through an environment variable naming the binary, or
// under <repo>/.tools, where scripts/install-tools.sh installs them;
// without them tests skip and say to run that script.
package testenv

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
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scand/scand/storage"
)

// InstallHint says how to get the servers.
const InstallHint = "run scripts/install-tools.sh"

// Repo is the repository's root directory.
func Repo() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Tool finds a test server: $env, else <repo>/rel; "" when neither exists.
func Tool(env, rel string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", env, err)
		}
		return p, nil
	}
	p := filepath.Join(Repo(), rel)
	if _, err := os.Stat(p); err != nil {
		return "", nil
	}
	return p, nil
}

// FreeAddr returns a loopback address with a port that was free a moment
// ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Server is a test server process.
type Server struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts bin with args in dir and waits until ready answers true,
// for up to 30 s. Its output goes to dir/name.log, whose tail is in the
// error when it does not come up.
func Start(name, dir, bin string, args []string, ready func() bool) (*Server, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("%s exited: %s", name, tail(out))
		case <-time.After(50 * time.Millisecond):
		}
		if ready() {
			return s, nil
		}
	}
	s.Stop()
	out, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("%s did not come up in 30 s: %s", name, tail(out))
}

// Stop kills the server and waits for it.
func (s *Server) Stop() {
	if s == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// HTTPUp reports whether anything answers HTTP at url.
func HTTPUp(url string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// Toxiproxy is toxiproxy's server, started once per test binary.
type Toxiproxy struct {
	once sync.Once
	dir  string
	addr string
	skip string
	err  error
	srv  *Server
	seq  atomic.Int64
}

// NewToxiproxy returns a Toxiproxy that starts on first use, logging to dir.
func NewToxiproxy(dir string) *Toxiproxy { return &Toxiproxy{dir: dir} }

// Stop stops the server if it was started.
func (x *Toxiproxy) Stop() { x.srv.Stop() }

// Need starts the server, or skips t when it is not installed.
func (x *Toxiproxy) Need(t testing.TB) {
	t.Helper()
	x.once.Do(func() {
		bin, err := Tool("SCAND_TOXIPROXY", ".tools/bin/server")
		if err != nil || bin == "" {
			x.err = err
			x.skip = "toxiproxy (server) not found: " + InstallHint + " or set SCAND_TOXIPROXY"
			return
		}
		addr, err := FreeAddr()
		if err != nil {
			x.err = err
			return
		}
		host, port, _ := net.SplitHostPort(addr)
		x.srv, x.err = Start("toxiproxy", x.dir, bin, []string{"-host", host, "-port", port}, func() bool {
			return HTTPUp("http://" + addr + "/version")
		})
		x.addr = addr
	})
	switch {
	case x.err != nil:
		t.Fatalf("toxiproxy: %v", x.err)
	case x.skip != "":
		t.Skip(x.skip)
	}
}

// Proxy is one toxiproxy proxy.
type Proxy struct {
	t    testing.TB
	x    *Toxiproxy
	name string
	Addr string // where it listens
}

// NewProxy creates a proxy to upstream (host:port), deleted when the test
// ends.
func (x *Toxiproxy) NewProxy(t testing.TB, upstream string) *Proxy {
	t.Helper()
	x.Need(t)
	p := &Proxy{t: t, x: x, name: fmt.Sprintf("p%d", x.seq.Add(1))}
	var created struct {
		Listen string `json:"listen"`
	}
	x.api(t, "POST", "/proxies", map[string]any{"name": p.name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}, &created)
	p.Addr = created.Listen
	t.Cleanup(func() { x.api(t, "DELETE", "/proxies/"+p.name, nil, nil) })
	return p
}

// Add adds a toxic to the responses (downstream) and returns its name.
func (p *Proxy) Add(typ string, attributes map[string]any) string {
	p.t.Helper()
	name := fmt.Sprintf("%s-%d", typ, p.x.seq.Add(1))
	p.x.api(p.t, "POST", "/proxies/"+p.name+"/toxics", map[string]any{
		"name": name, "type": typ, "stream": "downstream", "toxicity": 1.0, "attributes": attributes,
	}, nil)
	return name
}

// Remove removes a toxic.
func (p *Proxy) Remove(toxic string) {
	p.t.Helper()
	p.x.api(p.t, "DELETE", "/proxies/"+p.name+"/toxics/"+toxic, nil, nil)
}

// Disable cuts the proxy off (connections refused) until Enable.
func (p *Proxy) Disable() {
	p.x.api(p.t, "POST", "/proxies/"+p.name, map[string]any{"enabled": false}, nil)
}

func (x *Toxiproxy) api(t testing.TB, method, path string, body, out any) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+x.addr+path, rd)
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

// Rel adapts a backend whose names are "scheme://bucket/key" to the
// acceptance suite, which names objects by keys: base is
// "scheme://bucket/".
type Rel struct {
	B    storage.Bucket
	Base string
}

func (r Rel) Stat(ctx context.Context, name string) (storage.Info, error) {
	info, err := r.B.Stat(ctx, r.Base+name)
	info.Name = strings.TrimPrefix(info.Name, r.Base)
	return info, err
}

func (r Rel) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	info.Name = r.Base + info.Name
	o, err := r.B.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	return relObject{o, r.Base}, nil
}

func (r Rel) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return r.ListPruned(ctx, prefix, storage.Pruning{}, fn)
}

func (r Rel) Canonical(name string) (string, error) { return name, nil }

func (r Rel) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	strip := func(want func(string) bool) func(string) bool {
		if want == nil {
			return nil
		}
		return func(name string) bool { return want(strings.TrimPrefix(name, r.Base)) }
	}
	p = storage.Pruning{Dir: strip(p.Dir), Object: strip(p.Object)}
	return r.B.ListPruned(ctx, r.Base+prefix, p, func(info storage.Info) error {
		if !strings.HasPrefix(info.Name, r.Base) {
			return fmt.Errorf("listed %q, outside %q", info.Name, r.Base)
		}
		info.Name = strings.TrimPrefix(info.Name, r.Base)
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
