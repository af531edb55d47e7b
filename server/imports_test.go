package server

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The server takes a storage.Bucket; only cmd/scand knows the backends.
func TestServerImportsNoStorageBackend(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := filepath.Glob("admission/*.go")
	for _, name := range append(files, sub...) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/scand/scand/storage/") {
				t.Errorf("%s imports %s: backends are wired in cmd/scand", name, path)
			}
		}
	}
}
