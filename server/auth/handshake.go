package auth

import (
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ServeHandshake is the Flight Handshake for a server behind a Guard: the
// Guard has already authenticated the call and, for Basic credentials,
// set the bearer token in the response header, so the handshake itself
// exchanges no messages and returns at once. A client reads the token
// from the "authorization" response header. Without a Guard (no identity
// in the context) it answers UNAUTHENTICATED, so a server wired without
// one does not pretend to authenticate.
func ServeHandshake(stream flight.FlightService_HandshakeServer) error {
	if _, ok := FromContext(stream.Context()); !ok {
		return status.Error(codes.Unauthenticated, "auth: the Handshake is served only behind the authentication interceptors")
	}
	return nil
}
