package iceberg

import (
	"context"
	"fmt"
	"strings"

	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// A Catalog tells where a table's metadata is: a REST or SQL catalog the
// server was started with (source/iceberg/catalog builds them from
// --catalog). The source reads the metadata file a catalog names through
// scand's storage, as it reads a metadata file a request names, so the
// server's root and the caller's scope decide what a catalog table may
// read; a catalog only resolves names.
type Catalog interface {
	// MetadataLocation returns the current metadata file of the table
	// ident names (its namespace's levels, then the table's name), as the
	// catalog writes it (file:///..., s3://...). An unknown namespace or
	// table is a *source.Error NotFound, a catalog that cannot be reached
	// one of kind Unavailable.
	MetadataLocation(ctx context.Context, ident []string) (string, error)
	// Tables calls fn with every table of the catalog, namespace by
	// namespace, and the location of its current metadata file; an error
	// of fn ends the listing and is returned.
	Tables(ctx context.Context, fn func(ident []string, metadata string) error) error
}

// Catalogs are the server's catalogs by name.
type Catalogs map[string]Catalog

// Lookup tells a catalog table's name from a path: "name.namespace.table"
// (namespace levels separated by dots too) whose first dotted part is a
// configured catalog's name and which holds no slash. It returns the
// catalog's name and the catalog; false for anything else, which is a
// path or a URI. A name with a catalog but no namespace or no table is
// still the catalog's: Ident refuses it.
func (cs Catalogs) Lookup(name string) (string, Catalog, bool) {
	if len(cs) == 0 || strings.ContainsAny(name, "/\\") {
		return "", nil, false
	}
	first, _, _ := strings.Cut(name, ".")
	c, ok := cs[first]
	return first, c, ok
}

// Ident splits a catalog table's name (which Lookup accepted) into the
// identifier its catalog resolves: namespace levels, then the table.
func Ident(name string) ([]string, error) {
	parts := strings.Split(name, ".")
	if len(parts) < 3 {
		return nil, &source.Error{Kind: source.Invalid, Msg: fmt.Sprintf("%q names a catalog but no table: name a catalog's table as catalog.namespace.table", name)}
	}
	for _, p := range parts {
		if p == "" {
			return nil, &source.Error{Kind: source.Invalid, Msg: fmt.Sprintf("%q has an empty part: name a catalog's table as catalog.namespace.table", name)}
		}
	}
	return parts[1:], nil
}

// catalogMetadata is the storage name of the metadata file of the catalog
// table the request names.
func (s *Source) catalogMetadata(ctx context.Context) (string, error) {
	ident, err := Ident(s.req.Table)
	if err != nil {
		return "", err
	}
	loc, err := s.req.Catalog.MetadataLocation(ctx, ident)
	if err != nil {
		return "", err
	}
	if !isMetadataFile(loc) {
		return "", &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("catalog table %s: its metadata location %q is not a metadata file", s.req.Table, loc)}
	}
	name, err := objectName(s.bucket, loc)
	if err != nil {
		return "", fmt.Errorf("catalog table %s: its metadata file %s: %w", s.req.Table, loc, err)
	}
	return name, nil
}

// checkLocation asks Authorize whether the caller may read the catalog
// table's location (the table's own "location", else the directory above
// its metadata/): scopes apply to a catalog table's location as to a
// table named by it, and to every file it names as they are read.
func (s *Source) checkLocation(location, metadata string) error {
	if s.opts.Authorize == nil {
		return nil
	}
	if location == "" {
		location = tableDir(metadata)
	}
	name, err := objectName(s.bucket, strings.TrimSuffix(location, "/"))
	if err != nil {
		return fmt.Errorf("catalog table %s: its location %s: %w", s.req.Table, location, err)
	}
	return s.opts.Authorize(storage.Info{Name: name})
}

// TableName is how a catalog table is named in a request: the catalog's
// name, the namespace's levels and the table's, joined by dots.
func TableName(catalog string, ident []string) string {
	return catalog + "." + strings.Join(ident, ".")
}

// CatalogLocation is the storage name of the location of a table whose
// metadata file a catalog names (the directory above its metadata/), as
// the source resolves it: file URIs become paths under the root, which
// must hold them (fs.ErrPermission otherwise). ListFlights lists a catalog
// table to a caller whose scope covers it.
func CatalogLocation(b storage.Bucket, metadata string) (string, error) {
	name, err := objectName(b, metadata)
	if err != nil {
		return "", err
	}
	return tableDir(name), nil
}

// tableDir is the directory above the one holding a metadata file (the
// table's location, when the file is in its metadata/), cut by slashes so
// that a URI keeps its "scheme://".
func tableDir(metadata string) string {
	dir := metadata
	for range 2 {
		if i := strings.LastIndex(dir, "/"); i >= 0 {
			dir = dir[:i]
		}
	}
	return dir
}
