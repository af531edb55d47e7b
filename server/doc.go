// Package server is scand's Arrow Flight service.
//
// A scan is two calls. GetFlightInfo takes a ScanRequest (the command of a
// FlightDescriptor, as binary protobuf or JSON; a PATH descriptor means all
// columns of those paths), checks it (request.go), and has package planner
// plan it: the request's paths become a files source (package
// source/files) under the caller's scope, and the planner lists them,
// reads the footers, prunes, unifies the schemas and cuts the scan into
// tasks, one ScanTask per endpoint (a run of row groups of about
// SplitBytes of projected, compressed data, or whole small files packed
// into one endpoint, ScanTask.more). The server turns the plan into a
// FlightInfo (flightinfo.go): each task signed for the caller as its
// ticket, its locations on the replicas' ring, the whole under the 4 MiB a
// stock client accepts. Config.Planning is the planner's configuration
// (planner.Config), wired in New (plannerConfig). DoGet verifies and decodes the
// ticket (ticket.go, security.go), checks the caller's scope and limits,
// and hands the ScanTask to package server/stream, which executes it and
// sends its record batches (stream.Run, wired in New by streamConfig,
// doget.go): the stream's package doc says what it owns (batch sizing
// for max_message_bytes, the zero-copy send path, packed endpoints' files
// read in order with the next ones opened ahead, read-ahead); the last
// message carries the stream's IO figures (scandv1.StreamStats, as
// wire.MarshalStats writes them) in app_metadata. Config.SendPath selects
// arrow-go's stock writer instead of the zero-copy one.
//
// Tickets carry no schema (the planner's ticket codec): a ScanTask names
// the columns as indexes into the file's column names and says how the
// scan's unified schema differs from the file's own projection, which
// the stream recomputes anyway and checks against the plan's fingerprint.
// A FlightInfo thus grows with the number of files, not with files times
// columns.
//
// The server builds nothing that touches a store. Config takes the bucket,
// the IO scheduler over it and the admission controller (package
// admission: the decode-memory share streams wait for, and the budget their
// decoders charge); cmd/scand wires them. The server imports the storage
// contract, never a backend.
//
// Security (security.go, Config.Security) is wired here from the
// building blocks in server/auth, server/ticketsign, server/limits and
// server/tlsfiles: New installs the TLS credentials and the Guard's
// interceptors first; every handler takes the caller's identity from the
// context (auth.Anonymous without a Guard) and checks each name against its
// scope (patterns are filtered, direct names refused); GetFlightInfo signs
// each ScanTask for the caller with an expiry, and DoGet verifies the
// envelope before decoding it and checks the path again; per-identity
// limits cap streams and GetFlightInfo calls. Health is exempt.
//
// The "resume" action (resume.go) re-signs a ticket with skip_rows set, so
// a client whose stream broke reads on from the next row on any replica
// (docs/failover.md).
//
// This package is the only place errors become gRPC status codes (see
// status.go): the planner's, the sources' and the stream's classified
// errors too. Panics in decoders are contained per request by the scanner;
// the handlers here also recover, so no request can take the server down.
//
// Planning's memory (package planner/planmem) is charged to
// Config.PlanMemory, the planning share of --io-memory, by the planner;
// the server exports its figures (metrics.go). Connections (conns.go) must start a call in time, are closed when idle,
// and are capped per client address.
//
// Tracing (tracing.go, docs/tracing.md): plan, footer and send spans,
// children of the RPC span that otelgrpc's stats handler starts when
// cmd/scand passes it in Config.ServerOptions; the API only, and free
// when tracing is off.
package server
