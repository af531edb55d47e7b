package spans

import (
	"testing"

	"github.com/scand/scand/internal/importcheck"
)

// The packages that start spans use the OpenTelemetry API only: the SDK,
// the exporters and the gRPC instrumentation are cmd/scand's choice
// (tracing.go), passed to the server as options.
func TestSpansUseTheAPIOnly(t *testing.T) {
	importcheck.Forbid(t, []string{"*.go", "../../server/*.go", "../../iosched/*.go", "../../scanner/*.go"}, func(path string) bool {
		return importcheck.Prefixed(path, "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "go.opentelemetry.io/contrib")
	}, "only cmd/scand wires the SDK")
}
