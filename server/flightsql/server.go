package flightsql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/sqlfront"
)

// Names of the one catalog and schema the front door shows: tables are
// the entries directly under the server's root (see tables.go).
const (
	CatalogName = "scand"
	SchemaName  = "root"
)

// Config configures the front door.
type Config struct {
	// Backend plans and streams scans. Required.
	Backend Backend
	// Version is reported as the server's version in GetSqlInfo.
	Version string
	// Mem allocates result batches; nil = memory.DefaultAllocator.
	Mem memory.Allocator
}

// Server is the Flight SQL front door: arrow-go's flightsql.Server over a
// Backend. Its methods are safe for concurrent use; it keeps no state
// between calls (statement and prepared-statement handles carry the
// statement).
type Server struct {
	fsql.BaseServer
	be  Backend
	mem memory.Allocator
}

// New returns the front door for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Backend == nil {
		return nil, errors.New("flightsql: Config.Backend is required")
	}
	s := &Server{be: cfg.Backend, mem: cfg.Mem}
	if s.mem == nil {
		s.mem = memory.DefaultAllocator
	}
	s.Alloc = s.mem
	if err := registerSqlInfo(&s.BaseServer, cfg.Version); err != nil {
		return nil, err
	}
	return s, nil
}

// FlightService is the front door as a Flight service (arrow-go's router
// from Flight calls to Flight SQL commands).
func (s *Server) FlightService() flight.FlightServer {
	return fsql.NewFlightServerWithAllocator(s, s.mem)
}

// handle is a statement's handle: the statement text, and what planning
// already answered. Prepared statements' handles and aggregate tickets
// are handles; a forged one is no more than a statement the caller could
// send, run with the caller's own scopes.
type handle struct {
	SQL string `json:"sql"`
	// Count is COUNT(*)'s answer when the plan gave it (no filter).
	Count *int64 `json:"count,omitempty"`
}

func (h handle) encode() []byte {
	b, _ := json.Marshal(h)
	return b
}

func decodeHandle(b []byte) (handle, error) {
	var h handle
	if err := json.Unmarshal(b, &h); err != nil || h.SQL == "" {
		return handle{}, status.Error(codes.InvalidArgument, "flightsql: not a statement handle of this server (pass the handle or ticket it returned unchanged)")
	}
	return h, nil
}

// parse parses a statement, mapping refusals to gRPC codes.
func parse(text string) (*sqlfront.Statement, error) {
	st, err := sqlfront.Parse(text)
	if err != nil {
		return nil, sqlStatus(err)
	}
	return st, nil
}

// sqlStatus maps the front end's errors: unsupported SQL is UNIMPLEMENTED,
// a condition beyond the filter's limits RESOURCE_EXHAUSTED, the rest
// INVALID_ARGUMENT.
func sqlStatus(err error) error {
	switch {
	case errors.Is(err, sqlfront.ErrUnsupported):
		return status.Error(codes.Unimplemented, err.Error())
	case errors.Is(err, filter.ErrTooComplex):
		return status.Error(codes.ResourceExhausted, err.Error())
	}
	return status.Error(codes.InvalidArgument, err.Error())
}

// GetFlightInfoStatement implements flightsql.Server.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd fsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, status.Error(codes.InvalidArgument, "flightsql: scand has no transactions")
	}
	return s.flightInfo(ctx, cmd.GetQuery(), desc)
}

// GetFlightInfoPreparedStatement implements flightsql.Server: a prepared
// statement's handle is its text.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	h, err := decodeHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	return s.flightInfo(ctx, h.SQL, desc)
}

// GetSchemaStatement implements flightsql.Server.
func (s *Server) GetSchemaStatement(ctx context.Context, cmd fsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	sc, err := s.schemaOf(ctx, cmd.GetQuery())
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(sc, s.mem)}, nil
}

// GetSchemaPreparedStatement implements flightsql.Server.
func (s *Server) GetSchemaPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	h, err := decodeHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	sc, err := s.schemaOf(ctx, h.SQL)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(sc, s.mem)}, nil
}

// CreatePreparedStatement implements flightsql.Server. The statement is
// parsed and planned (for its schema) now, so that a mistake shows at
// prepare time; it takes no parameters.
func (s *Server) CreatePreparedStatement(ctx context.Context, req fsql.ActionCreatePreparedStatementRequest) (fsql.ActionCreatePreparedStatementResult, error) {
	if len(req.GetTransactionId()) > 0 {
		return fsql.ActionCreatePreparedStatementResult{}, status.Error(codes.InvalidArgument, "flightsql: scand has no transactions")
	}
	sc, err := s.schemaOf(ctx, req.GetQuery())
	if err != nil {
		return fsql.ActionCreatePreparedStatementResult{}, err
	}
	return fsql.ActionCreatePreparedStatementResult{
		Handle:          handle{SQL: req.GetQuery()}.encode(),
		DatasetSchema:   sc,
		ParameterSchema: arrow.NewSchema(nil, nil),
	}, nil
}

