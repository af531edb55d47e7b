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
	streamFiles, _ := filepath.Glob("stream/*.go")
	for _, name := range append(append(files, sub...), streamFiles...) {
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

// The stream is run by the server and never reaches back into it, and it
// returns classified errors: codes are chosen in status.go alone.
func TestStreamImportsNeitherServerNorCodes(t *testing.T) {
	files, err := filepath.Glob("stream/*.go")
	if err != nil || len(files) == 0 {
		t.Fatal("no stream package files", err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "github.com/scand/scand/server", "google.golang.org/grpc/codes", "google.golang.org/grpc/status":
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
