package planner

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Planning is called, tested and benchmarked without a server: the
// planner and the sources import neither gRPC nor Flight, nor the server.
func TestPlannerImportsNoFlightEdge(t *testing.T) {
	var files []string
	for _, pattern := range []string{"*.go", "../source/*.go", "../source/*/*.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
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
			if strings.HasPrefix(path, "google.golang.org/grpc") || strings.HasPrefix(path, "github.com/apache/arrow-go/v18/arrow/flight") ||
				path == "github.com/scand/scand/server" {
				t.Errorf("%s imports %s: planning stays apart from the Flight edge", name, path)
			}
		}
	}
}
