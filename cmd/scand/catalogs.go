package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/scand/scand/source/iceberg"
	"github.com/scand/scand/source/iceberg/catalogs"
)

// Iceberg catalogs are declared on the command line, one --catalog
// name=URI each (catalogs.Parse says which URIs); their credentials come
// from the environment (SCAND_CATALOG_<NAME>_TOKEN, _CREDENTIAL,
// _PASSWORD), never from a request. Nothing is connected at start: a
// catalog that cannot be reached fails the requests that need it with
// UNAVAILABLE.

func defineCatalogFlags(fs *flag.FlagSet, l *stringList) {
	fs.Var(l, "catalog", "Iceberg catalog `name=URI` whose tables requests name as name.namespace.table: rest+https://host[/path], rest+http://host, sql+sqlite:///path/catalog.db or sql+postgres://user@host/db; repeat for more (credentials: SCAND_CATALOG_<NAME>_TOKEN, _CREDENTIAL, _PASSWORD)")
}

// parseCatalogs parses the --catalog values; a name given twice is an
// error.
func parseCatalogs(values []string) ([]catalogs.Spec, error) {
	var out []catalogs.Spec
	seen := map[string]bool{}
	for _, v := range values {
		spec, err := catalogs.Parse(v)
		if err != nil {
			return nil, err
		}
		if seen[spec.Name] {
			return nil, fmt.Errorf("--catalog %s is given twice", spec.Name)
		}
		seen[spec.Name] = true
		out = append(out, spec)
	}
	return out, nil
}

// openCatalogs opens the declared catalogs; env nil reads the process's.
func openCatalogs(specs []catalogs.Spec, env catalogs.Env) (iceberg.Catalogs, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	if env == nil {
		env = os.Getenv
	}
	out := iceberg.Catalogs{}
	for _, spec := range specs {
		c, err := catalogs.Open(spec, env)
		if err != nil {
			catalogs.Close(out)
			return nil, err
		}
		out[spec.Name] = c
	}
	return out, nil
}
