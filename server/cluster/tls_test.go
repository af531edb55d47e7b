package cluster

import (
	"crypto/tls"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/scand/scand/server/tlsfiles/certtest"
)

// TestTLSPeers checks peers under TLS: verified against the given roots,
// with the server name of the peer list (the entry's host, or the DNS
// name).
func TestTLSPeers(t *testing.T) {
	ca, other := certtest.NewCA(t, "scand test CA"), certtest.NewCA(t, "another CA")
	pair := ca.Server(t, "scand") // names 127.0.0.1 and localhost
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair.TLS}})))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	defer srv.Stop()
	addr := lis.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	self := "grpc+tls://127.0.0.9:" + port
	dns := &fakeDNS{addrs: []string{"127.0.0.1"}}
	for name, tc := range map[string]struct {
		cfg  Config
		join bool
	}{
		"static, right CA": {Config{Peers: []string{addr}, TLS: &tls.Config{RootCAs: ca.Pool()}}, true},
		"static, wrong CA": {Config{Peers: []string{addr}, TLS: &tls.Config{RootCAs: other.Pool()}}, false},
		"dns name checked": {Config{PeersDNS: "localhost:" + port, LookupHost: dns.lookup, TLS: &tls.Config{RootCAs: ca.Pool()}}, true},
		"dns name not in the certificate": {Config{PeersDNS: "scand.ns.svc:" + port, LookupHost: dns.lookup,
			TLS: &tls.Config{RootCAs: ca.Pool()}}, false},
		"plaintext to a TLS peer": {Config{Peers: []string{addr}}, false},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := fast(tc.cfg)
			cfg.Self = self
			m, err := Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if tc.join {
				waitRing(t, m, self, "grpc+tls://"+addr)
				return
			}
			time.Sleep(300 * time.Millisecond) // many check rounds
			if got := m.Ring().Members(); !slices.Equal(got, []string{self}) {
				t.Errorf("ring %q: the peer must not be trusted", got)
			}
		})
	}
}
