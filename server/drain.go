package server

import (
	"context"
	"errors"
	"sync/atomic"

	"google.golang.org/grpc"
)

// ErrDraining is a call refused because this replica is shutting down
// (Server.Drain); toStatus makes it UNAVAILABLE, the code on which
// clients go to an endpoint's next location.
var ErrDraining = errors.New("this scand replica is draining (shutting down) and takes no new scans: " +
	"retry on another replica (the endpoint's next location, or another address of the service)")

// flightMethod is the prefix of the Flight service's gRPC methods.
const flightMethod = "/arrow.flight.protocol.FlightService/"

// drainRefused are the methods that start work, refused while draining.
// Handshake, ListActions and DoAction still answer, and so does health
// (NOT_SERVING), which is another service.
var drainRefused = map[string]bool{
	flightMethod + "GetFlightInfo":  true,
	flightMethod + "PollFlightInfo": true,
	flightMethod + "GetSchema":      true,
	flightMethod + "DoGet":          true,
	flightMethod + "ListFlights":    true,
}

// drainState is whether the server drains, and how many DoGet streams
// run: what Shutdown waits for. Safe for concurrent use.
type drainState struct {
	draining atomic.Bool
	streams  atomic.Int64
}

// start marks the server draining; it reports whether this call did.
func (d *drainState) start() bool { return !d.draining.Swap(true) }

// serverOptions are the interceptors that refuse work while draining and
// count running streams. They run after the security interceptors.
func (d *drainState) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if d.draining.Load() && drainRefused[info.FullMethod] {
				return nil, toStatus(ErrDraining)
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if !drainRefused[info.FullMethod] {
				return h(srv, ss)
			}
			// Counted before the check: Shutdown sets draining, then waits
			// for the count, so a stream is either refused or waited for.
			d.streams.Add(1)
			defer d.streams.Add(-1)
			if d.draining.Load() {
				return toStatus(ErrDraining)
			}
			return h(srv, ss)
		}),
	}
}
