// Package server is scand's Arrow Flight service.
//
// A scan is two calls. GetFlightInfo takes a ScanRequest (the command of a
// FlightDescriptor, as binary protobuf or JSON; a PATH descriptor means all
// columns of those paths), expands globs and prefixes, reads every file's
// footer, resolves the columns, unifies the files' schemas and answers with
// one endpoint per split: a run of row groups of about SplitBytes of
// projected, compressed data, whose ticket is a ScanTask. DoGet executes one
// ScanTask and streams its record batches; the last message of the stream
// carries the scan's IO figures as JSON in app_metadata.
//
// DoGet writes batches through the send path (sendpath.go): by default
// zero-copy, each message laid out by package wire with the batch's
// buffers by reference, byte for byte what arrow-go's Flight writer sends;
// Config.SendPath selects that stock writer instead.
//
// Batches are sized so that each Flight message stays under gRPC's default
// 4 MiB receive limit (the stock Go and Python clients do not raise it),
// unless the request asks for batch_rows explicitly.
//
// This package is the only place errors become gRPC status codes (see
// status.go). Panics in decoders are contained per request by the scanner;
// the handlers here also recover, so no request can take the server down.
package server
