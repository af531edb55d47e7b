package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/scand/scand/server/cluster"
)

// defaultDrainTimeout is how long a stop (SIGTERM) lets running streams
// finish before cutting them off. Kubernetes' default termination grace
// period is 30 s: k8s/base sets terminationGracePeriodSeconds to the
// preStop sleep (5 s) + this + 5 s for the process to exit.
const defaultDrainTimeout = 25 * time.Second

// clusterFlags are serve's membership flags (see docs/scale-out.md).
type clusterFlags struct {
	peers        string // host:port,...
	peersDNS     string // name:port
	advertise    string // grpc[+tls]://host:port
	peerCA       string // CA file peers' certificates are checked against
	drainTimeout time.Duration
}

func defineClusterFlags(fs *flag.FlagSet, f *clusterFlags) {
	fs.StringVar(&f.peers, "peers", "", "the replicas of this scan tier, `host:port,...` (this one may be listed): endpoints then name their owner and runner-up as locations")
	fs.StringVar(&f.peersDNS, "peers-dns", "", "`name:port` whose A/AAAA records are the replicas (a Kubernetes headless Service), resolved every few seconds; instead of --peers")
	fs.StringVar(&f.advertise, "advertise", "", "`URI` clients and peers reach this replica at, grpc://host:port or grpc+tls://host:port (default: from --listen when its host is an address)")
	fs.StringVar(&f.peerCA, "peer-ca", "", "CA `file` (PEM) the peers' certificates are checked against in health checks under TLS (empty: the system roots)")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", defaultDrainTimeout, "on SIGTERM, how long running streams may take to finish (new ones are refused, UNAVAILABLE) before they are cut off")
}

// enabled reports whether the replica is part of a tier.
func (f clusterFlags) enabled() bool { return f.peers != "" || f.peersDNS != "" }

// check refuses flag combinations that cannot work, before listening.
// sec are the server's own security flags: TLS decides the scheme, and a
// tier needs a shared ticket key.
func (f clusterFlags) check(sec securityFlags) error {
	tlsOn := sec.tlsCert != ""
	switch {
	case f.enabled() && sec.ticketKeyFile == "":
		return errors.New("--peers/--peers-dns need --ticket-key-file, the same file on every replica: endpoints name other replicas, which must accept this one's tickets")
	case f.peers != "" && f.peersDNS != "":
		return errors.New("--peers and --peers-dns: give one of the two")
	case !f.enabled() && (f.advertise != "" || f.peerCA != ""):
		return errors.New("--advertise and --peer-ca need --peers or --peers-dns: a replica alone names no locations")
	case f.drainTimeout < 0:
		return errors.New("--drain-timeout must not be negative")
	case f.advertise == "":
		return nil
	}
	scheme, _, err := cluster.ParseLocation(f.advertise)
	switch {
	case err != nil:
		return fmt.Errorf("--advertise: %w", err)
	case tlsOn && scheme != "grpc+tls":
		return fmt.Errorf("--advertise %s: this replica serves TLS; advertise grpc+tls://", f.advertise)
	case !tlsOn && scheme != "grpc":
		return fmt.Errorf("--advertise %s: this replica serves plaintext; advertise grpc://", f.advertise)
	}
	return nil
}

// advertiseFor is --advertise, or the location lis is reached at when
// its host is a concrete address.
func (f clusterFlags) advertiseFor(lis net.Addr, tlsOn bool) (string, error) {
	if f.advertise != "" {
		return f.advertise, nil
	}
	addr, ok := lis.(*net.TCPAddr)
	if !ok || addr.IP.IsUnspecified() {
		return "", fmt.Errorf("--peers/--peers-dns need --advertise when listening on every interface (%s): "+
			"which address do clients and peers reach this replica at? e.g. --advertise grpc+tls://$(POD_IP):8815", lis)
	}
	scheme := "grpc"
	if tlsOn {
		scheme = "grpc+tls"
	}
	return scheme + "://" + addr.String(), nil
}

// startMembership starts keeping the ring when the flags ask for a tier;
// nil otherwise.
func startMembership(f serveFlags, lis net.Addr, log *slog.Logger) (*cluster.Membership, error) {
	if !f.cluster.enabled() {
		return nil, nil
	}
	tlsOn := f.security.tlsCert != ""
	self, err := f.cluster.advertiseFor(lis, tlsOn)
	if err != nil {
		return nil, err
	}
	cfg := cluster.Config{Self: self, Peers: splitList(f.cluster.peers), PeersDNS: f.cluster.peersDNS, Logger: log}
	if tlsOn {
		if cfg.TLS, err = peerTLS(f); err != nil {
			return nil, err
		}
	}
	m, err := cluster.Start(cfg)
	if err != nil {
		return nil, err
	}
	log.Info("cluster membership", "advertise", self, "peers", f.cluster.peers, "peers-dns", f.cluster.peersDNS)
	return m, nil
}

// peerTLS is the client side of the server's own TLS, for health checks
// of peers: their certificates are checked against --peer-ca (the system
// roots without it), and under mutual TLS (--tls-client-ca) this replica
// presents its own certificate, read again at each handshake so that a
// renewed one is used.
func peerTLS(f serveFlags) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.cluster.peerCA != "" {
		pem, err := os.ReadFile(f.cluster.peerCA)
		if err != nil {
			return nil, fmt.Errorf("--peer-ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--peer-ca %s: no PEM certificate in it", f.cluster.peerCA)
		}
	}
	if f.security.tlsClientCA != "" {
		cert, key := f.security.tlsCert, f.security.tlsKey
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			pair, err := tls.LoadX509KeyPair(cert, key)
			if err != nil {
				return nil, fmt.Errorf("peer health check: client certificate (--tls-cert): %w", err)
			}
			return &pair, nil
		}
	}
	return c, nil
}
