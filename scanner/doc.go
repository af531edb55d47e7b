// Package scanner turns columnar files into Arrow record batches. It detects
// a file's format from its magic bytes and hands it to the reader for that
// format (scanner/parquet over arrow-go's pqarrow; scanner/orc, written from the ORC v1 specification), which reads metadata, resolves
// the requested columns, and decodes the chosen row groups or stripes.
//
// Readers also report the statistics their writers recorded (Statistics),
// made safe to prune on; scanner/filter decides from them, and evaluates a
// scan's filter on the decoded batches.
//
// Readers get their bytes through the small Source interface (an io.ReaderAt
// with a size), which the IO scheduler implements; they never open files
// themselves. Errors are classified here, once, with sentinel values the
// server maps to gRPC codes: ErrCorrupt (DataLoss), ErrUnsupported
// (Unimplemented), ErrNotColumnar and *UnknownColumnError (InvalidArgument).
// Third-party decoders panic on some corrupt inputs; every call into them runs
// under Recover, so a bad file fails its own request and nothing else.
//
// DecodeSpans (tracing.go) gives each batch a File.Read emits a decode
// span; see docs/tracing.md.
package scanner
