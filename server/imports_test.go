package server

import (
	"strings"
	"testing"

	"github.com/scand/scand/internal/importcheck"
)

// The server takes a storage.Bucket; only cmd/scand knows the backends.
func TestServerImportsNoStorageBackend(t *testing.T) {
	importcheck.Forbid(t, []string{"*.go", "admission/*.go", "stream/*.go"}, func(path string) bool {
		// the contract (package storage) yes, a backend (storage/s3) no
		return strings.HasPrefix(path, "github.com/scand/scand/storage/")
	}, "backends are wired in cmd/scand")
}

// The stream is run by the server and never reaches back into it, and it
// returns classified errors: codes are chosen in status.go alone.
func TestStreamImportsNeitherServerNorCodes(t *testing.T) {
	importcheck.Forbid(t, []string{"stream/*.go"}, func(path string) bool {
		switch path {
		case "github.com/scand/scand/server", "google.golang.org/grpc/codes", "google.golang.org/grpc/status":
			return true
		}
		return false
	}, "the stream returns classified errors; status.go maps them")
}