// ClosePreparedStatement implements flightsql.Server: handles hold no
// server state.
func (s *Server) ClosePreparedStatement(context.Context, fsql.ActionClosePreparedStatementRequest) error {
	return nil
}

// DoPutPreparedStatementQuery implements flightsql.Server: binding
// values is refused (INVALID_ARGUMENT, as a parameter in the text is:
// see sqlfront's paramError), since statements take none.
func (s *Server) DoPutPreparedStatementQuery(_ context.Context, _ fsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	if rdr != nil {
		for rdr.Next() { // an empty bind (no rows) is harmless
			if rec := rdr.RecordBatch(); rec != nil && rec.NumRows() > 0 && rec.NumCols() > 0 {
				return nil, status.Error(codes.InvalidArgument,
					"flightsql: scand's statements take no parameters: write the values into the statement's WHERE condition")
			}
		}
	}
	return nil, nil
}

// DoGetStatement implements flightsql.Server: the ticket of an aggregate
// statement (rows statements' endpoints carry scand's own tickets).
func (s *Server) DoGetStatement(ctx context.Context, t fsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	h, err := decodeHandle(t.GetStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	st, err := parse(h.SQL)
	if err != nil {
		return nil, nil, err
	}
	if len(st.Aggs) == 0 {
		return nil, nil, status.Error(codes.InvalidArgument, "flightsql: a statement of rows is read through the tickets of its FlightInfo's endpoints")
	}
	req, err := s.request(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	rec, err := s.aggregate(ctx, st, req, h.Count)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return rec.Schema(), ch, nil
}

// DoGetPreparedStatement implements flightsql.Server, for clients that
// send the prepared statement's command as a ticket.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return nil, nil, status.Error(codes.InvalidArgument, "flightsql: read a prepared statement through the tickets of GetFlightInfo's endpoints")
}

// flightInfo plans a statement. A statement of rows answers with scand's
// own FlightInfo (its endpoints, tickets and locations), so that failover
// and resume work unchanged; an aggregate answers with one endpoint whose
// ticket is the statement (DoGetStatement computes it).
func (s *Server) flightInfo(ctx context.Context, text string, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	st, err := parse(text)
	if err != nil {
		return nil, err
	}
	req, err := s.request(ctx, st)
	if err != nil {
		return nil, err
	}
	if len(st.Aggs) > 0 {
		return s.aggregateInfo(ctx, st, req, text, desc)
	}
	if st.HasLimit && st.Limit == 0 {
		req.Limit = 1 // the schema only
	}
	info, err := s.be.Plan(ctx, req)
	if err != nil {
		return nil, err
	}
	info.FlightDescriptor = desc
	if st.HasLimit && st.Limit == 0 {
		info.Endpoint, info.TotalRecords, info.TotalBytes = nil, 0, 0
	}
	return info, nil
}

// aggregateInfo plans an aggregate statement: its schema, and the
// answer when the plan holds it.
func (s *Server) aggregateInfo(ctx context.Context, st *sqlfront.Statement, req *scandv1.ScanRequest, text string, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	h := handle{SQL: text}
	schema := countSchema(st)
	switch {
	case schema != nil && st.Where == nil:
		info, err := s.be.Plan(ctx, req)
		if err != nil {
			return nil, err
		}
		n := info.TotalRecords // the footers' row counts
		h.Count = &n
	case schema != nil:
		counted, rest, err := s.be.PlanCount(ctx, req)
		if err != nil {
			return nil, err
		}
		if len(rest.Endpoint) == 0 { // the statistics decided every row group
			h.Count = &counted
		}
	default:
		info, err := s.be.Plan(ctx, req)
		if err != nil {
			return nil, err
		}
		scan, err := flight.DeserializeSchema(info.Schema, s.mem)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "flightsql: decoding the scan's schema: %v", err)
		}
		if schema, err = aggSchema(st, scan); err != nil {
			return nil, err
		}
	}
	tkt, err := statementTicket(h)
	if err != nil {
		return nil, err
	}
	rows := int64(1)
	if st.HasLimit && st.Limit == 0 {
		rows = 0
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.mem),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: tkt}}},
		TotalRecords:     rows,
		TotalBytes:       -1,
	}, nil
}

