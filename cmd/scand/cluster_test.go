package main

import (
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAdvertiseFor(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	for name, tc := range map[string]struct {
		f     clusterFlags
		lis   net.Addr
		tls   bool
		want  string
		fails bool
	}{
		"given":           {f: clusterFlags{advertise: "grpc://10.0.0.1:8815"}, lis: tcp("0.0.0.0:8815"), want: "grpc://10.0.0.1:8815"},
		"from listen":     {lis: tcp("127.0.0.1:9000"), want: "grpc://127.0.0.1:9000"},
		"from listen tls": {lis: tcp("10.1.2.3:8815"), tls: true, want: "grpc+tls://10.1.2.3:8815"},
		"all interfaces":  {lis: tcp("0.0.0.0:8815"), fails: true},
		"all v6":          {lis: tcp("[::]:8815"), fails: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := tc.f.advertiseFor(tc.lis, tc.tls)
			if (err != nil) != tc.fails || got != tc.want {
				t.Fatalf("advertiseFor = %q, %v; want %q (fails: %v)", got, err, tc.want, tc.fails)
			}
			if err != nil && !strings.Contains(err.Error(), "--advertise") {
				t.Errorf("error %q does not name the flag", err)
			}
		})
	}
}

// freePorts returns n ports free on 127.0.0.1 a moment ago.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out
}

// TestServePeersExplain runs two replicas with --peers in-process and
// checks that explain on either shows the same placement over both, then
// stops them as SIGTERM would.
func TestServePeersExplain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	root := t.TempDir()
	if _, err := writeDemoData(root); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addrs := freePorts(t, 2)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan int, 2)
	logs := make([]*syncBuffer, 2)
	for i, a := range addrs {
		e, _, log := testEnv(nil)
		logs[i] = log
		go func() {
			served <- run(ctx, []string{"serve", "--root", root, "--listen", a, "--peers", strings.Join(addrs, ","), "--split-bytes", "1", "--ticket-key-file", keys}, e)
		}()
	}
	try := func(addr string) (string, string, bool) {
		e, stdout, stderr := testEnv(nil)
		code := run(ctx, []string{"explain", "--server", "grpc://" + addr, "trips/"}, e)
		return stdout.String(), stderr.String(), code == 0
	}
	placementOf := func(s string) string {
		if i := strings.Index(s, "placement:"); i >= 0 {
			return s[i:]
		}
		return s
	}
	both := func(s string) bool {
		return strings.Contains(s, "grpc://"+addrs[0]+", grpc://"+addrs[1]) || strings.Contains(s, "grpc://"+addrs[1]+", grpc://"+addrs[0])
	}
	var out, other, stderr string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		// Both replicas in each one's placement: each ring has both. Which
		// of them owns which endpoint hangs on the random ports (all 8
		// endpoints go to one of 2 members once in 128 port pairs), so
		// ownership is not asserted. The servers start on goroutines of
		// their own: until they listen, explain is refused, and until each
		// has seen the other answer its health probe, its placement holds
		// itself alone; both are retried.
		var ok, ok1 bool
		out, stderr, ok = try(addrs[0])
		other, _, ok1 = try(addrs[1])
		if ok && ok1 && both(out) && both(other) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("placement never covered both replicas on both:\n%s%s\nvs\n%s\nlogs:\n%s\n%s", out, stderr, other, logs[0], logs[1])
		}
	}
	if !strings.Contains(out, "placement:") || !strings.Contains(out, "owners:") {
		t.Errorf("explain lacks the placement:\n%s", out)
	}
	t.Logf("explain:\n%s", placementOf(out))
	if placementOf(other) != placementOf(out) {
		t.Errorf("the replicas disagree:\n%s\nvs\n%s", placementOf(out), placementOf(other))
	}
	stop()
	for range addrs {
		select {
		case code := <-served:
			if code != 0 {
				t.Errorf("serve exited %d", code)
			}
		case <-time.After(defaultDrainTimeout + 5*time.Second):
			t.Fatal("serve did not stop")
		}
	}
}
