package main

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"

	"github.com/scand/scand/server/tlsfiles/certtest"
)

// --auth jwt over TLS: a good JWT reads; an expired one and one for
// another audience are UNAUTHENTICATED saying so.
func TestJWTServer(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeDemoData(dir); err != nil {
		t.Fatal(err)
	}
	ca := certtest.NewCA(t, "scand test CA")
	cert, key := ca.Server(t, "localhost").WriteFiles(t, dir, "server")
	secret := []byte("0123456789abcdef0123456789abcdef-test-secret")
	secretFile, idFile := filepath.Join(dir, "jwt.secret"), filepath.Join(dir, "ids.yaml")
	os.WriteFile(secretFile, secret, 0o600)
	os.WriteFile(idFile, []byte("identities:\n  - name: carol\n    roots: [trips/]\n"), 0o600)
	f, err := parseServe([]string{"--listen", "127.0.0.1:0", "--root", dir, "--tls-cert", cert, "--tls-key", key,
		"--auth", "jwt", "--identities", idFile, "--jwt-secret-file", secretFile, "--jwt-issuer", "https://idp.example",
		"--jwt-audience", "scand"}, env{stderr: io.Discard, getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(context.Background(), f, dir, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, _ := net.Listen("tcp", f.listen)
	go srv.Serve(lis)
	defer srv.Stop()
	c := rawClient(t, lis.Addr().String(), credentials.NewTLS(&tls.Config{RootCAs: ca.Pool()}))

	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	token := func(aud string, exp time.Time) string {
		tok, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: "https://idp.example", Subject: "carol", Audience: jwt.Audience{aud},
			Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(exp.Add(-time.Hour))}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	info, err := c.GetFlightInfo(withToken(token("scand", time.Now().Add(time.Hour))), cmdFor("trips/2026-01.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := doGet(withToken(token("scand", time.Now().Add(time.Hour))), c, info.Endpoint[0].Ticket.Ticket); err != nil || rows == 0 {
		t.Errorf("DoGet with a good JWT: %d rows, %v", rows, err)
	}
	_, err = c.GetFlightInfo(withToken(token("scand", time.Now().Add(-time.Hour))), cmdFor("trips/2026-01.parquet"))
	wantCode(t, "expired JWT", err, codes.Unauthenticated, "expired")
	_, err = c.GetFlightInfo(withToken(token("other", time.Now().Add(time.Hour))), cmdFor("trips/2026-01.parquet"))
	wantCode(t, "wrong audience", err, codes.Unauthenticated, "aud")
}
