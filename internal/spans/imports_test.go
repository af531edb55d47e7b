package spans

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The packages that start spans use the OpenTelemetry API only: the SDK,
// the exporters and the gRPC instrumentation are cmd/scand's choice
// (tracing.go), passed to the server as options.
func TestSpansUseTheAPIOnly(t *testing.T) {
	forbidden := []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "go.opentelemetry.io/contrib"}
	for _, dir := range []string{".", "../../server", "../../iosched", "../../scanner"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
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
				for _, p := range forbidden {
					if strings.HasPrefix(path, p) {
						t.Errorf("%s imports %s: only cmd/scand wires the SDK", name, path)
					}
				}
			}
		}
	}
}
