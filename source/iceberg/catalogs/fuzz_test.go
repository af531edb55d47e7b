package catalogs

import (
	"net/url"
	"strings"
	"testing"

	"github.com/scand/scand/source/iceberg"
)

// FuzzParse: any --catalog value parses or is refused without a panic; a
// parsed one has a name requests can use, an endpoint, and no password.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"lake=rest+https://cat.example.com/api?warehouse=w",
		"lake=sql+sqlite:///srv/catalog.db?catalog=default",
		"pg=sql+postgres://scand@db:5432/iceberg?sslmode=require",
		"x=rest+http://u:p@h", "=", "a=b", "a.b=rest+https://h", "lake=glue://",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		spec, err := Parse(value)
		if err != nil {
			return
		}
		if !nameRE.MatchString(spec.Name) || spec.Endpoint == "" {
			t.Fatalf("Parse(%q) = %+v", value, spec)
		}
		if u, err := url.Parse(spec.Endpoint); err == nil && u.User != nil {
			if _, set := u.User.Password(); set {
				t.Fatalf("Parse(%q) kept a password: %+v", value, spec)
			}
		}
		// A table of the catalog is told from a path.
		cats := iceberg.Catalogs{spec.Name: nil}
		if _, _, ok := cats.Lookup(spec.Name + ".db.t"); !ok {
			t.Fatalf("Lookup(%s.db.t) failed", spec.Name)
		}
		if _, _, ok := cats.Lookup(spec.Name + "/db.t"); ok {
			t.Fatal("Lookup took a path")
		}
	})
}

// FuzzIdent: a table name splits into its namespace and table, or is
// refused, without a panic.
func FuzzIdent(f *testing.F) {
	for _, s := range []string{"lake.db.t", "lake.a.b.c", "lake.t", "lake..t", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ident, err := iceberg.Ident(name)
		if err != nil {
			return
		}
		if len(ident) < 2 || strings.Join(ident, ".") != name[strings.Index(name, ".")+1:] {
			t.Fatalf("Ident(%q) = %q", name, ident)
		}
	})
}
