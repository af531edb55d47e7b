package server

import (
	"context"

	"github.com/scand/scand/source/delta"
)

// IsTable reports whether location (root-relative or an object store URI)
// is a table the server reads by its log (a Delta table), for the Flight
// SQL front door, which then names it as a request's table rather than
// its paths. The caller of ctx must be allowed to read it. Errors are
// gRPC statuses.
func (s *Server) IsTable(ctx context.Context, location string) (bool, error) {
	if err := s.callerOf(ctx).Check(location); err != nil {
		return false, toStatus(err)
	}
	ok, err := delta.IsTable(ctx, s.bucket, location)
	if err != nil {
		return false, toStatus(err)
	}
	return ok, nil
}
