package auth_test

import (
	"log"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/scand/scand/server/auth"
	"github.com/scand/scand/server/ticketsign"
	"github.com/scand/scand/server/tlsfiles"
)

// Example_tokens wires --auth tokens over TLS: what cmd/scand will do with
// --identities, --ticket-key-file, --tls-cert and --tls-key.
func Example_tokens() {
	cfg, err := auth.LoadConfig("/etc/scand/identities.yaml")
	if err != nil {
		log.Fatal(err)
	}
	ring, err := ticketsign.LoadKeyRing("/etc/scand/ticket-keys")
	if err != nil {
		log.Fatal(err)
	}
	signer := ticketsign.NewSigner(ring) // also signs and verifies DoGet tickets
	tokens := auth.NewTokens(cfg, signer, time.Hour)
	guard := &auth.Guard{Authenticator: tokens, Basic: tokens, Exempt: auth.HealthMethods}

	files, err := tlsfiles.Load(tlsfiles.Options{CertFile: "/etc/scand/tls.crt", KeyFile: "/etc/scand/tls.key"})
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(
		grpc.Creds(credentials.NewTLS(files.ServerConfig())),
		grpc.ChainUnaryInterceptor(guard.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(guard.StreamInterceptor()),
	)
	_ = srv // register the Flight service, whose Handshake calls auth.ServeHandshake
	var _ func(flight.FlightService_HandshakeServer) error = auth.ServeHandshake
}
