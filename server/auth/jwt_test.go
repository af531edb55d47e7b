package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"google.golang.org/grpc/codes"
)

const (
	testIssuer   = "https://idp.example.com/"
	testAudience = "scand"
)

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func jwksFile(t *testing.T, keys ...jose.JSONWebKey) string {
	t.Helper()
	data, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "jwks.json", data)
}

// signJWT signs claims with key (an *ecdsa.PrivateKey or []byte secret).
func signJWT(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims any) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func claimsAt(now time.Time, edit func(*jwt.Claims)) *jwt.Claims {
	c := &jwt.Claims{
		Issuer: testIssuer, Audience: jwt.Audience{"other-service", testAudience}, Subject: "alice",
		Expiry: jwt.NewNumericDate(now.Add(10 * time.Minute)), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
		IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)),
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func TestJWTWithJWKSOverGRPC(t *testing.T) {
	key, stranger := ecKey(t), ecKey(t)
	secret := bytes.Repeat([]byte("s"), 32)
	auth, err := NewJWT(JWTOptions{
		JWKSFile: jwksFile(t, jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: string(jose.ES256), Use: "sig"}),
		Issuer:   testIssuer, Audience: testAudience,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, serveGuarded(t, &Guard{Authenticator: auth, Exempt: HealthMethods}, nil), nil)
	now := time.Now()
	es := func(edit func(*jwt.Claims)) string { return signJWT(t, jose.ES256, key, "k1", claimsAt(now, edit)) }

	expectAll(t, c.calls("Bearer "+es(nil)), "alice|jwt")
	expectAll(t, c.calls("Bearer "+es(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-10 * time.Second)) })), "alice|jwt") // leeway

	noneAlg := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"alice","iss":"`+testIssuer+`","aud":"scand","exp":9999999999}`)) + "."
	cases := []struct {
		name, token string
		hints       []string
	}{
		{"none", "", []string{"no credentials", "authorization: Bearer <token>", "JWT"}},
		{"not a JWT", "not-a-jwt", []string{"not a signed JWT"}},
		{"alg none", noneAlg, []string{"not a signed JWT"}},
		{"HS256 against a JWKS", signJWT(t, jose.HS256, secret, "k1", claimsAt(now, nil)), []string{"not a signed JWT"}},
		{"bad signature", signJWT(t, jose.ES256, stranger, "k1", claimsAt(now, nil)), []string{"signature does not verify"}},
		{"unknown kid", signJWT(t, jose.ES256, key, "k2", claimsAt(now, nil)), []string{"signature does not verify"}},
		{"expired", es(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-time.Minute)) }), []string{"expired at", "fresh one"}},
		{"not yet valid", es(func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Minute)) }), []string{"not valid before"}},
		{"issued in the future", es(func(c *jwt.Claims) { c.IssuedAt = jwt.NewNumericDate(now.Add(time.Minute)) }), []string{"issued in the future"}},
		{"wrong issuer", es(func(c *jwt.Claims) { c.Issuer = "https://evil.example.com/" }), []string{`"https://evil.example.com/" is not`}},
		{"wrong audience", es(func(c *jwt.Claims) { c.Audience = jwt.Audience{"other-service"} }), []string{`does not include "scand"`}},
		{"no exp", es(func(c *jwt.Claims) { c.Expiry = nil }), []string{"no exp"}},
		{"no sub", es(func(c *jwt.Claims) { c.Subject = "" }), []string{"no sub"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			header := ""
			if tc.token != "" || tc.name != "none" {
				header = "Bearer " + tc.token
			}
			expectRejected(t, c.calls(header), codes.Unauthenticated, tc.hints...)
		})
	}
	if err := c.health(""); err != nil {
		t.Errorf("health is exempt: %v", err)
	}
}

func TestJWTWithSharedSecret(t *testing.T) {
	secret := bytes.Repeat([]byte("k"), 32)
	auth, err := NewJWT(JWTOptions{HS256SecretFile: writeFile(t, "secret", append(secret, '\n')), Issuer: testIssuer, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	id, err := auth.Authenticate(bearerContext(signJWT(t, jose.HS256, secret, "", claimsAt(now, nil))))
	if err != nil || id != (Identity{Name: "alice", Method: MethodJWT}) {
		t.Fatalf("HS256: %v %v", id, err)
	}
	other := bytes.Repeat([]byte("x"), 32)
	if _, err := auth.Authenticate(bearerContext(signJWT(t, jose.HS256, other, "", claimsAt(now, nil)))); err == nil ||
		!strings.Contains(err.Error(), "signature does not verify") {
		t.Errorf("another secret: %v", err)
	}
	if _, err := auth.Authenticate(bearerContext(signJWT(t, jose.ES256, ecKey(t), "", claimsAt(now, nil)))); err == nil {
		t.Error("an ES256 token passed a shared-secret server")
	}
}

func TestNewJWTErrors(t *testing.T) {
	key := ecKey(t)
	good := jwksFile(t, jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1"})
	cases := map[string]JWTOptions{
		"no issuer":      {JWKSFile: good, Audience: testAudience},
		"no audience":    {JWKSFile: good, Issuer: testIssuer},
		"no keys":        {Issuer: testIssuer, Audience: testAudience},
		"both":           {JWKSFile: good, HS256SecretFile: writeFile(t, "s", bytes.Repeat([]byte("k"), 32)), Issuer: testIssuer, Audience: testAudience},
		"short secret":   {HS256SecretFile: writeFile(t, "s", []byte("short")), Issuer: testIssuer, Audience: testAudience},
		"private in set": {JWKSFile: jwksFile(t, jose.JSONWebKey{Key: key, KeyID: "k1"}), Issuer: testIssuer, Audience: testAudience},
		"no kid":         {JWKSFile: jwksFile(t, jose.JSONWebKey{Key: &key.PublicKey}), Issuer: testIssuer, Audience: testAudience},
		"empty set":      {JWKSFile: writeFile(t, "j", []byte(`{"keys":[]}`)), Issuer: testIssuer, Audience: testAudience},
		"not json":       {JWKSFile: writeFile(t, "j", []byte(`nope`)), Issuer: testIssuer, Audience: testAudience},
		"missing file":   {JWKSFile: filepath.Join(t.TempDir(), "nope"), Issuer: testIssuer, Audience: testAudience},
	}
	for name, opts := range cases {
		if _, err := NewJWT(opts); err == nil {
			t.Errorf("%s: NewJWT accepted %+v", name, opts)
		}
	}
}