// statementTicket is a Flight SQL TicketStatementQuery holding h.
func statementTicket(h handle) ([]byte, error) {
	t, err := fsql.CreateStatementQueryTicket(h.encode())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "flightsql: encoding a ticket: %v", err)
	}
	return t, nil
}

// schemaOf is the schema a statement returns.
func (s *Server) schemaOf(ctx context.Context, text string) (*arrow.Schema, error) {
	st, err := parse(text)
	if err != nil {
		return nil, err
	}
	req, err := s.request(ctx, st)
	if err != nil {
		return nil, err
	}
	if sc := countSchema(st); len(st.Aggs) > 0 && sc != nil {
		return sc, nil // known without planning; GetFlightInfo plans
	}
	if len(st.Aggs) == 0 {
		req.Limit = 1
	}
	info, err := s.be.Plan(ctx, req)
	if err != nil {
		return nil, err
	}
	scan, err := flight.DeserializeSchema(info.Schema, s.mem)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "flightsql: decoding the scan's schema: %v", err)
	}
	if len(st.Aggs) == 0 {
		return scan, nil
	}
	return aggSchema(st, scan)
}

// request is the ScanRequest of a statement: its source, projection,
// filter and limit. An aggregate's request reads the columns it needs:
// MIN's and MAX's, and for COUNT(*) with a condition the condition's
// first column (a scan cannot ask for none); COUNT(*) alone plans every
// column but reads none.
func (s *Server) request(ctx context.Context, st *sqlfront.Statement) (*scandv1.ScanRequest, error) {
	req, err := s.source(ctx, st.Source)
	if err != nil {
		return nil, err
	}
	if st.Where != nil {
		req.RowFilter = &scandv1.ScanRequest_Filter{Filter: st.Filter}
	}
	if len(st.Aggs) == 0 {
		req.Columns = st.Columns
		if st.HasLimit {
			req.Limit = st.Limit
		}
		return req, nil
	}
	seen := map[string]bool{}
	for _, a := range st.Aggs {
		if a.Column != "" && !seen[a.Column] {
			seen[a.Column] = true
			req.Columns = append(req.Columns, a.Column)
		}
	}
	if len(req.Columns) == 0 && st.Where != nil {
		req.Columns = st.FilterColumns()[:1]
	}
	return req, nil
}

// source is the request of what FROM names: a Delta table by its log
// (Backend.Table), whether named as a table or as a quoted location
// without glob characters; anything else by its paths (a table name as
// tablePath resolves it).
func (s *Server) source(ctx context.Context, src sqlfront.Source) (*scandv1.ScanRequest, error) {
	p := src.Path
	if p == "" {
		var err error
		if p, err = tablePath(src.Table); err != nil {
			return nil, err
		}
	}
	if !strings.ContainsAny(p, "*?[") {
		ok, err := s.be.Table(ctx, strings.TrimSuffix(p, "/"))
		if err != nil {
			return nil, err
		}
		if ok {
			return &scandv1.ScanRequest{Table: strings.TrimSuffix(p, "/")}, nil
		}
	}
	return &scandv1.ScanRequest{Paths: []string{p}}, nil
}

// tablePath resolves a table name (table, schema.table or
// catalog.schema.table) to the path under the root it names: a file by
// its name (a known data file extension), else a directory.
func tablePath(parts []string) (string, error) {
	name := parts[len(parts)-1]
	qual := parts[:len(parts)-1]
	if len(qual) > 2 || len(qual) == 2 && !strings.EqualFold(qual[0], CatalogName) ||
		len(qual) >= 1 && !strings.EqualFold(qual[len(qual)-1], SchemaName) {
		return "", status.Errorf(codes.NotFound, "flightsql: no table %s: tables are %s.%s.<name>, the directories and files under the server's root, or write a quoted path: FROM 'dir/*.parquet'",
			strings.Join(parts, "."), CatalogName, SchemaName)
	}
	if isDataFile(name) {
		return name, nil
	}
	return strings.TrimSuffix(name, "/") + "/", nil
}

// isDataFile: a name with a Parquet or ORC file's extension.
func isDataFile(name string) bool {
	lower := strings.ToLower(name)
	for _, ext := range []string{".parquet", ".parq", ".pq", ".orc"} {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// errorf is an INVALID_ARGUMENT naming the front door.
func errorf(format string, args ...any) error {
	return status.Error(codes.InvalidArgument, "flightsql: "+fmt.Sprintf(format, args...))
}
