package k8s_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	appsv1 "k8s.io/api/apps/v1"
)

// buildTimeout bounds `go build ./cmd/scand` on a loaded 2-core machine
// with a cold cache.
const buildTimeout = 8 * time.Minute

// binDir holds the built binary, once built; TestMain removes it.
var binDir string

var scandBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "scand-k8s-test-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "scand")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/scand/scand/cmd/scand")
	cmd.Dir = ".." // the module root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/scand: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds cmd/scand once per test binary (skipped under -short).
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not building cmd/scand")
	}
	bin, err := scandBin()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// processEnv is the environment of the container as a list, with Kubernetes'
// $(VAR) expansion applied to args, and nothing of the test's own
// environment but PATH: a SCAND_* variable of the machine must not leak in.
// AWS_EC2_METADATA_DISABLED keeps the AWS SDK from reaching for instance
// metadata, an address off this machine.
func processEnv(cfg config, home string) ([]string, []string) {
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none")}
	for k, v := range cfg.env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	args := make([]string, len(cfg.args))
	for i, a := range cfg.args {
		for k, v := range cfg.env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		args[i] = a
	}
	return env, args
}

// overlayConfigs builds each kustomization and returns its Deployment and
// resolved container configuration.
func overlayConfigs(t *testing.T) map[string]struct {
	d   *appsv1.Deployment
	cfg config
} {
	t.Helper()
	out := map[string]struct {
		d   *appsv1.Deployment
		cfg config
	}{}
	for _, dir := range kustomizations {
		o := build(t, dir)
		d := only[*appsv1.Deployment](t, o)
		out[dir] = struct {
			d   *appsv1.Deployment
			cfg config
		}{d, containerConfig(t, o, scandContainer(t, d))}
	}
	return out
}

// TestServeFlagsParse runs `scand serve ARGS --help` with the container's
// environment. The flag package handles --help only once every flag before
// it parsed (a value it refused, or an unknown flag, exits 2 first), and
// SCAND_* variables are applied and checked before any argument, so exit
// 0 means the args and the environment parse with serve's real flag set.
// checkArgs makes sure no argument is positional, which --help would hide.
func TestServeFlagsParse(t *testing.T) {
	bin := binary(t)
	run := func(env, args []string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append([]string{"serve"}, args...), "--help")...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("scand serve --help did not exit: %v\n%s", ctx.Err(), out.String())
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), out.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, out.String()
	}
	for dir, oc := range overlayConfigs(t) {
		env, args := processEnv(oc.cfg, t.TempDir())
		if code, out := run(env, args); code != 0 || !strings.Contains(out, "Usage: scand serve") {
			t.Errorf("%s: scand serve %q --help exited %d:\n%s", dir, args, code, out)
		}
		// The method detects what it should: a bad flag, a bad value, a
		// bad variable.
		for name, bad := range map[string]struct{ env, args []string }{
			"unknown flag": {env, append(slices.Clone(args), "--no-such-flag=1")},
			"bad value":    {env, append(slices.Clone(args), "--io-memory=lots")},
			"bad variable": {append(slices.Clone(env), "SCAND_IO_CONCURRENCY=many"), args},
		} {
			if code, out := run(bad.env, bad.args); code != 2 {
				t.Errorf("%s: %s: exited %d, want 2 (usage):\n%s", dir, name, code, out)
			}
		}
	}
}

