package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Defaults of Config.
const (
	DefaultCheckInterval   = 2 * time.Second
	DefaultCheckTimeout    = 2 * time.Second
	DefaultResolveInterval = 5 * time.Second
	// DefaultRetryInterval is how often a peer not in the ring is checked
	// again, redialing it: a replica that has just started (or restarted)
	// joins within a fraction of a second, not a whole CheckInterval. A
	// peer that is down costs a refused connection (or one that times out
	// after CheckTimeout) per retry.
	DefaultRetryInterval = 50 * time.Millisecond
)

// checkConcurrency bounds the health checks of one round in flight.
const checkConcurrency = 16

// ErrConfig is a Membership configuration that cannot work; the message
// says which part.
var ErrConfig = errors.New("cluster: bad configuration")

// Config configures a Membership. Exactly one of Peers and PeersDNS is set.
type Config struct {
	// Self is this replica's advertised location, scheme://host:port with
	// scheme grpc or grpc+tls; peers are given the same scheme.
	Self string
	// Peers are the replicas as host:port (this one may be among them:
	// the entry equal to Self's host:port is skipped).
	Peers []string
	// PeersDNS is name:port; the name's A/AAAA records are the peers.
	PeersDNS string
	// TLS, when set, is the client configuration peers are checked with
	// (roots, and a client certificate under mutual TLS); ServerName is
	// set per peer list: the host of each --peers entry, or PeersDNS's
	// name. Nil dials plaintext.
	TLS *tls.Config
	// Intervals and the timeout of one check; 0 = the defaults.
	CheckInterval, CheckTimeout, ResolveInterval, RetryInterval time.Duration
	// Logger receives membership changes and resolver failures.
	Logger *slog.Logger
	// LookupHost resolves PeersDNS's name to addresses; nil =
	// net.DefaultResolver.LookupHost. Tests replace it.
	LookupHost func(ctx context.Context, host string) ([]string, error)
}

// Membership keeps the ring of healthy replicas current (see the package
// doc). Its methods are safe for concurrent use.
type Membership struct {
	cfg      Config
	scheme   string // of Self, given to every peer
	selfAddr string // Self's host:port

	mu      sync.Mutex
	peers   map[string]*peer // by host:port
	serving bool
	last    []string // the members last logged

	cancel context.CancelFunc
	done   chan struct{}
}

// peer is one replica other than this one.
type peer struct {
	addr    string
	conn    *grpc.ClientConn
	healthy bool
}

// Start checks cfg and starts keeping the ring; Close stops it. Self is
// in the ring from the start. The first resolution and checks run in the
// background, so Start never waits for DNS or peers.
func Start(cfg Config) (*Membership, error) {
	scheme, selfAddr, err := ParseLocation(cfg.Self)
	if err != nil {
		return nil, fmt.Errorf("%w: advertise address: %w", ErrConfig, err)
	}
	if (len(cfg.Peers) == 0) == (cfg.PeersDNS == "") {
		return nil, fmt.Errorf("%w: want static peers or a DNS name, exactly one", ErrConfig)
	}
	if cfg.PeersDNS != "" {
		if _, _, err := net.SplitHostPort(cfg.PeersDNS); err != nil {
			return nil, fmt.Errorf("%w: peers DNS %q: want name:port: %w", ErrConfig, cfg.PeersDNS, err)
		}
	}
	for _, p := range cfg.Peers {
		if _, _, err := net.SplitHostPort(p); err != nil {
			return nil, fmt.Errorf("%w: peer %q: want host:port: %w", ErrConfig, p, err)
		}
	}
	setDefaults(&cfg)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Membership{cfg: cfg, scheme: scheme, selfAddr: selfAddr, peers: map[string]*peer{}, serving: true,
		cancel: cancel, done: make(chan struct{})}
	go m.run(ctx)
	return m, nil
}

func setDefaults(cfg *Config) {
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = DefaultCheckInterval
	}
	if cfg.CheckTimeout <= 0 {
		cfg.CheckTimeout = DefaultCheckTimeout
	}
	if cfg.ResolveInterval <= 0 {
		cfg.ResolveInterval = DefaultResolveInterval
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = min(DefaultRetryInterval, cfg.CheckInterval)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LookupHost == nil {
		cfg.LookupHost = net.DefaultResolver.LookupHost
	}
}

// ParseLocation splits an advertised location into its scheme (grpc or
// grpc+tls) and host:port.
func ParseLocation(loc string) (scheme, hostPort string, err error) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", "", err
	}
	if u.Scheme != "grpc" && u.Scheme != "grpc+tls" {
		return "", "", fmt.Errorf("%q: want grpc://host:port or grpc+tls://host:port", loc)
	}
	if _, port, err := net.SplitHostPort(u.Host); err != nil || port == "" || u.Hostname() == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", fmt.Errorf("%q: want %s://host:port, with a host and a port", loc, u.Scheme)
	}
	return u.Scheme, u.Host, nil
}

// Ring returns the current ring: the healthy peers and, while it serves,
// this replica.
func (m *Membership) Ring() Ring {
	m.mu.Lock()
	defer m.mu.Unlock()
	return NewRing(m.membersLocked()...)
}

func (m *Membership) membersLocked() []string {
	var out []string
	if m.serving {
		out = append(out, m.cfg.Self)
	}
	for _, p := range m.peers {
		if p.healthy {
			out = append(out, m.scheme+"://"+p.addr)
		}
	}
	slices.Sort(out)
	return out
}

