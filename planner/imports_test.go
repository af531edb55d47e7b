package planner

import (
	"testing"

	"github.com/scand/scand/internal/importcheck"
)

// Planning is called, tested and benchmarked without a server: the
// planner and the sources import neither gRPC nor Flight, nor the server.
func TestPlannerImportsNoFlightEdge(t *testing.T) {
	importcheck.Forbid(t, []string{"*.go", "../source/*.go", "../source/*/*.go"}, func(path string) bool {
		return importcheck.Prefixed(path, "google.golang.org/grpc", "github.com/apache/arrow-go/v18/arrow/flight", "github.com/scand/scand/server")
	}, "planning stays apart from the Flight edge")
}
