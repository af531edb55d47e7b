package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/stats"
)

// Connection limits: what a connection may hold without doing work.
//
// gRPC keeps a connection as long as its client does, and an HTTP/2
// connection that sent its preface and SETTINGS, or half a frame, then
// nothing, is never closed by grpc-go's defaults: thousands of them used
// up the server's descriptors. So every connection is bounded:
//
//   - Its first call. A connection must finish its handshake (TLS, the
//     HTTP/2 preface and SETTINGS: grpc.ConnectionTimeout) and start its
//     first call within Limits.FirstCallTimeout of being accepted, or it
//     is closed. grpc-go has no deadline of its own past the handshake,
//     so the listener (connLimiter) closes the connection unless a stats
//     handler sees its first call tagged first.
//   - Idleness. A connection without calls for Limits.ConnIdleTimeout
//     gets GOAWAY and is closed (keepalive.MaxConnectionIdle); clients
//     reconnect when they next call. A silent peer is found by keepalive
//     pings: one after a minute without traffic, closed if unanswered in
//     20 s (keepalive.ServerParameters.Time, Timeout).
//   - Pings. Clients may ping every 10 s at most, with or without calls
//     (keepalive.EnforcementPolicy); faster pingers get GOAWAY.
//   - Per address. One client address holds at most
//     Limits.MaxConnsPerPeer connections; past it a new connection is
//     refused at accept: on plaintext with an HTTP/2 GOAWAY
//     (ENHANCE_YOUR_CALM) whose debug text names the limit, then closed;
//     on TLS closed (a TLS client could not read plaintext frames).

// Defaults of the connection limits.
const (
	DefaultFirstCallTimeout = 10 * time.Second
	DefaultConnIdleTimeout  = 5 * time.Minute
	DefaultMaxConnsPerPeer  = 256
)

// Keepalive figures (see above). Not flags: they bound dead peers, and
// clients tune their own side.
const (
	keepaliveTime        = time.Minute
	keepaliveTimeout     = 20 * time.Second
	keepaliveMinPingTime = 10 * time.Second
)

// serverOptions are the gRPC options of the connection limits.
func (c *connLimiter) serverOptions(l Limits) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ConnectionTimeout(l.FirstCallTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: l.ConnIdleTimeout,
			Time:              keepaliveTime,
			Timeout:           keepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveMinPingTime, PermitWithoutStream: true}),
		grpc.StatsHandler(c),
	}
}

// connLimiter counts the connections of each client address, closes
// those that start no call in time, and is the stats handler that sees
// their first calls. It is safe for concurrent use.
type connLimiter struct {
	firstCall time.Duration
	maxPeer   int
	tls       bool // refuse by closing: no plaintext frames to a TLS client
	log       *slog.Logger

	mu     sync.Mutex
	byAddr map[string]*limitedConn // by remote address (ip:port), until closed
	perIP  map[string]int          // open connections per remote IP; no zero entries

	refused   atomic.Int64 // connections refused at the per-address cap
	noCall    atomic.Int64 // connections closed for starting no call in time
	lastWarnN atomic.Int64 // unix seconds of the last refusal logged
}

func newConnLimiter(l Limits, tls bool, log *slog.Logger) *connLimiter {
	return &connLimiter{firstCall: l.FirstCallTimeout, maxPeer: l.MaxConnsPerPeer, tls: tls, log: log,
		byAddr: map[string]*limitedConn{}, perIP: map[string]int{}}
}

// listener wraps lis: every accepted connection is counted and timed.
func (c *connLimiter) listener(lis net.Listener) net.Listener {
	return &limitedListener{Listener: lis, c: c}
}

type limitedListener struct {
	net.Listener
	c *connLimiter
}

// Accept returns the next connection within its address's cap; those
// over it are refused here, and Accept waits for the next.
func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := l.c.admit(conn); lc != nil {
			return lc, nil
		}
	}
}

// hostOf is the IP of a remote address (the address itself when it has
// no port, as a Unix socket's).
func hostOf(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}

// admit counts conn against its address, or refuses it (nil).
func (c *connLimiter) admit(conn net.Conn) *limitedConn {
	ip := hostOf(conn.RemoteAddr())
	c.mu.Lock()
	if c.maxPeer > 0 && c.perIP[ip] >= c.maxPeer {
		c.mu.Unlock()
		c.refuse(conn, ip)
		return nil
	}
	c.perIP[ip]++
	lc := &limitedConn{Conn: conn, c: c, ip: ip, key: conn.RemoteAddr().String()}
	c.byAddr[lc.key] = lc
	c.mu.Unlock()
	if c.firstCall > 0 {
		lc.mu.Lock()
		lc.timer = time.AfterFunc(c.firstCall, lc.noCallInTime)
		lc.mu.Unlock()
	}
	return lc
}

