package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// replica is a real gRPC server on 127.0.0.1 with only the health service:
// what Membership talks to.
type replica struct {
	addr   string
	health *health.Server
	srv    *grpc.Server
}

func startReplica(t *testing.T) *replica {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{addr: lis.Addr().String(), health: health.NewServer(), srv: grpc.NewServer()}
	healthpb.RegisterHealthServer(r.srv, r.health)
	go r.srv.Serve(lis)
	t.Cleanup(r.srv.Stop)
	return r
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func fast(cfg Config) Config {
	cfg.CheckInterval, cfg.CheckTimeout, cfg.ResolveInterval, cfg.RetryInterval = 20*time.Millisecond, time.Second, 20*time.Millisecond, 10*time.Millisecond
	cfg.Logger = quiet()
	return cfg
}

// waitRing waits (bounded) for the ring to have exactly want.
func waitRing(t *testing.T, m *Membership, want ...string) {
	t.Helper()
	slices.Sort(want)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := m.Ring().Members()
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ring %q, want %q", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStaticPeers(t *testing.T) {
	a, b := startReplica(t), startReplica(t)
	self := "grpc://127.0.0.1:1" // not listening: self is never checked
	m, err := Start(fast(Config{Self: self, Peers: []string{"127.0.0.1:1", a.addr, b.addr}}))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	waitRing(t, m, self, "grpc://"+a.addr, "grpc://"+b.addr)

	// Draining (NOT_SERVING) leaves the ring; serving again rejoins.
	a.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	waitRing(t, m, self, "grpc://"+b.addr)
	a.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	waitRing(t, m, self, "grpc://"+a.addr, "grpc://"+b.addr)

	// A dead peer leaves it.
	b.srv.Stop()
	waitRing(t, m, self, "grpc://"+a.addr)

	// This replica leaves its own ring while it drains.
	m.SetServing(false)
	waitRing(t, m, "grpc://"+a.addr)
}

// fakeDNS answers LookupHost with what the test sets.
type fakeDNS struct {
	mu    sync.Mutex
	addrs []string
	err   error
}

func (d *fakeDNS) set(addrs []string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs, d.err = addrs, err
}

func (d *fakeDNS) lookup(_ context.Context, host string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.addrs), d.err
}

func TestDNSPeers(t *testing.T) {
	// Two replicas on one IP need distinct ports, and DNS carries no port:
	// give both the same port by listening on two loopback IPs.
	lis1, err1 := net.Listen("tcp", "127.0.0.2:0")
	if err1 != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err1)
	}
	_, port, _ := net.SplitHostPort(lis1.Addr().String())
	lis2, err := net.Listen("tcp", "127.0.0.3:"+port)
	if err != nil {
		lis1.Close()
		t.Skipf("port %s not free on 127.0.0.3: %v", port, err)
	}
	for _, lis := range []net.Listener{lis1, lis2} {
		srv := grpc.NewServer()
		hs := health.NewServer()
		healthpb.RegisterHealthServer(srv, hs)
		go srv.Serve(lis)
		t.Cleanup(srv.Stop)
	}
	dns := &fakeDNS{}
	dns.set([]string{"127.0.0.2"}, nil)
	self := "grpc://127.0.0.9:" + port
	cfg := fast(Config{Self: self, PeersDNS: "scand.test.svc:" + port, LookupHost: dns.lookup})
	m, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	waitRing(t, m, self, "grpc://127.0.0.2:"+port)
	dns.set([]string{"127.0.0.2", "127.0.0.3", "127.0.0.9"}, nil) // self's own record is skipped
	waitRing(t, m, self, "grpc://127.0.0.2:"+port, "grpc://127.0.0.3:"+port)
	// A resolver failure keeps the last answer.
	dns.set(nil, errors.New("SERVFAIL"))
	time.Sleep(100 * time.Millisecond)
	waitRing(t, m, self, "grpc://127.0.0.2:"+port, "grpc://127.0.0.3:"+port)
	// A pod gone from the records leaves the ring.
	dns.set([]string{"127.0.0.3"}, nil)
	waitRing(t, m, self, "grpc://127.0.0.3:"+port)
}

func TestStartRejects(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no self":           {Peers: []string{"a:1"}},
		"self without port": {Self: "grpc://a", Peers: []string{"a:1"}},
		"self bad scheme":   {Self: "http://a:1", Peers: []string{"a:1"}},
		"no peers":          {Self: "grpc://a:1"},
		"both":              {Self: "grpc://a:1", Peers: []string{"a:1"}, PeersDNS: "s:1"},
		"peer without port": {Self: "grpc://a:1", Peers: []string{"b"}},
		"dns without port":  {Self: "grpc://a:1", PeersDNS: "scand.ns.svc"},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := Start(cfg)
			if err == nil {
				m.Close()
				t.Fatal("Start accepted it")
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("error %v is not ErrConfig", err)
			}
		})
	}
}

// TestCloseWhileChecking closes while a check is blocked on a peer that
// accepts connections but never answers; Close must not wait for the
// check's timeout (goleak, in TestMain, sees any goroutine left).
func TestCloseWhileChecking(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	cfg := fast(Config{Self: "grpc://127.0.0.1:1", Peers: []string{lis.Addr().String()}})
	cfg.CheckTimeout = time.Minute
	m, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	m.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if got := m.Ring().Members(); !slices.Equal(got, []string{"grpc://127.0.0.1:1"}) {
		t.Errorf("ring %q: a silent peer must not be a member", got)
	}
}

// TestLateJoiner: a peer that comes up after this replica joins its ring
// within RetryInterval and a reconnect, well before a CheckInterval.
func TestLateJoiner(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nobody there yet
	self := "grpc://127.0.0.1:1"
	m, err := Start(Config{Self: self, Peers: []string{addr}, CheckInterval: 10 * time.Second, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	time.Sleep(700 * time.Millisecond) // a few failed checks and redials
	if lis, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("port taken meanwhile: %v", err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	defer srv.Stop()
	start := time.Now()
	waitRing(t, m, self, "grpc://"+addr)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("joined after %v", d)
	}
}
