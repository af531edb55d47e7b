// Package flightsql is scand's Flight SQL front door: ADBC drivers, the
// Arrow Flight SQL JDBC driver and any other Flight SQL client query
// scand with the SQL subset of package sqlfront, on scand's own port.
//
// The front door is arrow-go's flightsql.Server over a Backend, what it
// needs of scand: plan a ScanRequest into a FlightInfo (or plan it for
// counting), stream one endpoint's ticket, list the caller's files, tell
// a Delta table. FlightBackend is that
// Backend over scand's Flight service in the same process, so every call
// goes through the service's own checks with the caller's identity (the
// server's interceptors authenticate Flight SQL calls as any other:
// bearer tokens, the Basic Handshake that the JDBC driver's user and
// password use, mTLS).
//
// # Statements
//
// A statement (CommandStatementQuery, or a prepared statement, whose
// handle is the statement's text: nothing is kept between calls) is
// parsed by sqlfront into a ScanRequest. A statement of rows answers
// GetFlightInfo with scand's own FlightInfo for that request: its
// endpoints, signed tickets and locations, so that DoGet, failover and
// resume work as for any scan (Mux sends those tickets to scand). An
// aggregate (COUNT(*), MIN, MAX) answers with one endpoint whose ticket is
// a Flight SQL TicketStatementQuery holding the statement; DoGet computes
// it (agg.go): COUNT(*) without a condition from the plan's row totals
// (footers only), with one from the row counts of the row groups whose
// statistics decide it (Backend.PlanCount) and a scan of the condition's
// column in the others, MIN and MAX by scanning their column.
// Statements take no parameters: a statement with one is refused at
// prepare time, and binding values is refused (UNIMPLEMENTED).
//
// # Catalog
//
// One catalog (CatalogName) holds one schema (SchemaName) whose tables
// are the directories and data files directly under the root that the
// caller may read (tables.go); FROM trips reads "trips/", FROM
// "a.parquet" the file, and a Delta table (Backend.Table), named so or as
// a quoted location without globs, is read by its log as the request's
// table. GetTables is bounded by MaxListedFiles and
// MaxTablesWithSchema.
//
// # Errors
//
// SQL the subset does not answer is UNIMPLEMENTED with a message saying
// what scand answers; a syntax error is INVALID_ARGUMENT with the byte
// position; a table outside the one schema is NOT_FOUND. Errors of the
// scan itself are the Backend's gRPC statuses, passed through unchanged.
package flightsql
