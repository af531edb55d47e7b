package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/tlsfiles/certtest"
)

// Tokens of the test identities: alice may read trips/2026-01.parquet
// only, bob all of trips/.
const (
	aliceToken = "alice-0123456789abcdef0123456789abcdef"
	bobToken   = "bob-0123456789abcdef0123456789abcdef01"
)

func sha(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// secureServer serves the demo data with TLS and --auth tokens (plus
// extra flags) on 127.0.0.1:0 and returns its address and CA.
func secureServer(t *testing.T, extra ...string) (addr string, ca *certtest.CA, dir string) {
	t.Helper()
	dir = t.TempDir()
	if _, err := writeDemoData(dir); err != nil {
		t.Fatal(err)
	}
	ca = certtest.NewCA(t, "scand test CA")
	cert, key := ca.Server(t, "localhost").WriteFiles(t, dir, "server")
	ids := fmt.Sprintf("identities:\n  - name: alice\n    token_sha256: [%s]\n    roots: [trips/2026-01.parquet]\n"+
		"  - name: bob\n    token_sha256: [%s]\n    roots: [trips/]\n", sha(aliceToken), sha(bobToken))
	idFile := filepath.Join(dir, "identities.yaml")
	if err := os.WriteFile(idFile, []byte(ids), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--listen", "127.0.0.1:0", "--root", dir, "--split-bytes", "1",
		"--tls-cert", cert, "--tls-key", key, "--auth", "tokens", "--identities", idFile}, extra...)
	f, err := parseServe(args, env{stderr: io.Discard, getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(context.Background(), f, dir, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), ca, dir
}

// rawClient is a stock arrow-go Flight client over TLS trusting ca.
func rawClient(t *testing.T, addr string, creds credentials.TransportCredentials) flight.Client {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return flight.NewClientFromConn(conn, nil)
}

func withToken(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

func cmdFor(paths ...string) *flight.FlightDescriptor {
	q := `{"paths": ["` + strings.Join(paths, `", "`) + `"]}`
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(q)}
}

// doGet reads a whole stream, returning its rows or its error.
func doGet(ctx context.Context, c flight.Client, ticket []byte) (int64, error) {
	stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		return 0, err
	}
	r, err := flight.NewRecordReader(stream)
	if err != nil {
		return 0, err
	}
	defer r.Release()
	var rows int64
	for r.Next() {
		rows += r.RecordBatch().NumRows()
	}
	if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
		return rows, err
	}
	return rows, nil
}

func wantCode(t *testing.T, what string, err error, code codes.Code, msg string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: got %v, want %v containing %q", what, err, code, msg)
	}
}