// SetServing puts this replica in its own ring or takes it out (when it
// starts draining).
func (m *Membership) SetServing(serving bool) {
	m.mu.Lock()
	m.serving = serving
	m.mu.Unlock()
	m.logChange()
}

// Close stops resolving and checking, waits for the goroutine and closes
// the connections to peers.
func (m *Membership) Close() error {
	m.cancel()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for addr, p := range m.peers {
		errs = append(errs, p.conn.Close())
		delete(m.peers, addr)
	}
	return errors.Join(errs...)
}

// run resolves and checks until ctx is cancelled: at once, then every
// ResolveInterval; every peer every CheckInterval, and the peers out of
// the ring every RetryInterval in between.
func (m *Membership) run(ctx context.Context) {
	defer close(m.done)
	m.resolve(ctx)
	m.checkAll(ctx, false)
	lastFull := time.Now()
	resolve := time.NewTicker(m.cfg.ResolveInterval)
	defer resolve.Stop()
	retry := time.NewTicker(m.cfg.RetryInterval)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-resolve.C:
			m.resolve(ctx)
		case now := <-retry.C:
			full := now.Sub(lastFull) >= m.cfg.CheckInterval
			if full {
				lastFull = now
			}
			m.checkAll(ctx, !full)
		}
	}
}

// resolve updates the peer set: the static list, or the DNS name's
// addresses. New peers start unhealthy (not in the ring until their first
// good check); vanished ones are closed.
func (m *Membership) resolve(ctx context.Context) {
	addrs, serverName, err := m.lookup(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.cfg.Logger.Warn("resolving peers failed; keeping the last answer", "peers-dns", m.cfg.PeersDNS, "err", err.Error())
		}
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for addr, p := range m.peers {
		if !slices.Contains(addrs, addr) {
			p.conn.Close()
			delete(m.peers, addr)
		}
	}
	for _, addr := range addrs {
		if _, ok := m.peers[addr]; ok || addr == m.selfAddr {
			continue
		}
		conn, err := grpc.NewClient(addr, m.dialOptions(serverName(addr))...)
		if err != nil {
			m.cfg.Logger.Warn("peer not dialable", "peer", addr, "err", err.Error())
			continue
		}
		m.peers[addr] = &peer{addr: addr, conn: conn}
	}
}

// lookup returns the peers' host:port addresses and how to name each in
// TLS.
func (m *Membership) lookup(ctx context.Context) ([]string, func(addr string) string, error) {
	if m.cfg.PeersDNS == "" {
		return m.cfg.Peers, func(addr string) string { host, _, _ := net.SplitHostPort(addr); return host }, nil
	}
	name, port, _ := net.SplitHostPort(m.cfg.PeersDNS)
	lctx, cancel := context.WithTimeout(ctx, m.cfg.CheckTimeout)
	defer cancel()
	ips, err := m.cfg.LookupHost(lctx, name)
	if err != nil {
		return nil, nil, err
	}
	addrs := make([]string, len(ips))
	for i, ip := range ips {
		addrs[i] = net.JoinHostPort(ip, port)
	}
	return addrs, func(string) string { return name }, nil
}

// dialOptions are a peer connection's: its credentials, and a reconnect
// backoff capped at CheckInterval (gRPC's default grows to 2 minutes, so
// a peer down for a while would rejoin that late after it came back).
func (m *Membership) dialOptions(serverName string) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(m.credentials(serverName)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: m.cfg.CheckInterval},
			MinConnectTimeout: m.cfg.CheckTimeout,
		}),
	}
}

func (m *Membership) credentials(serverName string) credentials.TransportCredentials {
	if m.cfg.TLS == nil {
		return insecure.NewCredentials()
	}
	c := m.cfg.TLS.Clone()
	c.ServerName = serverName
	return credentials.NewTLS(c)
}

// checkAll checks every peer once (only those out of the ring when
// unhealthyOnly), in parallel (bounded), and logs the ring when it
// changed.
func (m *Membership) checkAll(ctx context.Context, unhealthyOnly bool) {
	m.mu.Lock()
	peers := make([]*peer, 0, len(m.peers))
	for _, p := range m.peers {
		if !unhealthyOnly || !p.healthy {
			peers = append(peers, p)
		}
	}
	m.mu.Unlock()
	healthy := make([]bool, len(peers))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(checkConcurrency)
	for i, p := range peers {
		if unhealthyOnly {
			// Redial now rather than when gRPC's backoff says: the check
			// then waits for that connection attempt (a fail-fast call
			// waits while the channel is connecting), so a peer that has
			// just come up is seen at this check.
			p.conn.ResetConnectBackoff()
		}
		g.Go(func() error {
			healthy[i] = m.check(gctx, p.conn)
			return nil
		})
	}
	g.Wait()
	if ctx.Err() != nil {
		return
	}
	m.mu.Lock()
	for i, p := range peers {
		p.healthy = healthy[i] // a peer resolve dropped meanwhile is no longer in the map
	}
	m.mu.Unlock()
	m.logChange()
}

// check asks one peer's gRPC health service for the server's overall
// status; only SERVING counts.
func (m *Membership) check(ctx context.Context, conn *grpc.ClientConn) bool {
	cctx, cancel := context.WithTimeout(ctx, m.cfg.CheckTimeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{})
	return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
}

func (m *Membership) logChange() {
	m.mu.Lock()
	members := m.membersLocked()
	changed := !slices.Equal(members, m.last)
	m.last = members
	m.mu.Unlock()
	if changed {
		m.cfg.Logger.Info("cluster members", "members", strings.Join(members, ","), "count", len(members))
	}
}