// TestServeStarts runs scand with each kustomization's args and
// environment for real: the files the flags name are replaced by generated
// ones of the same kind (the mount paths by a temporary directory), the
// ports by free ones (the host part, all interfaces, is kept, so serve's
// check that a non-loopback listener has TLS and authentication runs). It
// waits for gRPC health to answer SERVING over TLS as the readiness probe
// asks it (no certificate verification), for /metrics as the liveness
// probe asks it, then sends SIGTERM and expects a clean exit within the
// stop grace.
func TestServeStarts(t *testing.T) {
	bin := binary(t)
	for dir, oc := range overlayConfigs(t) {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			tmp := t.TempDir()
			cfg := remapConfig(t, oc.d, oc.cfg, tmp)
			env, args := processEnv(cfg, tmp)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append([]string{"serve"}, args...)...)
			cmd.Env = env
			logs := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = logs, logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			stopped := false
			defer func() {
				if !stopped {
					cmd.Process.Kill()
					<-done
				}
				if t.Failed() {
					t.Logf("scand serve %q:\n%s", args, logs.String())
				}
			}()
			grpcPort := waitFor(t, logs, done, regexp.MustCompile(`scand serving \S+ on grpc\+tls://\S*?:(\d+)`))
			metricsPort := waitFor(t, logs, done, regexp.MustCompile(`metrics on http://\S*?:(\d+)/metrics`))
			if m := regexp.MustCompile(`.*scand serving.*`).FindString(logs.String()); m != "" {
				t.Log(m)
			}

			conn, err := grpc.NewClient("127.0.0.1:"+grpcPort,
				grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}))) // as grpc_health_probe -tls-no-verify
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
			defer hcancel()
			resp, err := healthpb.NewHealthClient(conn).Check(hctx, &healthpb.HealthCheckRequest{})
			if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("gRPC health over TLS without credentials: %v, %v", resp, err)
			}
			hr, err := http.Get("http://127.0.0.1:" + metricsPort + "/metrics")
			if err != nil {
				t.Fatalf("liveness: %v", err)
			}
			hr.Body.Close()
			if hr.StatusCode != http.StatusOK {
				t.Fatalf("liveness: GET /metrics: %s", hr.Status)
			}

			start := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				stopped = true
				if err != nil {
					t.Errorf("scand exited after SIGTERM with %v", err)
				}
			case <-time.After((stopGraceSeconds + graceMargin) * time.Second):
				t.Errorf("scand did not exit within %d s of SIGTERM", stopGraceSeconds+graceMargin)
			}
			t.Logf("stopped in %v", time.Since(start).Round(time.Millisecond))
		})
	}
}

// waitFor waits for a log line matching re and returns its first group.
func waitFor(t *testing.T, logs *syncBuffer, done <-chan error, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("scand exited before logging %s: %v", re, err)
		case <-deadline:
			t.Fatalf("scand did not log %s within 30 s", re)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// remapConfig points the flags that name mounted files at generated files
// under tmp, --root at an empty directory, and the listen ports at 0.
func remapConfig(t *testing.T, d *appsv1.Deployment, cfg config, tmp string) config {
	t.Helper()
	c := scandContainer(t, d)
	out := config{env: map[string]string{}}
	for k, v := range cfg.env {
		out.env[k] = v
	}
	set := func(name, v string) {
		delete(out.env, envName(name))
		out.args = append(out.args, "--"+name+"="+v)
	}
	for _, a := range cfg.args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !slices.Contains(fileFlags, name) && !slices.Contains([]string{"root", "listen", "metrics-listen", "cache-dir"}, name) {
			out.args = append(out.args, a)
		}
	}
	cert, key := selfSigned(t)
	fixtures := map[string][]byte{
		"tls-cert":        cert,
		"tls-key":         key,
		"peer-ca":         cert, // self-signed: its own CA
		"ticket-key-file": []byte(base64.StdEncoding.EncodeToString(randBytes(t, 32)) + "\n"),
		"identities": fmt.Appendf(nil, "identities:\n  - name: test\n    token_sha256: [%s]\n    roots: [\".\"]\n",
			hex.EncodeToString(sha256Sum(randBytes(t, 32)))),
	}
	for _, f := range fileFlags {
		p, ok := cfg.flag(f)
		if !ok || p == "" {
			continue
		}
		data, ok := fixtures[f]
		if !ok {
			t.Fatalf("--%s is set; the test has no fixture for it yet", f)
		}
		m, rel := mountOf(c, p)
		if m == nil {
			t.Fatalf("--%s=%s is on no mount", f, p)
		}
		local := filepath.Join(tmp, "mounts", m.Name, rel)
		if err := os.MkdirAll(filepath.Dir(local), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(local, data, 0o400); err != nil {
			t.Fatal(err)
		}
		set(f, local)
	}
	root := filepath.Join(tmp, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	set("root", root)
	if v, ok := cfg.flag("cache-dir"); ok && v != "" {
		set("cache-dir", filepath.Join(tmp, "cache")) // not the host's /var/cache
	}
	for _, f := range []string{"listen", "metrics-listen"} {
		if v, ok := cfg.flag(f); ok {
			host := v[:strings.LastIndex(v, ":")]
			set(f, host+":0")
		}
	}
	return out
}

func randBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func sha256Sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// selfSigned returns a PEM certificate and key valid for an hour.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "scand"},
		DNSNames:     []string{"scand", "localhost"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// syncBuffer is a bytes.Buffer safe for the process's writes and the
// test's reads at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
