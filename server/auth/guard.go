package auth

import (
	"context"
	"errors"
	"net"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/internal/echo"
	"github.com/scand/scand/server/limits"
)

// HandshakeMethod is the Flight Handshake's full gRPC method name.
const HandshakeMethod = "/arrow.flight.protocol.FlightService/Handshake"

// HealthMethods are the gRPC health service's methods. Exempting them lets
// Kubernetes probes in without credentials; they reveal only whether the
// server is serving.
var HealthMethods = []string{
	"/grpc.health.v1.Health/Check",
	"/grpc.health.v1.Health/Watch",
	"/grpc.health.v1.Health/List",
}

// Guard authenticates every call before its handler runs and puts the
// Identity in the handler's context (FromContext). Failures are answered
// with UNAUTHENTICATED and a message that says what to send; the handler
// never runs. As an interceptor the Guard is at the server's edge, so it
// chooses status codes itself.
type Guard struct {
	// Authenticator checks every call not exempt. Required.
	Authenticator Authenticator
	// Basic, if set, answers a Handshake that carries Basic user:password
	// with a bearer token in the response header "authorization: Bearer
	// <token>" (as arrow-go's and pyarrow's authenticate_basic_token read
	// it). If nil, the Handshake is authenticated like any other call.
	Basic BasicExchanger
	// HandshakeRate, if set, limits the Basic Handshakes each client
	// address (its IP, without the port) may make, refused with
	// RESOURCE_EXHAUSTED before the password is checked. bcrypt is slow on
	// purpose, so unlimited guesses would be both a password search and a
	// cheap way to load the server's cores.
	HandshakeRate *limits.Rate
	// Exempt lists full method names served without authentication, e.g.
	// HealthMethods. Their handlers see no Identity.
	Exempt []string
}

// UnaryInterceptor returns the interceptor for unary calls
// (GetFlightInfo, GetSchema, DoAction...).
func (g *Guard) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if slices.Contains(g.Exempt, info.FullMethod) {
			return handler(ctx, req)
		}
		id, err := g.Authenticator.Authenticate(ctx)
		if err != nil {
			return nil, toStatus(err)
		}
		return handler(NewContext(ctx, id), req)
	}
}

// StreamInterceptor returns the interceptor for streaming calls (DoGet,
// ListFlights, Handshake...).
func (g *Guard) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if slices.Contains(g.Exempt, info.FullMethod) {
			return handler(srv, ss)
		}
		ctx := ss.Context()
		if info.FullMethod == HandshakeMethod && g.Basic != nil {
			if id, handled, err := g.exchangeBasic(ctx, ss); handled {
				if err != nil {
					return toStatus(err)
				}
				return handler(srv, &identityStream{ServerStream: ss, ctx: NewContext(ctx, id)})
			}
		}
		id, err := g.Authenticator.Authenticate(ctx)
		if err != nil {
			return toStatus(err)
		}
		return handler(srv, &identityStream{ServerStream: ss, ctx: NewContext(ctx, id)})
	}
}

// exchangeBasic handles a Handshake carrying Basic credentials; handled
// is false when the call carries none (a bearer token, say).
func (g *Guard) exchangeBasic(ctx context.Context, ss grpc.ServerStream) (id Identity, handled bool, err error) {
	user, password, ok, err := basic(ctx)
	if !ok || err != nil {
		return Identity{}, ok, err
	}
	if g.HandshakeRate != nil {
		if err := g.HandshakeRate.Allow(peerHost(ctx)); err != nil {
			return Identity{}, true, err
		}
	}
	id, token, err := g.Basic.ExchangeBasic(ctx, user, password)
	if err != nil {
		return Identity{}, true, err
	}
	if err := ss.SetHeader(metadata.Pairs(Header, "Bearer "+token)); err != nil {
		return Identity{}, true, err
	}
	return id, true, nil
}

// toStatus answers an authentication failure. Anything else (a context
// ended, a signing failure) keeps its own code.
func toStatus(err error) error {
	// Messages repeat what the client sent (a scheme, claims); cut, they
	// still fit the client's trailers.
	msg := echo.Cut(err.Error(), maxMessageLen)
	switch {
	case errors.Is(err, ErrUnauthenticated):
		return status.Error(codes.Unauthenticated, msg)
	case errors.Is(err, limits.ErrExceeded):
		return status.Error(codes.ResourceExhausted, msg)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return status.Errorf(codes.Internal, "authentication failed: %s", msg)
}

// maxMessageLen bounds a status message, as the server's own do.
const maxMessageLen = 4 << 10

// peerHost is the client's address without its port, so that one host's
// connections share a limit; "unknown" when gRPC knows no peer.
func peerHost(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	addr := p.Addr.String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// identityStream is a ServerStream whose Context carries the Identity.
type identityStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identityStream) Context() context.Context { return s.ctx }
