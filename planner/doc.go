// Package planner turns a scan request into a plan: the scan's unified
// schema, its tasks (one ScanTask per endpoint), their totals, and the
// figures of what pruning kept (PlanStats). It is called by the Flight
// server for GetFlightInfo and GetSchema, and by tests and benchmarks
// without one: it imports neither gRPC nor Flight, and everything that
// touches a store, a caller or a connection comes in through Config.
//
// A plan is a pipeline of steps (planner.go, Planner.plan):
//
//  1. parse the filter (filter.go: SQL or Substrait, its cost capped);
//  2. resolve the source (Config.Resolve: the request's paths are a
//     source/files source, under the caller's scope) and list its files
//     (a source.Listing: files, partition columns and values);
//  3. prune partitions: the filter relaxed to the partition columns,
//     tested against each file's partition values before any footer is
//     read (prune.go);
//  4. describe: read the footers of what is left, FooterConcurrency at a
//     time, and project each file onto the requested columns and the
//     filter's (describe.go; each file opened through Config.Open);
//  5. unknown columns: a requested column no file and no partition has
//     fails, listing those there are;
//  6. unify the files' projections into the scan's schema, partition
//     columns placed where the request names them (projection.go: one
//     projection rule for the plan and every stream);
//  7. prune files and row groups by their statistics (prune.go), then by
//     bloom filters for = and IN terms (bloomprune.go);
//  8. split: cut each file's kept row groups into runs of about the split
//     bytes, one task each, stop once an unfiltered limit is covered, and
//     pack whole small files into one endpoint (tasks.go, pack.go); every
//     task's schema delta is checked to rebuild the scan's schema
//     (CheckPlannedSchema) and carries its fingerprint.
//
// Steps 3, 5, 6 and 8 are pure functions of the listing and the described
// files, and the golden plans (golden_test.go, testdata/golden/) pin the
// whole pipeline's output for a generated corpus.
//
// The planner takes a source.Listing and never asks which kind of source
// made it. A table's listing (Listing.Schema set) is planned by the
// table's schema (table.go): its files are pruned by the statistics the
// table's metadata records before their footers are read, matched by
// field id or physical name, and their tickets carry their deletes and
// the partition values they lack (partvalues.go). Files of no table that
// need any of that are refused as Unimplemented rather than read as
// plain files.
//
// Tickets (ticket.go, schemamsg.go, ipcschema.go, partvalues.go): a task names its
// file's columns as indexes (SelectedColumns decodes them) and says how
// the scan's schema differs from the file's projection (SchemaDelta,
// ApplyDelta); a ticket's schemas are decoded from untrusted bytes with
// their flatbuffer checked first (DecodeSchema). The server signs tasks
// and the stream decodes them with these functions.
//
// Planning's memory (budget.go, package planmem) is charged to
// Config.PlanMemory: a plan prepays a minimum per file, each footer
// reserves its decoded size before it is decoded, the plan keeps what its
// state of each file holds until it answers, and bloom filters read to
// prune are charged too.
//
// Errors are classified: *Error with a Kind (Invalid, TooLarge,
// DeadlineExceeded, Unimplemented) for the planner's own refusals, and
// the storage, scanner, filter and source errors passed through; the
// server maps them to gRPC codes once, at its edge.
package planner
