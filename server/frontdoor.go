package server

import (
	"context"

	"github.com/scand/scand/source/delta"
)

// IsTable reports whether location (root-relative or an object store URI)
// is a table the server reads by its log (a Delta table) that the caller
// of ctx may read, for the Flight SQL front door, which then names it as
// a request's table rather than its paths. A location outside the
// caller's scope is no table: scanned by its paths, a folder then yields
// the files inside the scope, as any scan does. Errors are gRPC statuses.
func (s *Server) IsTable(ctx context.Context, location string) (bool, error) {
	if s.callerOf(ctx).Check(location) != nil {
		return false, nil
	}
	ok, err := delta.IsTable(ctx, s.bucket, location)
	if err != nil {
		return false, toStatus(err)
	}
	return ok, nil
}
