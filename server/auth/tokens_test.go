package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/server/limits"
	"github.com/scand/scand/server/ticketsign"
)

const (
	aliceToken    = "alice-static-token-0123456789abcdef"
	alicePassword = "alice's password"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func testConfig(t *testing.T) *Config {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(alicePassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig(fmt.Appendf(nil, `
identities:
  - name: alice
    token_sha256: [%s]
    password_bcrypt: %q
    roots: [data/alice/]
  - name: bob
    roots: [data/bob/]
`, sha256Hex(aliceToken), hash))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func testRing(t *testing.T, seed byte) *ticketsign.KeyRing {
	t.Helper()
	ring, err := ticketsign.ParseKeyRing([]byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{seed}, 32))))
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func tokensGuard(cfg *Config, signer *ticketsign.Signer) *Guard {
	tokens := NewTokens(cfg, signer, time.Hour)
	return &Guard{Authenticator: tokens, Basic: tokens, Exempt: HealthMethods}
}

func TestTokensOverGRPC(t *testing.T) {
	cfg := testConfig(t)
	signer := ticketsign.NewSigner(testRing(t, 1))
	c := dial(t, serveGuarded(t, tokensGuard(cfg, signer), nil), nil)

	expectAll(t, c.calls("Bearer "+aliceToken), "alice|token")
	expectAll(t, c.calls("bearer   "+aliceToken), "alice|token") // scheme is case-insensitive, as in arrow-go

	expectRejected(t, c.calls(""), codes.Unauthenticated, "no credentials", `authorization: Bearer <token>`, "authenticate_basic_token")
	expectRejected(t, c.calls("Bearer wrong-token"), codes.Unauthenticated, "not one this server knows")
	expectRejected(t, c.calls("Bearer "), codes.Unauthenticated, "authorization: Bearer")
	expectRejected(t, c.calls("Token "+aliceToken), codes.Unauthenticated, `scheme "Token" is not accepted`)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+alicePassword))
	expectRejected(t, c.calls(basic), codes.Unauthenticated, `scheme "Basic" is not accepted`, "Handshake")

	ticket, _ := signer.Sign(ticketsign.KindTicket, "alice", nil, time.Hour)
	expectRejected(t, c.calls("Bearer "+ticketsign.EncodeToken(ticket)), codes.Unauthenticated, "not a bearer token")

	if err := c.health(""); err != nil {
		t.Errorf("health is exempt: %v", err)
	}
}

// handshake runs arrow-go's client AuthenticateBasicToken, the convention
// pyarrow's authenticate_basic_token shares, and returns the header it got.
func handshake(t *testing.T, c *testClient, user, password string) (string, error) {
	t.Helper()
	ctx, err := flight.NewClientFromConn(c.conn, nil).AuthenticateBasicToken(callCtx(t, ""), user, password)
	if err != nil {
		return "", err
	}
	md, _ := metadataFromOutgoing(ctx)
	return md, nil
}

func TestHandshakeBasic(t *testing.T) {
	cfg := testConfig(t)
	ring := testRing(t, 1)
	c := dial(t, serveGuarded(t, tokensGuard(cfg, ticketsign.NewSigner(ring)), nil), nil)

	header, err := handshake(t, c, "alice", alicePassword)
	if err != nil {
		t.Fatalf("Handshake: %v", err)
	}
	if !strings.HasPrefix(header, "Bearer scand1.") {
		t.Fatalf("Handshake answered %q, want a Bearer scand1. token", header)
	}
	expectAll(t, c.calls(header), "alice|handshake")

	// Another replica with the same key ring accepts the token; one with
	// another key does not.
	replica := dial(t, serveGuarded(t, tokensGuard(cfg, ticketsign.NewSigner(testRing(t, 1))), nil), nil)
	expectAll(t, replica.calls(header), "alice|handshake")
	stranger := dial(t, serveGuarded(t, tokensGuard(cfg, ticketsign.NewSigner(testRing(t, 2))), nil), nil)
	expectRejected(t, stranger.calls(header), codes.Unauthenticated, "unknown key")

	for _, tc := range []struct{ user, password string }{
		{"alice", "wrong"}, {"bob", ""}, {"bob", "anything"}, {"mallory", alicePassword},
		{"mallory", "scand: no such user"},
	} {
		_, err := handshake(t, c, tc.user, tc.password)
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "user name or password not accepted") {
			t.Errorf("Handshake as %s/%q: got %v, want UNAUTHENTICATED", tc.user, tc.password, err)
		}
	}
	// A Handshake with a bearer token is authenticated like any call.
	stream, err := c.fc.Handshake(callCtx(t, "Bearer "+aliceToken))
	if err == nil {
		_, err = stream.Recv()
	}
	if err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("Handshake with a bearer token: %v", err)
	}
	stream, _ = c.fc.Handshake(callCtx(t, ""))
	if _, err := stream.Recv(); status.Code(err) != codes.Unauthenticated {
		t.Errorf("Handshake without credentials: got %v", err)
	}
	stream, _ = c.fc.Handshake(callCtx(t, "Basic !!!"))
	if _, err := stream.Recv(); status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "base64(user:password)") {
		t.Errorf("Handshake with malformed Basic: got %v", err)
	}
}

