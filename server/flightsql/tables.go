package flightsql

import (
	"context"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/sqlfront"
)

// The catalog is one catalog (CatalogName) of one schema (SchemaName),
// whose tables are the entries directly under the server's root that the
// caller may read: each directory holding Parquet or ORC files (FROM dir
// scans "dir/") and each such file at the top (FROM "a.parquet"). They
// are found by listing the caller's files, at most MaxListedFiles of
// them, so that a catalog call stays cheap on a root of millions of
// files: on a larger root, tables past that point are not listed (they
// can still be queried). With include_schema, each listed table's schema
// is planned (its footers read, through the metadata cache), for at most
// MaxTablesWithSchema tables; a table whose planning fails gets an empty
// schema rather than failing the listing.
const (
	MaxListedFiles      = 10_000
	MaxTablesWithSchema = 100
	tableType           = "TABLE"
)

func (s *Server) commandInfo(desc *flight.FlightDescriptor, schema *arrow.Schema) *flight.FlightInfo {
	return &flight.FlightInfo{
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: desc.Cmd}}},
		FlightDescriptor: desc,
		Schema:           flight.SerializeSchema(schema, s.mem),
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
}

// one sends a single batch built from JSON rows.
func (s *Server) one(schema *arrow.Schema, rows string) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	rec, _, err := array.RecordFromJSON(s.mem, schema, strings.NewReader(rows))
	if err != nil {
		return nil, nil, status.Errorf(codes.Internal, "flightsql: building a result: %v", err)
	}
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return schema, ch, nil
}

// GetFlightInfoCatalogs implements flightsql.Server.
func (s *Server) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(desc, schema_ref.Catalogs), nil
}

// DoGetCatalogs implements flightsql.Server.
func (s *Server) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.one(schema_ref.Catalogs, `[{"catalog_name": "`+CatalogName+`"}]`)
}

// GetFlightInfoSchemas implements flightsql.Server.
func (s *Server) GetFlightInfoSchemas(_ context.Context, _ fsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(desc, schema_ref.DBSchemas), nil
}

// DoGetDBSchemas implements flightsql.Server.
func (s *Server) DoGetDBSchemas(_ context.Context, cmd fsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	if !catalogMatches(cmd.GetCatalog()) || !likeMatches(cmd.GetDBSchemaFilterPattern(), SchemaName) {
		return s.one(schema_ref.DBSchemas, `[]`)
	}
	return s.one(schema_ref.DBSchemas, `[{"catalog_name": "`+CatalogName+`", "db_schema_name": "`+SchemaName+`"}]`)
}

// GetFlightInfoTableTypes implements flightsql.Server.
func (s *Server) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(desc, schema_ref.TableTypes), nil
}

// DoGetTableTypes implements flightsql.Server.
func (s *Server) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.one(schema_ref.TableTypes, `[{"table_type": "`+tableType+`"}]`)
}

// GetFlightInfoTables implements flightsql.Server.
func (s *Server) GetFlightInfoTables(_ context.Context, cmd fsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if cmd.GetIncludeSchema() {
		return s.commandInfo(desc, schema_ref.TablesWithIncludedSchema), nil
	}
	return s.commandInfo(desc, schema_ref.Tables), nil
}

// DoGetTables implements flightsql.Server.
func (s *Server) DoGetTables(ctx context.Context, cmd fsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	var names []string
	if catalogMatches(cmd.GetCatalog()) && likeMatches(cmd.GetDBSchemaFilterPattern(), SchemaName) && typeMatches(cmd.GetTableTypes()) {
		all, err := s.tables(ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range all {
			if likeMatches(cmd.GetTableNameFilterPattern(), n) {
				names = append(names, n)
			}
		}
	}
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	for i, n := range names {
		b.Field(0).(*array.StringBuilder).Append(CatalogName)
		b.Field(1).(*array.StringBuilder).Append(SchemaName)
		b.Field(2).(*array.StringBuilder).Append(n)
		b.Field(3).(*array.StringBuilder).Append(tableType)
		if cmd.GetIncludeSchema() {
			sc := arrow.NewSchema(nil, nil)
			if i < MaxTablesWithSchema {
				sc = s.tableSchema(ctx, n)
			}
			b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(sc, s.mem))
		}
	}
	rec := b.NewRecordBatch()
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return schema, ch, nil
}

