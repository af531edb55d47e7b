package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// A JWKS key that declares its alg verifies that alg only; a key without
// one verifies its type's algorithms.
func TestJWKSKeyPinnedToItsAlg(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := NewJWT(JWTOptions{
		JWKSFile: jwksFile(t,
			jose.JSONWebKey{Key: &key.PublicKey, KeyID: "pinned", Algorithm: string(jose.RS256), Use: "sig"},
			jose.JSONWebKey{Key: &key.PublicKey, KeyID: "open", Use: "sig"}),
		Issuer: testIssuer, Audience: testAudience,
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tc := range []struct {
		alg jose.SignatureAlgorithm
		kid string
		ok  bool
	}{
		{jose.RS256, "pinned", true},
		{jose.RS384, "pinned", false},
		{jose.RS512, "pinned", false},
		{jose.PS256, "pinned", false},
		{jose.RS256, "open", true},
		{jose.RS384, "open", true},
		{jose.PS256, "open", true},
	} {
		_, err := auth.Authenticate(bearerContext(signJWT(t, tc.alg, key, tc.kid, claimsAt(now, nil))))
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s with key %s: %v, want accepted", tc.alg, tc.kid, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), `is for "RS256" only`)):
			t.Errorf("%s with key %s: %v, want refused naming the key's alg", tc.alg, tc.kid, err)
		}
	}
}

// A time claim past what go-jose reads (2^62 s) is refused for what it
// is, not as a bad signature.
func TestJWTTimeOutOfRange(t *testing.T) {
	key := ecKey(t)
	auth, err := NewJWT(JWTOptions{
		JWKSFile: jwksFile(t, jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: string(jose.ES256)}),
		Issuer:   testIssuer, Audience: testAudience,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []string{"exp", "nbf", "iat"} {
		claims := map[string]any{"iss": testIssuer, "aud": testAudience, "sub": "alice",
			"exp": time.Now().Add(time.Hour).Unix()}
		claims[claim] = uint64(1) << 62
		_, err := auth.Authenticate(bearerContext(signJWT(t, jose.ES256, key, "k1", claims)))
		if err == nil || !strings.Contains(err.Error(), "not a time in seconds this server can read") ||
			strings.Contains(err.Error(), "signature") {
			t.Errorf("%s = 2^62: %v, want refused as an unreadable time", claim, err)
		}
	}
	// The claims are still only read once the signature verifies.
	other := ecKey(t)
	_, err = auth.Authenticate(bearerContext(signJWT(t, jose.ES256, other, "k1", map[string]any{"exp": uint64(1) << 62})))
	if err == nil || !strings.Contains(err.Error(), "signature does not verify") {
		t.Errorf("a bad signature over an unreadable exp: %v, want the signature refused", err)
	}
}