// refuseWriteTimeout bounds the GOAWAY written to a refused connection.
const refuseWriteTimeout = time.Second

// refuse tells a connection over its address's cap why, when it can,
// and closes it.
func (c *connLimiter) refuse(conn net.Conn, ip string) {
	c.refused.Add(1)
	msg := fmt.Sprintf("too many connections from %s: at most %d at once (--max-conns-per-peer); close idle ones or share one", ip, c.maxPeer)
	if now := time.Now().Unix(); c.lastWarnN.Swap(now) != now { // at most one line a second
		c.log.Warn("connection refused", "peer", ip, "limit", c.maxPeer, "refused_total", c.refused.Load())
	}
	if !c.tls {
		go func() {
			defer conn.Close()
			var b bytes.Buffer
			fr := http2.NewFramer(&b, nil)
			fr.WriteSettings()
			fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, []byte(msg))
			conn.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
			conn.Write(b.Bytes())
		}()
		return
	}
	conn.Close()
}

// forget drops a closed connection from the counts.
func (c *connLimiter) forget(lc *limitedConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byAddr[lc.key] == lc {
		delete(c.byAddr, lc.key)
	}
	if n := c.perIP[lc.ip]; n <= 1 {
		delete(c.perIP, lc.ip)
	} else {
		c.perIP[lc.ip] = n - 1
	}
}

// Connections returns how many connections are open, and from how many
// addresses.
func (c *connLimiter) Connections() (conns, addrs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byAddr), len(c.perIP)
}

// connAddrKey carries a connection's remote address from TagConn to TagRPC.
type connAddrKey struct{}

// TagConn implements stats.Handler.
func (c *connLimiter) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	if info.RemoteAddr == nil {
		return ctx
	}
	return context.WithValue(ctx, connAddrKey{}, info.RemoteAddr.String())
}

// TagRPC implements stats.Handler: the connection's first call stops its
// first-call timer.
func (c *connLimiter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	if key, ok := ctx.Value(connAddrKey{}).(string); ok {
		c.mu.Lock()
		lc := c.byAddr[key]
		c.mu.Unlock()
		if lc != nil {
			lc.called()
		}
	}
	return ctx
}

// HandleConn implements stats.Handler.
func (c *connLimiter) HandleConn(context.Context, stats.ConnStats) {}

// HandleRPC implements stats.Handler.
func (c *connLimiter) HandleRPC(context.Context, stats.RPCStats) {}

// limitedConn is an accepted connection: it leaves the counts when it is
// closed.
type limitedConn struct {
	net.Conn
	c       *connLimiter
	ip, key string
	calls   atomic.Bool // a call has started
	once    sync.Once

	mu    sync.Mutex
	timer *time.Timer // first-call timer; nil without one
}

// stopTimer stops the first-call timer.
func (lc *limitedConn) stopTimer() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.timer != nil {
		lc.timer.Stop()
	}
}

func (lc *limitedConn) called() {
	if !lc.calls.Swap(true) {
		lc.stopTimer()
	}
}

// noCallInTime closes a connection that started no call within the
// first-call timeout.
func (lc *limitedConn) noCallInTime() {
	if lc.calls.Load() {
		return
	}
	lc.c.noCall.Add(1)
	lc.Close()
}

// Close implements net.Conn.
func (lc *limitedConn) Close() error {
	lc.once.Do(func() {
		lc.stopTimer()
		lc.c.forget(lc)
	})
	return lc.Conn.Close()
}

// register exports the connection counts.
func (c *connLimiter) register(reg prometheus.Registerer) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_connections_open",
			Help: "Client connections open now.",
		}, func() float64 { n, _ := c.Connections(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "scand_connections_refused_total",
			Help: "Connections refused at accept: their client address held --max-conns-per-peer already.",
		}, func() float64 { return float64(c.refused.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "scand_connections_no_call_total",
			Help: "Connections closed for starting no call within --conn-first-call-timeout of being accepted.",
		}, func() float64 { return float64(c.noCall.Load()) }),
	)
}
