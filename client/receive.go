package client

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"

	"github.com/scand/scand/wire"
)

// ZeroCopyCodec returns a DialOption under which FlightData messages are
// decoded by wire.ReceiveCodec. A scan receives each message as the
// buffers gRPC read it into and builds its batches from them (wire.Reader;
// see "Receiving" in the package doc); a stock flight.Client on the
// connection gets FlightData copied once into a buffer the decoded Arrow
// arrays slice. Any other message, and any FlightData it does not expect,
// goes through the standard proto codec; the bytes on the wire are plain
// protobuf, so it works with any Flight server.
func ZeroCopyCodec() grpc.DialOption {
	return grpc.WithDefaultCallOptions(grpc.ForceCodecV2(wire.ReceiveCodec{}))
}

// The receive path's HTTP/2 settings (ReceiveOptions).
const (
	// streamWindow and connWindow are the flow-control windows the client
	// grants: how far a server may run ahead of the reader, per stream
	// and in all. connWindow lets a few concurrent streams each keep a
	// full window.
	streamWindow = 8 << 20
	connWindow   = 32 << 20
	// readBuffer is how much the transport reads from the socket at once.
	readBuffer = 256 << 10
)

// ReceiveOptions returns the DialOptions under which this client receives
// Flight streams: ZeroCopyCodec, wire.ReceivePool (gRPC's buffers for
// received frames, reused without clearing), and HTTP/2 flow-control
// windows and a read buffer sized for bulk transfer. Dial uses them; pass
// them to grpc.NewClient to get the same from a stock Flight client.
//
// gRPC starts every stream with a 64 KiB window and grows it as its
// bandwidth-delay estimate grows. A scan stream sends tens of megabytes
// as fast as it can, so with the default the server keeps stopping for
// window updates, and both ends pay a wake-up for each. On loopback (two
// cores shared by client and server) the fixed windows raised throughput
// by 5-35 % (docs/send-path.md). The price is memory: a client that reads
// slowly lets gRPC buffer up to streamWindow per stream, connWindow in
// all, before the server must wait.
func ReceiveOptions() []grpc.DialOption {
	return []grpc.DialOption{
		ZeroCopyCodec(),
		experimental.WithBufferPool(wire.ReceivePool()),
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
		grpc.WithReadBufferSize(readBuffer),
	}
}
