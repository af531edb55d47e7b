package catalogs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"

	"github.com/scand/scand/source"
)

// restCatalog is a REST catalog, through iceberg-go's client. The client
// is made at first use (it asks the server for its configuration), and
// made again by the next request while that fails.
type restCatalog struct {
	name, endpoint string
	opts           []rest.Option

	mu  sem
	cat *rest.Catalog
}

func newREST(spec Spec, env Env) (*restCatalog, error) {
	r := &restCatalog{name: spec.Name, endpoint: spec.Endpoint, mu: make(sem, 1)}
	if tok := env(EnvName(spec.Name, "TOKEN")); tok != "" {
		r.opts = append(r.opts, rest.WithOAuthToken(tok))
	}
	if cred := env(EnvName(spec.Name, "CREDENTIAL")); cred != "" {
		r.opts = append(r.opts, rest.WithCredential(cred))
	}
	if w := spec.Params.Get("warehouse"); w != "" {
		r.opts = append(r.opts, rest.WithWarehouseLocation(w))
	}
	if p := spec.Params.Get("prefix"); p != "" {
		r.opts = append(r.opts, rest.WithPrefix(p))
	}
	if s := spec.Params.Get("scope"); s != "" {
		r.opts = append(r.opts, rest.WithScope(s))
	}
	if a := spec.Params.Get("oauth2-server-uri"); a != "" {
		u, err := url.Parse(a)
		if err != nil {
			return nil, fmt.Errorf("--catalog %s: oauth2-server-uri: %w", spec.Name, err)
		}
		r.opts = append(r.opts, rest.WithAuthURI(u))
	}
	return r, nil
}

// client is the REST client; ident, when set, is the table asked for,
// which an error names.
func (r *restCatalog) client(ctx context.Context, ident []string) (*rest.Catalog, error) {
	if err := r.mu.lock(ctx); err != nil {
		return nil, err
	}
	defer r.mu.unlock()
	if r.cat != nil {
		return r.cat, nil
	}
	c, err := rest.NewCatalog(ctx, r.name, r.endpoint, r.opts...)
	if err != nil {
		return nil, r.classify(ident, err)
	}
	r.cat = c
	return c, nil
}

// MetadataLocation implements iceberg.Catalog.
func (r *restCatalog) MetadataLocation(ctx context.Context, ident []string) (string, error) {
	c, err := r.client(ctx, ident)
	if err != nil {
		return "", err
	}
	tbl, err := c.LoadTable(ctx, ident)
	if err != nil {
		return "", r.classify(ident, err)
	}
	return tbl.MetadataLocation(), nil
}

// Tables implements iceberg.Catalog: namespaces depth first, each one's
// tables as the catalog lists them, each loaded for its metadata location.
func (r *restCatalog) Tables(ctx context.Context, fn func(ident []string, metadata string) error) error {
	c, err := r.client(ctx, nil)
	if err != nil {
		return err
	}
	var walk func(parent []string) error
	walk = func(parent []string) error {
		nss, err := c.ListNamespaces(ctx, parent)
		if err != nil {
			if parent != nil && errors.Is(err, rest.ErrBadRequest) {
				return nil // a catalog without nested namespaces
			}
			return r.classify(parent, err)
		}
		for _, ns := range nss {
			if len(ns) <= len(parent) || !slices.Equal(ns[:len(parent)], parent) {
				continue // not a child of parent: a server that ignores "parent" would loop
			}
			for ident, err := range c.ListTables(ctx, ns) {
				if err != nil {
					return r.classify(ns, err)
				}
				tbl, err := c.LoadTable(ctx, ident)
				if errors.Is(err, icecatalog.ErrNoSuchTable) {
					continue // dropped since it was listed
				}
				if err != nil {
					return r.classify(ident, err)
				}
				if err := fn(ident, tbl.MetadataLocation()); err != nil {
					return err
				}
			}
			if err := walk(ns); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(nil)
}

// Close implements Closer.
func (r *restCatalog) Close() error {
	if r.cat != nil {
		return r.cat.Close()
	}
	return nil
}

// classify gives the client's errors a source.Error kind: an unknown
// table or namespace NotFound; a catalog that cannot be reached, answers
// with a server error or refuses scand's credentials Unavailable (the
// caller can do nothing about those but try later or tell the operator).
func (r *restCatalog) classify(ident []string, err error) error {
	what := "catalog " + r.name
	if len(ident) > 0 {
		what = fmt.Sprintf("table %s.%s", r.name, strings.Join(ident, "."))
	}
	var netErr net.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, icecatalog.ErrNoSuchTable), errors.Is(err, icecatalog.ErrNoSuchNamespace):
		return &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("no %s: the catalog has no such table", what), Err: err}
	case errors.Is(err, rest.ErrUnauthorized), errors.Is(err, rest.ErrForbidden), errors.Is(err, rest.ErrAuthorizationExpired), errors.Is(err, rest.ErrOAuthError):
		return &source.Error{Kind: source.Unavailable, Msg: fmt.Sprintf("%s: the REST catalog at %s refused scand's credentials (%s or %s); tell the operator", what, r.endpoint, EnvName(r.name, "TOKEN"), EnvName(r.name, "CREDENTIAL")), Err: err}
	case errors.Is(err, rest.ErrBadRequest):
		return &source.Error{Kind: source.Invalid, Msg: fmt.Sprintf("%s: the REST catalog refused the request", what), Err: err}
	case errors.As(err, &netErr), errors.Is(err, rest.ErrServiceUnavailable), errors.Is(err, rest.ErrServerError):
		return &source.Error{Kind: source.Unavailable, Msg: fmt.Sprintf("%s: the REST catalog at %s cannot be reached; try again later", what, r.endpoint), Err: err}
	}
	return &source.Error{Kind: source.Unavailable, Msg: fmt.Sprintf("%s: the REST catalog at %s failed", what, r.endpoint), Err: err}
}