// tables lists the table names under the root, sorted.
func (s *Server) tables(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	n := 0
	err := s.be.List(ctx, "", func(name string) error {
		if !strings.Contains(name, "://") {
			top, _, _ := strings.Cut(strings.TrimPrefix(name, "/"), "/")
			if top != "" && (top != path.Base(name) || isDataFile(top)) {
				seen[top] = true
			}
		}
		// Stop at the bound, before the listing itself refuses a root
		// of more files (ListFlights answers at most 10,000).
		if n++; n >= MaxListedFiles {
			return ErrStopList
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// tableSchema is a table's scan schema, or an empty one when planning it
// fails.
func (s *Server) tableSchema(ctx context.Context, name string) *arrow.Schema {
	req, err := s.source(ctx, sqlfront.Source{Table: []string{name}})
	if err != nil {
		return arrow.NewSchema(nil, nil)
	}
	req.Limit = 1
	info, err := s.be.Plan(ctx, req)
	if err != nil {
		return arrow.NewSchema(nil, nil)
	}
	sc, err := flight.DeserializeSchema(info.Schema, s.mem)
	if err != nil {
		return arrow.NewSchema(nil, nil)
	}
	return sc
}

func catalogMatches(c *string) bool { return c == nil || *c == "" || *c == CatalogName }

func typeMatches(types []string) bool {
	if len(types) == 0 {
		return true
	}
	for _, t := range types {
		if strings.EqualFold(t, tableType) {
			return true
		}
	}
	return false
}

// likeMatches applies a Flight SQL filter pattern (SQL LIKE: % any
// run, _ one character; nil or empty matches everything).
func likeMatches(pattern *string, s string) bool {
	if pattern == nil || *pattern == "" {
		return true
	}
	var b strings.Builder
	b.WriteString("(?s)^")
	for _, r := range *pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(s)
}

// registerSqlInfo states what the server supports.
func registerSqlInfo(b *fsql.BaseServer, version string) error {
	if version == "" {
		version = "dev"
	}
	infos := map[fsql.SqlInfo]any{
		fsql.SqlInfoFlightSqlServerName:           "scand",
		fsql.SqlInfoFlightSqlServerVersion:        version,
		fsql.SqlInfoFlightSqlServerArrowVersion:   "18",
		fsql.SqlInfoFlightSqlServerReadOnly:       true,
		fsql.SqlInfoFlightSqlServerSql:            true,
		fsql.SqlInfoFlightSqlServerSubstrait:      false,
		fsql.SqlInfoFlightSqlServerTransaction:    int32(0), // SQL_SUPPORTED_TRANSACTION_NONE
		fsql.SqlInfoFlightSqlServerCancel:         false,
		fsql.SqlInfoFlightSqlServerBulkIngestion:  false,
		fsql.SqlInfoDDLCatalog:                    false,
		fsql.SqlInfoDDLSchema:                     false,
		fsql.SqlInfoDDLTable:                      false,
		fsql.SqlInfoIdentifierQuoteChar:           `"`,
		fsql.SqlInfoAllTablesAreASelectable:       true,
		fsql.SqlInfoSupportsColumnAliasing:        false,
		fsql.SqlInfoSupportsTableCorrelationNames: false,
		fsql.SqlInfoSupportsLikeEscapeClause:      false,
		fsql.SqlInfoSupportsNonNullableColumns:    true,
		fsql.SqlInfoSearchStringEscape:            `\`,
		fsql.SqlInfoKeywords:                      []string{"SELECT", "FROM", "WHERE", "LIMIT", "AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "BETWEEN", "DATE", "TIMESTAMP", "TRUE", "FALSE"},
		fsql.SqlInfoNumericFunctions:              []string{},
		fsql.SqlInfoStringFunctions:               []string{"starts_with"},
		fsql.SqlInfoSystemFunctions:               []string{},
		fsql.SqlInfoDateTimeFunctions:             []string{},
	}
	for id, v := range infos {
		if err := b.RegisterSqlInfo(id, v); err != nil {
			return status.Errorf(codes.Internal, "flightsql: registering SqlInfo %v: %v", id, err)
		}
	}
	return nil
}
