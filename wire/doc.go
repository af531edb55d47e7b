// Package wire is the layout of scand's Flight messages on the wire, shared
// by the server, which writes them, and the Go client, which reads them.
// Both halves of a layout live here so that one test can hold them to each
// other and to protobuf.
//
// # FlightData
//
// The sending side lays a FlightData message out by reference (send.go):
// NewMessage copies the field prefixes, data_header and app_metadata into
// a head buffer and keeps the body's pieces as they are, with a reference
// on what they belong to (an arrow.RecordBatch); SendCodec, the server's
// gRPC codec, turns the message into a mem.BufferSlice whose last buffer,
// a copy of the body's last bytes, releases that reference when gRPC frees
// it after writing it. Fields go in number order with empty bytes fields
// left out, so the bytes equal proto.Marshal of the stock message and any
// Flight client reads them.
//
// The receiving side (receive.go) is ReceiveCodec, the Go client's gRPC
// codec: it finds the fields of a FlightData by their prefixes across the
// buffers gRPC received. Decoding into a Received (receive_batch.go), it
// copies data_header and app_metadata out and keeps data_body where it
// is, as pieces of gRPC's buffers with a reference on each; Reader then
// builds each record batch from the IPC header (parsed with bounds checks,
// receive_ipc.go) and those pieces: an Arrow buffer that lies whole in one
// received buffer is a slice of it, owned through a memory.Buffer whose
// release drops the gRPC reference, and one that straddles is copied into
// recycled memory (receive_pool.go) or the caller's allocator. Decoding
// into a flight.FlightData, it copies the message once into a buffer it
// keeps, placed so that data_body is 64-byte aligned, for
// flight.NewRecordReader. Anything it does not expect (unknown or repeated
// fields) goes to protobuf; schemas and messages Reader does not load
// itself go to arrow-go's IPC reader.
//
// FuzzSendReceive checks the round trip: random messages, copied or by
// reference, give proto.Marshal's bytes and decode to the same fields.
//
// What is about the server's streams stays in package server
// (sendpath.go): the IPC payload writer that decides which record a body
// belongs to and whether it is worth referencing, and the connection
// tracking that releases messages gRPC never frees when a connection dies
// with them queued. Those depend on gRPC server machinery (stats handlers,
// stream contexts) and on the record's lifetime in DoGet, not on the
// layout, and keeping them out leaves the client's import of this package
// free of server code.
//
// # Stream stats
//
// The last message of a DoGet stream carries the stream's figures in
// app_metadata: a scandv1.StreamStats as JSON under the proto field names,
// with 64-bit integers as JSON numbers (MarshalStats); UnmarshalStats reads
// that and protojson's own encoding (integers as strings).
//
// # Options
//
// SendPath and Compression are the typed send settings, parsed from their
// names in one place (options.go).
package wire
