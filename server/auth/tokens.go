package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/scand/scand/server/ticketsign"
)

// DefaultHandshakeTTL is how long a token from the Handshake stays valid.
const DefaultHandshakeTTL = time.Hour

const tokensHint = bearerHint + `; the token is one listed in the identities file, or the one the Handshake ` +
	`returns for Basic user:password (pyarrow: client.authenticate_basic_token(user, password))`

// Tokens authenticates bearer tokens from the identities file and issues
// tokens for Basic user:password in the Handshake (--auth tokens).
type Tokens struct {
	cfg    *Config
	signer *ticketsign.Signer
	ttl    time.Duration
	// dummy is a bcrypt hash compared against for unknown users (who are
	// refused whatever the outcome), at the cost of the file's own hashes
	// so the comparison takes as long; made on first use.
	dummy func() []byte
}

var (
	_ Authenticator  = (*Tokens)(nil)
	_ BasicExchanger = (*Tokens)(nil)
)

// NewTokens authenticates against cfg. Handshake tokens are signed by
// signer (the deployment's ticket key ring, so every replica accepts them)
// and last ttl (0: DefaultHandshakeTTL).
func NewTokens(cfg *Config, signer *ticketsign.Signer, ttl time.Duration) *Tokens {
	if ttl <= 0 {
		ttl = DefaultHandshakeTTL
	}
	return &Tokens{cfg: cfg, signer: signer, ttl: ttl, dummy: sync.OnceValue(func() []byte {
		h, err := bcrypt.GenerateFromPassword([]byte("scand: no such user"), cfg.maxCost)
		if err != nil {
			panic(errors.Join(errors.New("auth: bcrypt"), err)) // only for a cost outside bcrypt's range, which ParseConfig refuses
		}
		return h
	})}
}

// Authenticate implements Authenticator.
func (t *Tokens) Authenticate(ctx context.Context) (Identity, error) {
	token, err := bearer(ctx, tokensHint)
	if err != nil {
		return Identity{}, err
	}
	if env, ok := ticketsign.DecodeToken(token); ok {
		return t.handshakeToken(env)
	}
	// Tokens are long random strings, so an unsalted hash is enough and a
	// map lookup by hash leaks nothing useful about any token.
	sum := sha256.Sum256([]byte(token))
	name, ok := t.cfg.byToken[hex.EncodeToString(sum[:])]
	if !ok {
		return Identity{}, fmt.Errorf("%w: the bearer token is not one this server knows; "+
			"check it, or get a fresh one from the Handshake", ErrUnauthenticated)
	}
	return Identity{Name: name, Method: MethodToken}, nil
}

func (t *Tokens) handshakeToken(env []byte) (Identity, error) {
	claims, err := t.signer.Open(ticketsign.KindBearerToken, env)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: bearer token from the Handshake not accepted: %w", ErrUnauthenticated, err)
	}
	if !t.cfg.Has(claims.Identity) {
		return Identity{}, fmt.Errorf("%w: identity %q of this token is no longer configured", ErrUnauthenticated, claims.Identity)
	}
	return Identity{Name: claims.Identity, Method: MethodHandshake}, nil
}

// ExchangeBasic implements BasicExchanger: it checks password against the
// identity's bcrypt hash and returns a signed token. Unknown users cost the
// same bcrypt comparison as known ones, so timing does not tell which
// names exist, and the error does not say which half was wrong.
func (t *Tokens) ExchangeBasic(ctx context.Context, user, password string) (Identity, string, error) {
	hash, known := t.dummy(), false
	if e, ok := t.cfg.identities[user]; ok && e.password != nil {
		hash, known = e.password, true
	}
	if err := bcrypt.CompareHashAndPassword(hash, []byte(password)); err != nil || !known {
		return Identity{}, "", fmt.Errorf("%w: user name or password not accepted", ErrUnauthenticated)
	}
	env, err := t.signer.Sign(ticketsign.KindBearerToken, user, nil, t.ttl)
	if err != nil {
		return Identity{}, "", err
	}
	return Identity{Name: user, Method: MethodHandshake}, ticketsign.EncodeToken(env), nil
}
