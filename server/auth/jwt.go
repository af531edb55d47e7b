package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/scand/scand/internal/echo"
)

// DefaultJWTLeeway is the clock skew allowed on exp and nbf.
const DefaultJWTLeeway = 30 * time.Second

const jwtHint = bearerHint + `, where <token> is a JWT from your identity provider`

// asymmetricAlgs are accepted with a JWKS; HMAC is accepted only with a
// shared secret, so a public key can never be used as an HMAC secret.
var asymmetricAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// JWTOptions configure --auth jwt. Exactly one of JWKSFile and
// HS256SecretFile is set; Issuer and Audience are required.
type JWTOptions struct {
	JWKSFile        string        // a JSON Web Key Set of public keys (RFC 7517)
	HS256SecretFile string        // a shared secret of at least 32 bytes (surrounding whitespace trimmed)
	Issuer          string        // the iss claim, matched exactly
	Audience        string        // must be one of the aud claim's values
	Leeway          time.Duration // clock skew on exp and nbf; 0: DefaultJWTLeeway
}

// JWT authenticates bearer JWTs (JWS compact serialization) with
// github.com/go-jose/go-jose/v4: signature, iss, aud, exp (required), nbf
// and iat. The identity's name is the sub claim.
type JWT struct {
	key  any // *jose.JSONWebKeySet or []byte
	algs []jose.SignatureAlgorithm
	opts JWTOptions
	now  func() time.Time
}

var _ Authenticator = (*JWT)(nil)

// NewJWT loads the keys opts names.
func NewJWT(opts JWTOptions) (*JWT, error) {
	if opts.Issuer == "" || opts.Audience == "" {
		return nil, errors.New("auth: jwt needs both an issuer and an audience to check")
	}
	if opts.Leeway <= 0 {
		opts.Leeway = DefaultJWTLeeway
	}
	j := &JWT{opts: opts, now: time.Now}
	switch {
	case opts.JWKSFile != "" && opts.HS256SecretFile != "":
		return nil, errors.New("auth: jwt takes a JWKS file or a shared secret, not both")
	case opts.JWKSFile != "":
		data, err := os.ReadFile(opts.JWKSFile)
		if err != nil {
			return nil, fmt.Errorf("auth: reading JWKS: %w", err)
		}
		var set jose.JSONWebKeySet
		if err := json.Unmarshal(data, &set); err != nil || len(set.Keys) == 0 {
			return nil, fmt.Errorf("auth: %s is not a JSON Web Key Set with keys (%v)", opts.JWKSFile, err)
		}
		for _, k := range set.Keys {
			if !k.IsPublic() || k.KeyID == "" {
				return nil, fmt.Errorf("auth: JWKS key %q: only public keys with a kid belong in the JWKS", k.KeyID)
			}
		}
		j.key, j.algs = &set, asymmetricAlgs
	case opts.HS256SecretFile != "":
		data, err := os.ReadFile(opts.HS256SecretFile)
		if err != nil {
			return nil, fmt.Errorf("auth: reading JWT secret: %w", err)
		}
		secret := bytes.TrimSpace(data)
		if len(secret) < 32 {
			return nil, fmt.Errorf("auth: JWT secret in %s has %d bytes, want at least 32", opts.HS256SecretFile, len(secret))
		}
		j.key, j.algs = secret, []jose.SignatureAlgorithm{jose.HS256}
	default:
		return nil, errors.New("auth: jwt needs a JWKS file or a shared secret file")
	}
	return j, nil
}

// Authenticate implements Authenticator.
func (j *JWT) Authenticate(ctx context.Context) (Identity, error) {
	token, err := bearer(ctx, jwtHint)
	if err != nil {
		return Identity{}, err
	}
	parsed, err := jwt.ParseSigned(token, j.algs)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: the bearer token is not a signed JWT this server accepts (%w); %s",
			ErrUnauthenticated, err, jwtHint)
	}
	if err := j.checkKeyAlg(parsed.Headers[0]); err != nil {
		return Identity{}, err
	}
	// Verify first, then read the claims, so that a claim that does not
	// parse is not reported as a bad signature.
	if err := parsed.Claims(j.key); err != nil {
		return Identity{}, fmt.Errorf("%w: the JWT's signature does not verify against this server's keys (%w)",
			ErrUnauthenticated, err)
	}
	var claims jwt.Claims
	if err := parsed.UnsafeClaimsWithoutVerification(&claims); err != nil { // verified just above
		if errors.Is(err, jwt.ErrUnmarshalNumericDate) {
			return Identity{}, fmt.Errorf("%w: the JWT's exp, nbf or iat is not a time in seconds this server can read "+
				"(at most 2^62 s from 1970, with no more than float64 precision); ask your identity provider for a token with standard times",
				ErrUnauthenticated)
		}
		return Identity{}, fmt.Errorf("%w: the JWT's claims do not parse (%w)", ErrUnauthenticated, err)
	}
	if err := j.validate(claims); err != nil {
		return Identity{}, err
	}
	return Identity{Name: claims.Subject, Method: MethodJWT}, nil
}

// checkKeyAlg pins each JWKS key to the alg it declares: a key marked
// "alg": "RS256" verifies RS256 signatures only, never RS384 or PS256
// made with the same key. A key without an alg verifies the algorithms
// of its type (RS* and PS* for RSA, ES* for EC, EdDSA for OKP), as
// go-jose does. A shared secret verifies HS256 only (j.algs).
func (j *JWT) checkKeyAlg(h jose.Header) error {
	set, ok := j.key.(*jose.JSONWebKeySet)
	if !ok {
		return nil
	}
	keys := set.Key(h.KeyID)
	if len(keys) == 0 || keys[0].Algorithm == "" || keys[0].Algorithm == h.Algorithm {
		return nil // an unknown kid fails verification, with its own message
	}
	return fmt.Errorf("%w: the JWT is signed with %s, but this server's key %s is for %s only; ask your identity provider for a token signed as its key says",
		ErrUnauthenticated, echo.Quote(h.Algorithm), echo.Quote(h.KeyID), echo.Quote(keys[0].Algorithm))
}

// validate checks the registered claims and says which one failed.
func (j *JWT) validate(c jwt.Claims) error {
	now := j.now()
	err := c.ValidateWithLeeway(jwt.Expected{
		Issuer: j.opts.Issuer, AnyAudience: jwt.Audience{j.opts.Audience}, Time: now,
	}, j.opts.Leeway)
	var msg string
	switch {
	case c.Expiry == nil:
		msg = "the JWT has no exp claim; this server accepts only tokens that expire"
	case errors.Is(err, jwt.ErrExpired):
		msg = fmt.Sprintf("the JWT expired at %s; get a fresh one from your identity provider",
			c.Expiry.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrNotValidYet):
		msg = fmt.Sprintf("the JWT is not valid before %s (nbf); check the clocks",
			c.NotBefore.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		msg = "the JWT is issued in the future (iat); check the clocks"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		msg = fmt.Sprintf("the JWT's issuer %s is not %q, the one this server trusts", echo.Quote(c.Issuer), j.opts.Issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		msg = fmt.Sprintf("the JWT's audience %s does not include %q; ask for a token for this service", echo.Cut(fmt.Sprintf("%q", []string(c.Audience)), echo.MaxName), j.opts.Audience)
	case err != nil:
		msg = "the JWT's claims are not valid: " + err.Error()
	case c.Subject == "":
		msg = "the JWT has no sub claim to name its identity"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnauthenticated, msg)
}
