// Package importcheck lets tests hold the map of the tree: which packages
// a folder's code may import. A rule of the map ("the planner never
// imports the Flight edge", "only cmd/scand wires the OpenTelemetry SDK")
// is a test in the package it protects, and this package is how such a
// test reads the imports: from the source files, without building them.
//
// Only non-test files count: tests may reach anywhere to drive a package.
package importcheck

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Imports returns the import paths named by each non-test Go file matched
// by the patterns (filepath.Glob, relative to the test's package folder).
// A pattern that matches no Go file fails t: a rule over nothing would
// pass forever after a move.
func Imports(t testing.TB, patterns ...string) map[string][]string {
	t.Helper()
	out := make(map[string][]string)
	for _, pattern := range patterns {
		names, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatalf("importcheck: %s: %v", pattern, err)
		}
		found := false
		for _, name := range names {
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			found = true
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatalf("importcheck: %v", err)
			}
			paths := []string{}
			for _, imp := range f.Imports {
				path, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					t.Fatalf("importcheck: %s: %v", name, err)
				}
				paths = append(paths, path)
			}
			out[name] = paths
		}
		if !found {
			t.Fatalf("importcheck: %s matches no Go file", pattern)
		}
	}
	return out
}

// Forbid fails t once for every import, by a non-test file matched by the
// patterns, of a path that banned reports; why ends each message, saying
// which rule of the map the import breaks.
func Forbid(t testing.TB, patterns []string, banned func(path string) bool, why string) {
	t.Helper()
	for name, paths := range Imports(t, patterns...) {
		for _, path := range paths {
			if banned(path) {
				t.Errorf("%s imports %s: %s", name, path, why)
			}
		}
	}
}

// Prefixed reports whether path is one of prefixes or lies below one.
func Prefixed(path string, prefixes ...string) bool {
	for _, p := range prefixes {
		p = strings.TrimSuffix(p, "/")
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}
