// Package repo locates the scand repository for the benchmark programs,
// which find their scripts, tools and venv relative to it.
package repo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
)

// Root finds the scand module root from the working directory.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/scand/scand\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the scand repository")
		}
		dir = parent
	}
}