func TestSecureServerRejects(t *testing.T) {
	addr, ca, _ := secureServer(t)
	c := rawClient(t, addr, credentials.NewTLS(&tls.Config{RootCAs: ca.Pool()}))

	_, err := c.GetFlightInfo(context.Background(), cmdFor("trips/2026-01.parquet"))
	wantCode(t, "no token", err, codes.Unauthenticated, "authorization")
	_, err = c.GetFlightInfo(withToken("wrong-token-0123456789abcdef0123456789"), cmdFor("trips/2026-01.parquet"))
	wantCode(t, "wrong token", err, codes.Unauthenticated, "")
	_, err = c.GetFlightInfo(withToken(aliceToken), cmdFor("trips/2026-02.parquet"))
	wantCode(t, "outside scope, direct", err, codes.PermissionDenied, `"trips/2026-02.parquet" is outside what identity "alice" may read`)
	_, err = c.GetFlightInfo(withToken(aliceToken), cmdFor("trips/2026-02*"))
	wantCode(t, "outside scope, glob", err, codes.NotFound, "no files match")
	_, err = c.GetSchema(withToken(aliceToken), cmdFor("trips/2026-02.parquet"))
	wantCode(t, "GetSchema outside scope", err, codes.PermissionDenied, "alice")

	// Another identity's ticket, a changed one, an unsigned one.
	info, err := c.GetFlightInfo(withToken(bobToken), cmdFor("trips/2026-02.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	ticket := info.Endpoint[0].Ticket.Ticket
	_, err = doGet(withToken(aliceToken), c, ticket)
	wantCode(t, "other identity's ticket", err, codes.PermissionDenied, `belongs to "bob"`)
	changed := append([]byte{}, ticket...)
	changed[len(changed)-1] ^= 1
	_, err = doGet(withToken(bobToken), c, changed)
	wantCode(t, "changed ticket", err, codes.Unauthenticated, "unchanged")
	_, err = doGet(withToken(aliceToken), c, []byte("\x0a\x15trips/2026-02.parquet"))
	wantCode(t, "unsigned ticket", err, codes.Unauthenticated, "not a signed ticket")
	_, err = doGet(context.Background(), c, ticket)
	wantCode(t, "DoGet without token", err, codes.Unauthenticated, "")

	// Plaintext against TLS.
	plain := rawClient(t, addr, insecure.NewCredentials())
	_, err = plain.GetFlightInfo(withToken(bobToken), cmdFor("trips/2026-01.parquet"))
	wantCode(t, "plaintext client", err, codes.Unavailable, "")

	// ListFlights shows alice only her file.
	stream, err := c.ListFlights(withToken(aliceToken), &flight.Criteria{Expression: []byte("trips/")})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for {
		fi, err := stream.Recv()
		if err != nil {
			break
		}
		listed = append(listed, fi.FlightDescriptor.Path...)
	}
	if strings.Join(listed, ",") != "trips/2026-01.parquet" {
		t.Errorf("alice lists %v, want only trips/2026-01.parquet", listed)
	}
}

// The Go client with a token and TLS reads every endpoint of a
// multi-endpoint scan; a glob gives alice only her file.
func TestSecureServerGoClient(t *testing.T) {
	addr, ca, _ := secureServer(t)
	ctx := context.Background()
	c, err := client.Dial(ctx, "grpc+tls://"+addr, client.WithToken(aliceToken), client.WithTLS(&tls.Config{RootCAs: ca.Pool()}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	scan, err := c.Scan(ctx, &scandv1.ScanRequest{Paths: []string{"trips/*.parquet"}})
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	var rows int64
	for scan.Next() {
		rows += scan.RecordBatch().NumRows()
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(scan.Info().Endpoint); n < 2 || rows != 10000 {
		t.Errorf("%d endpoints, %d rows; want several endpoints and alice's 10000 rows", n, rows)
	}
	for _, ep := range scan.Info().Endpoint {
		if ep.ExpirationTime == nil || ep.ExpirationTime.AsTime().Before(time.Now().Add(time.Hour)) {
			t.Errorf("endpoint expiration %v, want the ticket's expiry hours away", ep.ExpirationTime)
		}
	}
}

// The CLI scans a TLS server with --token and --tls-ca.
func TestSecureServerCLI(t *testing.T) {
	addr, ca, dir := secureServer(t)
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	e, stdout, stderr := testEnv(map[string]string{"SCAND_TOKEN": bobToken})
	code := run(context.Background(), []string{"scan", "--server", "grpc+tls://" + addr, "--tls-ca", caFile,
		"--format", "csv", "--progress", "off", "trips/*.parquet"}, e)
	if code != 0 {
		t.Fatalf("scan exited %d: %s", code, stderr)
	}
	if lines := strings.Count(stdout.String(), "\n"); lines != 20001 {
		t.Errorf("%d lines, want a header and bob's 20000 rows", lines)
	}
	e, _, stderr = testEnv(nil)
	if code := run(context.Background(), []string{"explain", "--server", "grpc+tls://" + addr, "--tls-ca", caFile, "trips/*.parquet"}, e); code == 0 ||
		!strings.Contains(stderr.String(), "UNAUTHENTICATED") && !strings.Contains(stderr.String(), "nauthenticated") {
		t.Errorf("explain without a token: exit %d, %s", code, stderr)
	}
}

// Under mTLS a client without a certificate fails its handshake; one with
// a certificate whose subject is listed gets its scope.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeDemoData(dir); err != nil {
		t.Fatal(err)
	}
	ca := certtest.NewCA(t, "scand test CA")
	cert, key := ca.Server(t, "localhost").WriteFiles(t, dir, "server")
	caFile := filepath.Join(dir, "ca.pem")
	idFile := filepath.Join(dir, "ids.yaml")
	os.WriteFile(caFile, ca.PEM, 0o600)
	os.WriteFile(idFile, []byte("identities:\n  - name: \"CN=etl,O=Example\"\n    roots: [\".\"]\n"), 0o600)
	f, _ := parseServe([]string{"--listen", "127.0.0.1:0", "--auth", "mtls", "--identities", idFile, "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", caFile},
		env{stderr: io.Discard, getenv: func(string) (string, bool) { return "", false }})
	if _, err := newServer(context.Background(), withoutCA(f), dir, slog.New(slog.NewTextHandler(io.Discard, nil)), nil); err == nil ||
		!strings.Contains(err.Error(), "--tls-client-ca") {
		t.Errorf("mtls without --tls-client-ca: %v", err)
	}
	srv, err := newServer(context.Background(), f, dir, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, _ := net.Listen("tcp", f.listen)
	go srv.Serve(lis)
	defer srv.Stop()
	addr := lis.Addr().String()
	noCert := rawClient(t, addr, credentials.NewTLS(&tls.Config{RootCAs: ca.Pool()}))
	_, err = noCert.GetFlightInfo(context.Background(), cmdFor("trips/2026-01.parquet"))
	wantCode(t, "no client certificate", err, codes.Unavailable, "")
	cp := ca.Client(t, pkix.Name{CommonName: "etl", Organization: []string{"Example"}})
	pair, err := tls.X509KeyPair(cp.CertPEM, cp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	withCert := rawClient(t, addr, credentials.NewTLS(&tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{pair}}))
	info, err := withCert.GetFlightInfo(context.Background(), cmdFor("trips/2026-01.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := doGet(context.Background(), withCert, info.Endpoint[0].Ticket.Ticket); err != nil || rows == 0 {
		t.Errorf("mtls DoGet: %d rows, %v", rows, err)
	}
}

func withoutCA(f serveFlags) serveFlags { f.security.tlsClientCA = ""; return f }

// Secure defaults: a non-loopback address needs TLS and auth, or the
// explicit opt-out; tokens need TLS off loopback.
func TestSecureDefaults(t *testing.T) {
	for _, tt := range []struct {
		f      securityFlags
		listen string
		err    string
	}{
		{securityFlags{authMode: "none"}, "127.0.0.1:8815", ""},
		{securityFlags{authMode: "none"}, "localhost:8815", ""},
		{securityFlags{authMode: "none"}, "0.0.0.0:8815", "refusing to serve 0.0.0.0:8815 without TLS and authentication"},
		{securityFlags{authMode: "none"}, ":8815", "refusing"},
		{securityFlags{authMode: "none", insecureAnywhere: true}, "0.0.0.0:8815", ""},
		{securityFlags{authMode: "tokens", identities: "x"}, "0.0.0.0:8815", "bearer tokens sent in plaintext"},
		{securityFlags{authMode: "tokens", identities: "x"}, "127.0.0.1:8815", ""},
		{securityFlags{authMode: "mtls", identities: "x", tlsCert: "c", tlsKey: "k"}, "0.0.0.0:8815", "--auth mtls needs --tls-client-ca"},
		{securityFlags{authMode: "tokens"}, "127.0.0.1:8815", "needs --identities"},
		{securityFlags{authMode: "tokens", identities: "x", tlsCert: "c", tlsKey: "k"}, "0.0.0.0:8815", ""},
		{securityFlags{authMode: "basic"}, "127.0.0.1:8815", "want none, tokens, jwt or mtls"},
	} {
		err := checkSecurity(tt.f, tt.listen)
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v on %s: %v, want %q", tt.f, tt.listen, err, tt.err)
		}
	}
}

// S3 is on only with an explicit --s3-* flag or SCAND_S3_* variable.
func TestS3OnlyWhenAsked(t *testing.T) {
	for _, tt := range []struct {
		args []string
		vars map[string]string
		on   bool
	}{
		{nil, map[string]string{"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1"}, false},
		{[]string{"--s3-region", "eu-west-1"}, nil, true},
		{nil, map[string]string{"SCAND_S3_ENDPOINT": "http://127.0.0.1:9000"}, true},
		{[]string{"--s3-path-style"}, nil, true},
	} {
		e, _, _ := testEnv(tt.vars)
		f, err := parseServe(tt.args, e)
		if err != nil {
			t.Fatal(err)
		}
		if (f.s3 != nil) != tt.on {
			t.Errorf("%v %v: S3 on = %v, want %v", tt.args, tt.vars, f.s3 != nil, tt.on)
		}
	}
}

// The per-identity limits default on with authentication and off under
// --auth none (one identity for every client), unless set.
func TestLimitDefaults(t *testing.T) {
	for _, tt := range []struct {
		f       securityFlags
		streams int
		rate    float64
	}{
		{securityFlags{authMode: "tokens", maxStreams: -1, flightInfoRate: -1}, defaultMaxStreamsPerIdentity, defaultFlightInfoRate},
		{securityFlags{authMode: "none", maxStreams: -1, flightInfoRate: -1}, 0, 0},
		{securityFlags{authMode: "none", maxStreams: 3, flightInfoRate: 2}, 3, 2},
		{securityFlags{authMode: "jwt", maxStreams: 0, flightInfoRate: 0}, 0, 0},
	} {
		if s, r := limitsOf(tt.f); s != tt.streams || r != tt.rate {
			t.Errorf("%+v: %d streams, %v/s; want %d, %v", tt.f, s, r, tt.streams, tt.rate)
		}
	}
}

// The Flight Handshake trades Basic user:password for a bearer token, as
// arrow-go's AuthenticateBasicToken (and pyarrow's) expect; the token then
// reads.
func TestHandshakeBasic(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret-pass"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	idFile := filepath.Join(dir, "pw.yaml")
	os.WriteFile(idFile, []byte("identities:\n  - name: dave\n    password_bcrypt: \""+string(hash)+"\"\n    roots: [trips/]\n"), 0o600)
	addr, ca, _ := secureServer(t, "--identities", idFile, "--handshake-rate", "0.001")
	c := rawClient(t, addr, credentials.NewTLS(&tls.Config{RootCAs: ca.Pool()}))
	if _, err := c.AuthenticateBasicToken(context.Background(), "dave", "wrong"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("wrong password: %v, want Unauthenticated", err)
	}
	ctx, err := c.AuthenticateBasicToken(context.Background(), "dave", "s3cret-pass")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.GetFlightInfo(ctx, cmdFor("trips/2026-01.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := doGet(ctx, c, info.Endpoint[0].Ticket.Ticket); err != nil || rows == 0 {
		t.Errorf("DoGet with the Handshake's token: %d rows, %v", rows, err)
	}
	// Two attempts spent; the burst is handshakeBurst, then the address waits.
	for range handshakeBurst - 2 {
		c.AuthenticateBasicToken(context.Background(), "dave", "wrong")
	}
	if _, err := c.AuthenticateBasicToken(context.Background(), "dave", "s3cret-pass"); status.Code(err) != codes.ResourceExhausted ||
		!strings.Contains(err.Error(), "--handshake-rate") {
		t.Errorf("Handshake past the burst: %v, want RESOURCE_EXHAUSTED naming --handshake-rate", err)
	}
}
