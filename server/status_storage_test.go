package server

import (
	"context"
	"fmt"
	"strings"
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

// A path whose backend the server lacks is UNIMPLEMENTED, and the message
// says which serve flags turn the backend on.
func TestNoBackendNamesItsFlags(t *testing.T) {
	c := testServer(t, t.TempDir(), nil)
	for _, paths := range [][]string{{"s3://b/k.parquet"}, {"s3://b/trips/"}, {"s3://b/**/*.parquet"}} {
		_, err := scanJSON(context.Background(), c, map[string]any{"paths": paths})
		st, _ := status.FromError(err)
		if st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), "this server has no s3:// backend") ||
			!strings.Contains(st.Message(), "--s3-endpoint") || !strings.Contains(st.Message(), "--s3-region") {
			t.Errorf("%v: got %v, want UNIMPLEMENTED naming the --s3-* flags", paths, err)
		}
	}
}
