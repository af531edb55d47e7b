package auth

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests run real gRPC servers and clients; every one must be stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
