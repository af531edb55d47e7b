package server

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/iceberg"
)

// catalogSource returns the source of a request naming a catalog's table
// ("catalog.namespace.table"): an Iceberg source that asks the catalog
// for the table's metadata file and reads it, and everything it names,
// through storage under the caller's scope (its location too: a catalog
// table is read only by a caller whose scope covers it).
func (s *Server) catalogSource(ctx context.Context, req *scandv1.ScanRequest, catalog string, cat iceberg.Catalog) (source.Source, error) {
	if req.Version != nil {
		return nil, &requestError{code: codes.InvalidArgument, msg: "version chooses a Delta table's version; " + req.Table + " is a table of Iceberg catalog " + catalog + " (its snapshot is chosen with snapshot_id, ref or as_of)"}
	}
	var asOf time.Time
	if req.AsOf != "" {
		t, err := time.Parse(time.RFC3339Nano, req.AsOf)
		if err != nil {
			return nil, invalidf("as_of %q is not an RFC 3339 time", req.AsOf)
		}
		asOf = t
	}
	r, err := icebergRequest(req, asOf) // tables.go
	if err != nil {
		return nil, err
	}
	r.Catalog = cat
	return iceberg.New(s.bucket, r, iceberg.Options{Authorize: s.callerOf(ctx).CheckFile, Plans: s.icebergPlans}), nil
}
