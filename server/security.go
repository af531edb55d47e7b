package server

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/types/known/timestamppb"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/auth"
	"github.com/scand/scand/server/auth/scope"
	"github.com/scand/scand/server/limits"
	"github.com/scand/scand/server/stream"
	"github.com/scand/scand/server/ticketsign"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/wire"
)

// Security is who may call the server and what each caller may read and
// use (see docs/security.md). The zero value serves plaintext, lets every
// call in as auth.Anonymous with every file in scope and no limits, and
// still signs tickets, with a key generated in New.
type Security struct {
	// TLS, when set, is the listener's TLS configuration (tlsfiles'
	// ServerConfig, which reloads rotated files).
	TLS *tls.Config
	// Guard authenticates every call before its handler runs; nil lets
	// every call in as auth.Anonymous. Exempt its HealthMethods so probes
	// need no credentials.
	Guard *auth.Guard
	// Signer signs GetFlightInfo's tickets and verifies DoGet's; nil
	// generates a key ring in New (tickets then verify on this process
	// only).
	Signer *ticketsign.Signer
	// TicketTTL is how long a ticket stays valid; 0 means
	// ticketsign.DefaultTicketTTL.
	TicketTTL time.Duration
	// Scopes returns the roots an identity may read; ok false means the
	// identity may read nothing. Nil gives every identity scope.Everything.
	Scopes func(identity string) (s scope.Scope, ok bool)
	// S3Allow, when set, narrows every scope's S3 names (--s3-allow).
	S3Allow *scope.Scope
	// Streams caps each identity's concurrent DoGet streams; nil: no cap.
	Streams *limits.Concurrency
	// FlightInfoRate limits each identity's GetFlightInfo calls; nil: no
	// limit.
	FlightInfoRate *limits.Rate
}

// securityOptions are the gRPC options for sec: its credentials and the
// Guard's interceptors, first in the chain.
func securityOptions(sec Security) []grpc.ServerOption {
	var opts []grpc.ServerOption
	if sec.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(sec.TLS)))
	}
	if sec.Guard != nil {
		opts = append(opts,
			grpc.ChainUnaryInterceptor(sec.Guard.UnaryInterceptor()),
			grpc.ChainStreamInterceptor(sec.Guard.StreamInterceptor()))
	}
	return opts
}

// caller is who a call is made by, and what it may read.
type caller struct {
	id    auth.Identity
	scope scope.Scope
}

// callerOf returns the identity the Guard put in ctx (Anonymous without a
// Guard) and its scope.
func (s *Server) callerOf(ctx context.Context) caller {
	id, ok := auth.FromContext(ctx)
	if !ok {
		id = auth.Anonymous
	}
	sc := scope.Everything()
	if s.sec.Scopes != nil {
		sc, _ = s.sec.Scopes(id.Name) // not listed: the zero Scope allows nothing
	}
	if s.sec.S3Allow != nil {
		sc = sc.LimitS3(*s.sec.S3Allow)
	}
	return caller{id: id, scope: sc}
}

// Check refuses a name the caller may not read, asked for directly.
func (c caller) Check(name string) error {
	if c.scope.Allows(name) {
		return nil
	}
	return deniedf("%q is outside what identity %q may read (its roots: %s); ask the operator to add a root in the identities file, or for an object store, to --s3-allow, --gcs-allow or --azure-allow",
		name, c.id.Name, c.scopeString())
}

// CheckFile refuses a file the caller may not read: its name, and what a
// read of it reads (storage.Info.Target, where a symlink leads), must both
// lie in the scope. A link inside the scope that leads out of it is
// refused however it is reached: by its name, through a symlinked
// directory, by a glob or a directory scan (the files source drops it), or by
// a link swapped in after planning (open checks the Info of what it
// opened, which the local store takes from the open descriptor). Code
// that learns file names from elsewhere (table metadata naming files by
// absolute path) checks them here too, with the Info of a Stat or Open
// (caller is the files source's Scope).
func (c caller) CheckFile(info storage.Info) error {
	if err := c.Check(info.Name); err != nil {
		return err
	}
	if info.Target == "" || c.scope.Allows(info.Target) {
		return nil
	}
	return deniedf("%s is a symbolic link to %s, which is outside what identity %q may read (its roots: %s); scopes apply to the file a link leads to",
		quoteName(info.Name), quoteName(info.Target), c.id.Name, c.scopeString())
}

// AllowsFile is CheckFile as a yes or no, for listings, where files
// outside the scope look absent.
func (c caller) AllowsFile(info storage.Info) bool {
	return c.scope.Allows(info.Name) && (info.Target == "" || c.scope.Allows(info.Target))
}

func (c caller) scopeString() string {
	if str := c.scope.String(); str != "" {
		return str
	}
	return "none"
}

// signTicket signs a ScanTask for the caller; the endpoint expires with it.
func (s *Server) signTicket(identity string, task []byte) (*flight.FlightEndpoint, error) {
	expires := time.Now().Add(s.sec.TicketTTL)
	env, err := s.sec.Signer.Sign(ticketsign.KindTicket, identity, task, s.sec.TicketTTL)
	if err != nil {
		return nil, err
	}
	return &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: env}, ExpirationTime: timestamppb.New(expires)}, nil
}

// Handshake implements the Flight Handshake behind the Guard (see
// auth.ServeHandshake): with --auth tokens, Basic user:password is traded
// for a bearer token in the response header.
func (s *Server) Handshake(stream flight.FlightService_HandshakeServer) error {
	return auth.ServeHandshake(stream)
}

// openTicket verifies a DoGet ticket for the caller, decodes it and checks
// its path against the caller's scope (which may have narrowed since the
// ticket was issued).
func (s *Server) openTicket(c caller, ticket []byte) (*scandv1.ScanTask, wire.Compression, error) {
	payload, err := s.sec.Signer.VerifyTicket(ticket, c.id.Name)
	if err != nil {
		return nil, 0, err
	}
	task, comp, err := decodeTicket(payload)
	if err != nil {
		return nil, 0, err
	}
	for _, path := range stream.TaskPaths(task) {
		if err := c.Check(path); err != nil {
			return nil, 0, err
		}
	}
	return task, comp, nil
}

// acquireStream takes one of the caller's concurrent streams.
func (s *Server) acquireStream(c caller) (release func(), err error) {
	if s.sec.Streams == nil {
		return func() {}, nil
	}
	return s.sec.Streams.Acquire(c.id.Name)
}

// allowFlightInfo spends one of the caller's GetFlightInfo calls.
func (s *Server) allowFlightInfo(c caller) error {
	if s.sec.FlightInfoRate == nil {
		return nil
	}
	return s.sec.FlightInfoRate.Allow(c.id.Name)
}

// setupSecurity fills sec's defaults.
func setupSecurity(sec *Security) error {
	if sec.TicketTTL <= 0 {
		sec.TicketTTL = ticketsign.DefaultTicketTTL
	}
	if sec.Signer == nil {
		ring, err := ticketsign.GenerateKeyRing()
		if err != nil {
			return err
		}
		sec.Signer = ticketsign.NewSigner(ring)
	}
	return nil
}
