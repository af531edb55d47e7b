// Package stream executes one DoGet: a ScanTask in, its record batches out
// on a Flight stream.
//
// The ScanTask (proto scand.v1, decoded from the ticket by the server) is
// the package's contract: the file and its pinned size and version, the
// columns as indexes into the file's column names and how the scan's
// unified schema differs from the file's projection (SchemaDelta, checked
// against the plan's fingerprint, schemacheck.go), the row groups, the
// filter, the partition values and extra fields (streamfilter.go), the
// deletes of a table's file (streamdeletes.go), limit, skip_rows
// (skip.go), batch sizing, compression, and the further files of a packed
// endpoint (multifile.go). The server verifies the signed ticket, checks
// the caller's scope and limits, and calls Run; nothing here knows of
// signatures, identities' scopes or gRPC codes.
//
// A stream opens the task's file (Config.Open, the server's opener under
// the caller's scope), projects and rebuilds the scan's schema, waits for
// its decode memory (admission), reads the row groups, conforms every
// batch to the scan's schema (batch.go), applies the limit, cuts batches
// to message size and gathers small ones (gather.go), and sends them
// through the send path (sendpath.go: zero-copy by default, or arrow-go's
// stock writer), holding the last back so that it carries the stream's
// figures (scandv1.StreamStats) in app_metadata. The next batch decodes
// while the last is on the wire (readahead.go), and a packed endpoint's
// next files open while the current one decodes (ahead.go), with their
// deletes (deletesahead.go); the next file also decodes
// on a goroutine of its own while the current one is filtered and sent
// (decodeahead.go), its batches taken in order, when its decode memory
// is admitted at once (a stream never waits for a second grant), and
// dropped when the stream parks.
//
// Batch sizing (messageSizeFor): unless the task asks for batch_rows,
// batches aim at half of the largest message the client accepts
// (max_message_bytes; 4 MiB when unsaid, at least 4 and at most 64 MiB)
// and any batch estimated over 3/4 of it is halved until it fits; the row
// cap (64 Ki rows at the default) grows in proportion, up to 1 Mi rows.
// Admission is charged for three or four batches (streamWorkBytes).
//
// A rows_only task (a scan of no columns, rowsonly.go) sends batches of no
// columns: without a filter or deletes its rows are the ticket's and
// SendTicketRows sends them without opening a file; otherwise the stream
// reads as any other and its writer sends each batch's length alone.
//
// What the stream needs from the server comes in through Config: the IO
// scheduler, admission, the allocator, the logger, the opener, the scope
// check of a file opened directly, and the hooks that audit and count a
// stream's end. Errors are the layers' own, wrapped; the stream's own are
// *Error with a Kind (a ticket it cannot execute, an idle client, a
// panic). The server maps them all to gRPC codes (server/status.go).
package stream
