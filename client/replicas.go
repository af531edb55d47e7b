package client

import (
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
)

// reuseConnection is the Flight URI that means "the connection the
// FlightInfo came on" (Flight's arrow-flight-reuse-connection://?).
const reuseConnection = "arrow-flight-reuse-connection://?"

// replica is one server a client reads from: its address, for messages,
// and a Flight client over its connection, which DoGet streams also use
// directly to receive into wire.Received (receive.go).
type replica struct {
	addr string // host:port
	fc   flight.Client
	conn grpc.ClientConnInterface
}

// replicas pools one connection per replica that endpoints name as
// locations, opened on first use with the client's own options (token,
// TLS, receive path) and closed with the client. The client's own
// connection is in the pool from the start, under its address, so a
// location naming the server the client dialled reuses it. It is safe for
// concurrent use.
type replicas struct {
	dial func(target string, useTLS bool) (*grpc.ClientConn, error)
	own  *replica
	// ownTLS is whether the own connection uses TLS: a location with the
	// same host:port but another scheme is another connection.
	ownTLS bool

	mu     sync.Mutex
	conns  map[replicaKey]*pooled
	closed bool
}

type replicaKey struct {
	target string
	tls    bool
}

type pooled struct {
	replica
	conn *grpc.ClientConn
}

var errClientClosed = errors.New("client: the client is closed")

// get returns the replica of a location URI, dialling it the first time.
// gRPC connects lazily, so a dead replica is found by the first call, not
// here.
func (p *replicas) get(location string) (*replica, error) {
	if location == reuseConnection {
		return p.own, nil
	}
	target, useTLS, err := parseAddr(location)
	if err != nil {
		return nil, err
	}
	if target == p.own.addr && useTLS == p.ownTLS {
		return p.own, nil
	}
	key := replicaKey{target, useTLS}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClientClosed
	}
	if r, ok := p.conns[key]; ok {
		return &r.replica, nil
	}
	conn, err := p.dial(target, useTLS)
	if err != nil {
		return nil, fmt.Errorf("client: dial location %s: %w", location, err)
	}
	r := &pooled{replica: replica{addr: target, fc: flight.NewClientFromConn(conn, nil), conn: conn}, conn: conn}
	if p.conns == nil {
		p.conns = map[replicaKey]*pooled{}
	}
	p.conns[key] = r
	return &r.replica, nil
}

// count is the number of connections the pool opened (the own one not
// included).
func (p *replicas) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// close closes the pooled connections (not the own one); get fails after.
func (p *replicas) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, r := range p.conns {
		errs = append(errs, r.conn.Close())
	}
	p.conns = nil
	return errors.Join(errs...)
}

// candidates are the replicas to try for ep, in order: its locations
// (owner first, as scand lists them), then the client's own connection as
// a last resort, each once. A location whose URI does not parse is
// skipped: any replica serves any ticket, so it is a preference lost, not
// an error.
func (p *replicas) candidates(ep *flight.FlightEndpoint) ([]*replica, error) {
	var out []*replica
	seen := map[*replica]bool{}
	add := func(r *replica) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, loc := range ep.GetLocation() {
		r, err := p.get(loc.GetUri())
		if errors.Is(err, errClientClosed) {
			return nil, err
		}
		if err == nil {
			add(r)
		}
	}
	add(p.own)
	return out, nil
}