func TestHandshakeTokenExpiryAndRevocation(t *testing.T) {
	cfg := testConfig(t)
	ring := testRing(t, 1)
	start := time.Now()
	issuer := NewTokens(cfg, ticketsign.NewSigner(ring).WithClock(func() time.Time { return start }), time.Minute)
	_, token, err := issuer.ExchangeBasic(context.Background(), "alice", alicePassword)
	if err != nil {
		t.Fatal(err)
	}
	later := NewTokens(cfg, ticketsign.NewSigner(ring).WithClock(func() time.Time {
		return start.Add(time.Minute + ticketsign.Skew + time.Second)
	}), time.Minute)
	if _, err := later.Authenticate(bearerContext(token)); err == nil || !strings.Contains(err.Error(), "expired") ||
		!strings.Contains(err.Error(), "Handshake again") {
		t.Errorf("expired Handshake token: %v", err)
	}
	// Removing alice from the file revokes her tokens.
	without, _ := ParseConfig([]byte("identities: [{name: bob, roots: [x]}]"))
	if _, err := NewTokens(without, ticketsign.NewSigner(ring), 0).Authenticate(bearerContext(token)); err == nil ||
		!strings.Contains(err.Error(), "no longer configured") {
		t.Errorf("token of a removed identity: %v", err)
	}
	// A changed token does not verify.
	mod := []byte(token)
	mod[len(mod)-5] ^= 1
	if _, err := issuer.Authenticate(bearerContext(string(mod))); err == nil {
		t.Error("a changed Handshake token was accepted")
	}
}

func TestNoneAndServeHandshakeWithoutGuard(t *testing.T) {
	c := dial(t, serveGuarded(t, &Guard{Authenticator: None()}, nil), nil)
	expectAll(t, c.calls(""), "anonymous|none")
	if err := ServeHandshake(noIdentityStream{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("ServeHandshake without a Guard: %v", err)
	}
}

type noIdentityStream struct {
	flight.FlightService_HandshakeServer
}

func (noIdentityStream) Context() context.Context { return context.Background() }

func TestUnknownUsersCostTheSameBcrypt(t *testing.T) {
	cfg := testConfig(t) // alice's hash has bcrypt.MinCost
	cost, err := bcrypt.Cost(NewTokens(cfg, ticketsign.NewSigner(testRing(t, 1)), 0).dummy())
	if err != nil || cost != bcrypt.MinCost {
		t.Fatalf("dummy hash cost %d (%v), want the file's %d", cost, err, bcrypt.MinCost)
	}
	empty, _ := ParseConfig(nil)
	if empty.maxCost != bcrypt.DefaultCost {
		t.Fatalf("without passwords the dummy cost is %d, want DefaultCost", empty.maxCost)
	}
}

// Basic Handshakes over a client address's rate are RESOURCE_EXHAUSTED
// before bcrypt runs; bearer calls are not counted.
func TestHandshakeRateLimit(t *testing.T) {
	cfg := testConfig(t)
	g := tokensGuard(cfg, ticketsign.NewSigner(testRing(t, 1)))
	g.HandshakeRate = limits.NewRate("Handshake password attempts (--handshake-rate)", 0.001, 2)
	c := dial(t, serveGuarded(t, g, nil), nil)
	for i := range 2 {
		if _, err := handshake(t, c, "alice", alicePassword); err != nil {
			t.Fatalf("Handshake %d within the burst: %v", i, err)
		}
	}
	_, err := handshake(t, c, "alice", alicePassword)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "127.0.0.1") ||
		!strings.Contains(err.Error(), "--handshake-rate") {
		t.Errorf("third Handshake: %v, want RESOURCE_EXHAUSTED naming the address and the limit", err)
	}
	expectAll(t, c.calls("Bearer "+aliceToken), "alice|token")
}
