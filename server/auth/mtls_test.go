package auth

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/scand/scand/server/tlsfiles"
	"github.com/scand/scand/server/tlsfiles/certtest"
)

// tlsServerCreds serves a certificate from serverCA, and requires client
// certificates from clientCA unless it is nil.
func tlsServerCreds(t *testing.T, serverCA, clientCA *certtest.CA) credentials.TransportCredentials {
	t.Helper()
	dir := t.TempDir()
	opts := tlsfiles.Options{}
	opts.CertFile, opts.KeyFile = serverCA.Server(t, "scand").WriteFiles(t, dir, "server")
	if clientCA != nil {
		opts.ClientCAFile = filepath.Join(dir, "clients.pem")
		if err := os.WriteFile(opts.ClientCAFile, clientCA.PEM, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := tlsfiles.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	return credentials.NewTLS(files.ServerConfig())
}

func TestMTLSOverGRPC(t *testing.T) {
	serverCA, clientCA := certtest.NewCA(t, "server CA"), certtest.NewCA(t, "client CA")
	addr := serveGuarded(t, &Guard{Authenticator: MTLS()}, tlsServerCreds(t, serverCA, clientCA))
	alice := clientCA.Client(t, pkix.Name{CommonName: "alice", Organization: []string{"Example"}})

	c := dial(t, addr, credentials.NewTLS(&tls.Config{RootCAs: serverCA.Pool(), Certificates: []tls.Certificate{alice.TLS}}))
	expectAll(t, c.calls(""), "CN=alice,O=Example|mtls")
	expectAll(t, c.calls("Bearer ignored"), "CN=alice,O=Example|mtls")

	noCert := dial(t, addr, credentials.NewTLS(&tls.Config{RootCAs: serverCA.Pool()}))
	expectRejected(t, noCert.calls(""), codes.Unavailable)
	plaintext := dial(t, addr, insecure.NewCredentials())
	expectRejected(t, plaintext.calls(""), codes.Unavailable)
}

func TestMTLSRefusesUnverifiedConnections(t *testing.T) {
	serverCA := certtest.NewCA(t, "server CA")
	// TLS without a client CA: a certificate the client sends is not
	// verified, so it must not name anyone.
	addr := serveGuarded(t, &Guard{Authenticator: MTLS()}, tlsServerCreds(t, serverCA, nil))
	c := dial(t, addr, credentials.NewTLS(&tls.Config{RootCAs: serverCA.Pool()}))
	expectRejected(t, c.calls(""), codes.Unauthenticated, "no verified client certificate", "cert_chain")

	plain := dial(t, serveGuarded(t, &Guard{Authenticator: MTLS()}, nil), nil)
	expectRejected(t, plain.calls(""), codes.Unauthenticated, "not TLS", "tls_root_certs")
}

func TestTokensOverTLS(t *testing.T) {
	serverCA := certtest.NewCA(t, "server CA")
	cfg := testConfig(t)
	addr := serveGuarded(t, tokensGuard(cfg, nil), tlsServerCreds(t, serverCA, nil))
	c := dial(t, addr, credentials.NewTLS(&tls.Config{RootCAs: serverCA.Pool()}))
	expectAll(t, c.calls("Bearer "+aliceToken), "alice|token")
	expectRejected(t, dial(t, addr, nil).calls("Bearer "+aliceToken), codes.Unavailable)
}
