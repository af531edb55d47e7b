package catalogs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	_ "github.com/lib/pq"  // database/sql driver "postgres", pure Go
	_ "modernc.org/sqlite" // database/sql driver "sqlite", pure Go: the binary stays static (CGO_ENABLED=0)

	"github.com/scand/scand/source"
)

// sqlCatalog is a SQL catalog: the iceberg_tables table that Iceberg's
// JDBC catalog defines and PyIceberg's SqlCatalog, iceberg-go's SQL
// catalog and Java's JdbcCatalog write (catalog_name, table_namespace,
// table_name, metadata_location; iceberg_type in the V1 schema, where
// views share the table).
//
// scand reads that table itself, read-only, rather than through
// iceberg-go's SQL catalog: its LoadTable reads the metadata file with
// iceberg-go's own file IO, outside scand's root, scopes and object-store
// settings (and it has no IO for object stores unless linked with
// gocloud), while scand needs only the location, which the source reads
// through storage; and ListFlights gets every table's location in one
// query instead of a metadata read per table.
type sqlCatalog struct {
	name    string // the catalog's scand name
	catalog string // its catalog_name in the database
	dialect string // "sqlite" or "postgres"
	db      *sql.DB

	mu    sem
	typed *bool // whether iceberg_tables has iceberg_type, once known
}

func newSQL(spec Spec, env Env) (*sqlCatalog, error) {
	c := &sqlCatalog{name: spec.Name, catalog: spec.Params.Get("catalog"), dialect: spec.Driver, mu: make(sem, 1)}
	if c.catalog == "" {
		c.catalog = spec.Name
	}
	var dsn string
	switch spec.Driver {
	case "sqlite":
		// Read-only: scand never writes a catalog. A writer holding the
		// database's lock delays a read up to the busy timeout.
		dsn = "file:" + (&url.URL{Path: spec.Endpoint}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(5000)"
	case "postgres":
		u, err := url.Parse(spec.Endpoint)
		if err != nil {
			return nil, err
		}
		if pw := env(EnvName(spec.Name, "PASSWORD")); pw != "" && u.User != nil {
			u.User = url.UserPassword(u.User.Username(), pw)
		}
		q := url.Values{}
		for k, v := range spec.Params {
			if k != "catalog" {
				q[k] = v
			}
		}
		q.Set("default_transaction_read_only", "on")
		u.RawQuery = q.Encode()
		dsn = u.String()
	default:
		return nil, fmt.Errorf("--catalog %s: no SQL driver %q", spec.Name, spec.Driver)
	}
	db, err := sql.Open(spec.Driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("--catalog %s: %w", spec.Name, err)
	}
	db.SetMaxOpenConns(4)
	c.db = db
	return c, nil
}

// Close implements Closer.
func (c *sqlCatalog) Close() error { return c.db.Close() }

// query numbers the placeholders for postgres ($1, $2, ...).
func (c *sqlCatalog) query(q string) string {
	if c.dialect != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tablesOnly is the condition leaving out views, in a database whose
// iceberg_tables has the V1 schema's iceberg_type column.
func (c *sqlCatalog) tablesOnly(ctx context.Context) (string, error) {
	if err := c.mu.lock(ctx); err != nil {
		return "", err
	}
	defer c.mu.unlock()
	if c.typed == nil {
		rows, err := c.db.QueryContext(ctx, "SELECT * FROM iceberg_tables WHERE 1 = 0")
		if err != nil {
			return "", c.classify(nil, err)
		}
		cols, err := rows.Columns()
		rows.Close()
		if err != nil {
			return "", c.classify(nil, err)
		}
		typed := false
		for _, col := range cols {
			typed = typed || strings.EqualFold(col, "iceberg_type")
		}
		c.typed = &typed
	}
	if *c.typed {
		return " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)", nil
	}
	return "", nil
}

// MetadataLocation implements iceberg.Catalog.
func (c *sqlCatalog) MetadataLocation(ctx context.Context, ident []string) (string, error) {
	cond, err := c.tablesOnly(ctx)
	if err != nil {
		return "", err
	}
	ns, tbl := strings.Join(ident[:len(ident)-1], "."), ident[len(ident)-1]
	var loc sql.NullString
	err = c.db.QueryRowContext(ctx, c.query("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"+cond),
		c.catalog, ns, tbl).Scan(&loc)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !loc.Valid) {
		return "", &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("no table %s.%s: catalog %s has no table %q in namespace %q", c.name, strings.Join(ident, "."), c.name, tbl, ns)}
	}
	if err != nil {
		return "", c.classify(ident, err)
	}
	return loc.String, nil
}

// Tables implements iceberg.Catalog, in namespace and table order. A table
// whose namespace or name holds a dot cannot be named in a request and is
// left out.
func (c *sqlCatalog) Tables(ctx context.Context, fn func(ident []string, metadata string) error) error {
	cond, err := c.tablesOnly(ctx)
	if err != nil {
		return err
	}
	rows, err := c.db.QueryContext(ctx, c.query("SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name = ? AND metadata_location IS NOT NULL"+cond+" ORDER BY table_namespace, table_name"), c.catalog)
	if err != nil {
		return c.classify(nil, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ns, tbl, loc string
		if err := rows.Scan(&ns, &tbl, &loc); err != nil {
			return c.classify(nil, err)
		}
		ident := append(namespaceLevels(ns), tbl)
		if !nameable(ident) {
			continue
		}
		if err := fn(ident, loc); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return c.classify(nil, err)
	}
	return nil
}

// encodedNamespace marks a namespace iceberg-go's SQL catalog stores as
// JSON (one whose levels hold dots).
const encodedNamespace = "__iceberg_namespace_v1__:"

// namespaceLevels splits a table_namespace into its levels: dotted, as the
// JDBC catalog and PyIceberg write it, or iceberg-go's JSON encoding.
func namespaceLevels(ns string) []string {
	if rest, ok := strings.CutPrefix(ns, encodedNamespace); ok {
		var levels []string
		if json.Unmarshal([]byte(rest), &levels) == nil && len(levels) > 0 {
			return levels
		}
	}
	return strings.Split(ns, ".")
}

func nameable(ident []string) bool {
	for _, p := range ident {
		if p == "" || strings.ContainsAny(p, "./\\") {
			return false
		}
	}
	return true
}

// classify: every database error is the catalog being unavailable to
// scand (a file that cannot be opened, a server that cannot be reached, a
// database that is no Iceberg catalog), which the caller can only retry or
// report.
func (c *sqlCatalog) classify(ident []string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	what := "catalog " + c.name
	if len(ident) > 0 {
		what = fmt.Sprintf("table %s.%s", c.name, strings.Join(ident, "."))
	}
	return &source.Error{Kind: source.Unavailable, Msg: fmt.Sprintf("%s: the SQL catalog cannot be read; try again later, or tell the operator", what), Err: err}
}
