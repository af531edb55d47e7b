package tlsfiles

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/server/tlsfiles/certtest"
)

// serve runs a gRPC health service over TLS from files on a loopback port.
func serve(t *testing.T, files *Files) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(files.ServerConfig())))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func check(t *testing.T, addr string, creds credentials.TransportCredentials) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

func clientTLS(ca *certtest.CA, certs ...tls.Certificate) credentials.TransportCredentials {
	return credentials.NewTLS(&tls.Config{RootCAs: ca.Pool(), Certificates: certs})
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.NewCA(t, "server CA")
	certFile, keyFile := ca.Server(t, "scand").WriteFiles(t, dir, "server")
	files, err := Load(Options{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, files)
	if err := check(t, addr, clientTLS(ca)); err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	if err := check(t, addr, insecure.NewCredentials()); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext client against TLS: got %v, want Unavailable", err)
	}
	if err := check(t, addr, clientTLS(certtest.NewCA(t, "other CA"))); status.Code(err) != codes.Unavailable {
		t.Fatalf("client not trusting the server's CA: got %v, want Unavailable", err)
	}
	old := &tls.Config{RootCAs: ca.Pool(), MaxVersion: tls.VersionTLS11}
	if _, err := tls.Dial("tcp", addr, old); err == nil {
		t.Fatal("a TLS 1.1 client completed a handshake")
	}
}

func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, strangerCA := certtest.NewCA(t, "server CA"), certtest.NewCA(t, "client CA"), certtest.NewCA(t, "stranger")
	certFile, keyFile := serverCA.Server(t, "scand").WriteFiles(t, dir, "server")
	caFile := filepath.Join(dir, "clients.pem")
	if err := os.WriteFile(caFile, clientCA.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := Load(Options{CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile})
	if err != nil || !files.MutualTLS() {
		t.Fatalf("Load: %v", err)
	}
	addr := serve(t, files)
	alice := clientCA.Client(t, pkix.Name{CommonName: "alice"})
	if err := check(t, addr, clientTLS(serverCA, alice.TLS)); err != nil {
		t.Fatalf("client with a certificate from the client CA: %v", err)
	}
	if err := check(t, addr, clientTLS(serverCA)); status.Code(err) != codes.Unavailable {
		t.Fatalf("client without a certificate: got %v, want Unavailable", err)
	}
	mallory := strangerCA.Client(t, pkix.Name{CommonName: "alice"})
	if err := check(t, addr, clientTLS(serverCA, mallory.TLS)); status.Code(err) != codes.Unavailable {
		t.Fatalf("client certificate from another CA: got %v, want Unavailable", err)
	}
}

// servedSerial returns the serial number of the certificate a new
// connection to addr sees.
func servedSerial(t *testing.T, addr string, pool *x509.CertPool) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// rewrite replaces a file's contents and moves its mtime on, so the change
// is seen even on file systems with coarse timestamps.
func rewrite(t *testing.T, path string, data []byte, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestReload(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.NewCA(t, "server CA")
	first := ca.Server(t, "first")
	certFile, keyFile := first.WriteFiles(t, dir, "server")
	var mu sync.Mutex
	var reloads []error
	files, err := Load(Options{CertFile: certFile, KeyFile: keyFile, CheckInterval: time.Nanosecond,
		OnReload: func(err error) { mu.Lock(); reloads = append(reloads, err); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, files)
	if got := servedSerial(t, addr, ca.Pool()); got != first.Cert.SerialNumber.String() {
		t.Fatalf("served %s, want the first certificate", got)
	}
	if len(reloads) != 0 {
		t.Fatalf("reloaded without a change: %v", reloads)
	}

	// Half a rotation: the new certificate is written, its key not yet. The
	// old pair keeps serving and the error is reported.
	second := ca.Server(t, "second")
	later := time.Now().Add(time.Minute)
	rewrite(t, certFile, second.CertPEM, later)
	if got := servedSerial(t, addr, ca.Pool()); got != first.Cert.SerialNumber.String() {
		t.Fatalf("served %s while the key did not match, want the first certificate", got)
	}
	mu.Lock()
	if len(reloads) == 0 || reloads[len(reloads)-1] == nil {
		t.Fatalf("a failed reload was not reported: %v", reloads)
	}
	mu.Unlock()

	rewrite(t, keyFile, second.KeyPEM, later)
	if got := servedSerial(t, addr, ca.Pool()); got != second.Cert.SerialNumber.String() {
		t.Fatalf("served %s after the rotation, want the second certificate", got)
	}
	if err := check(t, addr, clientTLS(ca)); err != nil {
		t.Fatalf("gRPC after reload: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if reloads[len(reloads)-1] != nil {
		t.Fatalf("the completed rotation reported %v", reloads[len(reloads)-1])
	}
}

func TestReloadClientCA(t *testing.T) {
	dir := t.TempDir()
	serverCA, oldCA, newCA := certtest.NewCA(t, "server CA"), certtest.NewCA(t, "old clients"), certtest.NewCA(t, "new clients")
	certFile, keyFile := serverCA.Server(t, "scand").WriteFiles(t, dir, "server")
	caFile := filepath.Join(dir, "clients.pem")
	rewrite(t, caFile, oldCA.PEM, time.Now())
	files, err := Load(Options{CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile, CheckInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, files)
	oldClient := oldCA.Client(t, pkix.Name{CommonName: "old"}).TLS
	newClient := newCA.Client(t, pkix.Name{CommonName: "new"}).TLS
	if err := check(t, addr, clientTLS(serverCA, oldClient)); err != nil {
		t.Fatalf("client of the old CA before the change: %v", err)
	}
	rewrite(t, caFile, newCA.PEM, time.Now().Add(time.Minute))
	if err := check(t, addr, clientTLS(serverCA, newClient)); err != nil {
		t.Fatalf("client of the new CA after the change: %v", err)
	}
	if err := check(t, addr, clientTLS(serverCA, oldClient)); status.Code(err) != codes.Unavailable {
		t.Fatalf("client of the removed CA after the change: got %v, want Unavailable", err)
	}
}

func TestReloadIsThrottled(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.NewCA(t, "server CA")
	certFile, keyFile := ca.Server(t, "first").WriteFiles(t, dir, "server")
	files, err := Load(Options{CertFile: certFile, KeyFile: keyFile, CheckInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	before := files.current()
	second := ca.Server(t, "second")
	later := time.Now().Add(time.Minute)
	rewrite(t, certFile, second.CertPEM, later)
	rewrite(t, keyFile, second.KeyPEM, later)
	if files.current() != before {
		t.Fatal("files were checked before CheckInterval passed")
	}
	files.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if files.current() == before {
		t.Fatal("files were not reloaded after CheckInterval")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.NewCA(t, "ca")
	certFile, keyFile := ca.Server(t, "s").WriteFiles(t, dir, "server")
	otherCert, _ := ca.Server(t, "o").WriteFiles(t, dir, "other")
	junk := filepath.Join(dir, "junk.pem")
	_ = os.WriteFile(junk, []byte("not pem"), 0o600)
	cases := []struct {
		name string
		opts Options
		is   error
	}{
		{"no files", Options{}, nil},
		{"missing cert", Options{CertFile: filepath.Join(dir, "nope"), KeyFile: keyFile}, os.ErrNotExist},
		{"mismatched key", Options{CertFile: otherCert, KeyFile: keyFile}, nil},
		{"junk client CA", Options{CertFile: certFile, KeyFile: keyFile, ClientCAFile: junk}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.opts)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("got %v, want an error (%v)", err, tc.is)
			}
		})
	}
}
