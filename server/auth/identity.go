package auth

import (
	"context"
	"errors"
)

// Method says how an identity proved who it is.
type Method string

const (
	MethodNone      Method = "none"      // --auth none: everyone is Anonymous
	MethodToken     Method = "token"     // a static bearer token from the identities file
	MethodHandshake Method = "handshake" // a bearer token the Handshake issued for Basic user:password
	MethodJWT       Method = "jwt"       // a bearer JWT
	MethodMTLS      Method = "mtls"      // a verified client certificate
)

// Identity is who a call is made by. Name is the key for scopes, limits,
// tickets and audit: the identities file's name, a JWT's sub claim, or a
// client certificate's subject.
type Identity struct {
	Name   string
	Method Method
}

// Anonymous is the identity of every call under --auth none.
var Anonymous = Identity{Name: "anonymous", Method: MethodNone}

// ErrUnauthenticated is wrapped by every error an Authenticator returns
// for credentials that are missing or not accepted. The Guard answers them
// with UNAUTHENTICATED and the error's message.
var ErrUnauthenticated = errors.New("auth: unauthenticated")

// Authenticator checks the credentials of one call. ctx is the call's
// context: incoming gRPC metadata (the authorization header) and the peer
// (its TLS state). Implementations are safe for concurrent use and return
// an error wrapping ErrUnauthenticated, whose message tells the client what
// to send, when the credentials do not identify anyone.
type Authenticator interface {
	Authenticate(ctx context.Context) (Identity, error)
}

// BasicExchanger trades Basic user:password for a bearer token: the Flight
// Handshake's job in --auth tokens. The token must be accepted by the same
// deployment's Authenticator on every replica.
type BasicExchanger interface {
	ExchangeBasic(ctx context.Context, user, password string) (id Identity, bearerToken string, err error)
}

type identityKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the identity the Guard put in ctx; ok is false for a
// context that did not pass through a Guard.
func FromContext(ctx context.Context) (id Identity, ok bool) {
	id, ok = ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// none is the Authenticator of --auth none.
type none struct{}

// None returns the Authenticator that lets every call in as Anonymous.
func None() Authenticator { return none{} }

func (none) Authenticate(context.Context) (Identity, error) { return Anonymous, nil }
