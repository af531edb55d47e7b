package server

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/storage"
)

// A store that stays unreachable after its retries is UNAVAILABLE, which
// clients and engines retry; a changed object stays FAILED_PRECONDITION.
func TestStatusOfStorageErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{fmt.Errorf("s3: stat s3://b/k: connection reset: %w", storage.ErrUnavailable), codes.Unavailable},
		{fmt.Errorf("%q shrank while it was read: %w", "a.parquet", storage.ErrChanged), codes.FailedPrecondition},
	} {
		if got := status.Code(toStatus(tc.err)); got != tc.want {
			t.Errorf("toStatus(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
