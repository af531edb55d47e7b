package catalogs

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/scand/scand/source/iceberg"
)

// Env is how Open reads a catalog's credentials (os.Getenv).
type Env func(key string) string

// Spec is one parsed --catalog: a name and what it names.
type Spec struct {
	// Name is the catalog's name in requests ("name.namespace.table").
	Name string
	// Kind is "rest" or "sql".
	Kind string
	// Endpoint is the REST catalog's base URI (http:// or https://); for
	// a SQL catalog, the database (a sqlite file's path, a postgres URL
	// without its password).
	Endpoint string
	// Driver is the SQL catalog's database/sql driver ("sqlite",
	// "postgres").
	Driver string
	// Params are the URI's query parameters the kind takes.
	Params url.Values
}

// nameRE is what a catalog's name may be: a request's table name starts
// with it and a dot, so it holds no dot (nor a slash, which makes a path).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// restParams and sqlParams are the query parameters each kind takes;
// anything else is refused, so a misspelt one is not silently ignored.
var (
	restParams = map[string]bool{"warehouse": true, "prefix": true, "scope": true, "oauth2-server-uri": true}
	sqlParams  = map[string]bool{"catalog": true}
	pgParams   = map[string]bool{"catalog": true, "sslmode": true, "sslrootcert": true, "connect_timeout": true}
)

// Parse parses one --catalog value, "name=URI":
//
//	rest+https://host[:port][/path][?warehouse=W&prefix=P&scope=S&oauth2-server-uri=U]
//	rest+http://host[:port][/path][?...]
//	sql+sqlite:///abs/path/catalog.db[?catalog=C]
//	sql+postgres://user@host[:port]/db[?sslmode=...&catalog=C]
//
// Credentials are never part of the URI (Open reads them from the
// environment): a URI with a password is refused.
func Parse(value string) (Spec, error) {
	name, raw, ok := strings.Cut(value, "=")
	if !ok || name == "" || raw == "" {
		return Spec{}, fmt.Errorf("--catalog %q: want name=URI (rest+https://host, sql+sqlite:///path/catalog.db)", value)
	}
	if !nameRE.MatchString(name) {
		return Spec{}, fmt.Errorf("--catalog %q: a catalog's name is letters, digits, '_' and '-' (requests name its tables name.namespace.table)", value)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Spec{}, fmt.Errorf("--catalog %s: %w", name, err)
	}
	if _, set := u.User.Password(); set {
		return Spec{}, fmt.Errorf("--catalog %s: the URI holds a password; give it in %s instead", name, EnvName(name, "PASSWORD"))
	}
	kind, scheme, _ := strings.Cut(u.Scheme, "+")
	spec := Spec{Name: name, Kind: kind, Params: u.Query()}
	allowed := map[string]bool{}
	switch {
	case kind == "rest" && (scheme == "http" || scheme == "https"):
		if u.Host == "" {
			return Spec{}, fmt.Errorf("--catalog %s: %q names no host", name, raw)
		}
		if u.User != nil {
			return Spec{}, fmt.Errorf("--catalog %s: a REST catalog's credentials go in %s or %s, not the URI", name, EnvName(name, "TOKEN"), EnvName(name, "CREDENTIAL"))
		}
		e := *u
		e.Scheme, e.RawQuery = scheme, ""
		spec.Endpoint = strings.TrimSuffix(e.String(), "/")
		allowed = restParams
	case kind == "sql" && scheme == "sqlite":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return Spec{}, fmt.Errorf("--catalog %s: a sqlite catalog is sql+sqlite:///absolute/path/catalog.db", name)
		}
		spec.Driver, spec.Endpoint = "sqlite", u.Path
		allowed = sqlParams
	case kind == "sql" && (scheme == "postgres" || scheme == "postgresql"):
		if u.Host == "" {
			return Spec{}, fmt.Errorf("--catalog %s: %q names no host", name, raw)
		}
		e := *u
		e.Scheme, e.RawQuery = "postgres", ""
		spec.Driver, spec.Endpoint = "postgres", e.String()
		allowed = pgParams
	case kind == "glue" || scheme == "glue":
		return Spec{}, fmt.Errorf("--catalog %s: Glue catalogs are not served; name the table's location or metadata file instead, or serve it through a REST catalog", name)
	default:
		return Spec{}, fmt.Errorf("--catalog %s: %q is no catalog URI scand serves: rest+https://host, rest+http://host, sql+sqlite:///path/catalog.db or sql+postgres://user@host/db", name, raw)
	}
	for k := range spec.Params {
		if !allowed[k] {
			return Spec{}, fmt.Errorf("--catalog %s: unknown URI parameter %q", name, k)
		}
	}
	return spec, nil
}

// EnvName is the environment variable of a catalog's credential:
// SCAND_CATALOG_<NAME>_<WHAT>, the name upper-cased with '-' as '_'.
func EnvName(catalog, what string) string {
	return "SCAND_CATALOG_" + strings.ToUpper(strings.ReplaceAll(catalog, "-", "_")) + "_" + what
}

// Open returns the catalog spec names, its credentials read with env. It
// connects to nothing: a catalog that cannot be reached fails the requests
// that need it (Unavailable), not the server's start.
func Open(spec Spec, env Env) (iceberg.Catalog, error) {
	switch spec.Kind {
	case "rest":
		return newREST(spec, env)
	case "sql":
		return newSQL(spec, env)
	}
	return nil, errors.New("unknown catalog kind " + spec.Kind)
}

// Closer is implemented by catalogs holding connections.
type Closer interface{ Close() error }

// Close closes what the catalogs hold.
func Close(cs iceberg.Catalogs) {
	for _, c := range cs {
		if cl, ok := c.(Closer); ok {
			cl.Close()
		}
	}
}

// sem is a lock a context can give up waiting for.
type sem chan struct{}

func (s sem) lock(ctx context.Context) error {
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s sem) unlock() { <-s }
