// Package catalogs builds the Iceberg catalogs `scand serve --catalog
// name=URI` declares, as source/iceberg's Catalog: what resolves a
// request's "name.namespace.table" to the table's metadata file, and lists
// a catalog's tables for ListFlights.
//
//   - rest+https://host[/path] and rest+http://host: a REST catalog,
//     through iceberg-go's client (catalog/rest); a bearer token from
//     SCAND_CATALOG_<NAME>_TOKEN, or OAuth2 client credentials
//     ("id:secret") from SCAND_CATALOG_<NAME>_CREDENTIAL; warehouse,
//     prefix, scope and oauth2-server-uri as URI parameters.
//   - sql+sqlite:///abs/path/catalog.db and sql+postgres://user@host/db: a
//     SQL catalog (Iceberg's JDBC catalog schema, as PyIceberg's
//     SqlCatalog, Java's JdbcCatalog and iceberg-go write it), read-only;
//     the catalog_name in the database is the catalog's name unless
//     ?catalog= says otherwise; postgres' password from
//     SCAND_CATALOG_<NAME>_PASSWORD. sqlite is modernc.org/sqlite and
//     postgres lib/pq: both pure Go, so the binary stays static.
//
// Credentials never come from a request, and never from the URI (one with
// a password is refused). A catalog resolves names only: the metadata file
// and every file it names are read through scand's storage by the
// source, under the server's root and the caller's scope. Errors are
// source.Error kinds: an unknown namespace or table NotFound, a catalog
// that cannot be reached (or refuses scand's credentials) Unavailable.
// Glue catalogs are refused at start.
package catalogs
