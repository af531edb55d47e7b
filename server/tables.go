package server

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/scand/scand/planner"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/iceberg"
)

// validateTable checks a request that names a table (the rest of the
// request is validated as for paths, less the paths).
func validateTable(req *scandv1.ScanRequest) error {
	switch {
	case len(req.Paths) > 0:
		return invalidf("paths and table exclude each other: scan files, or one table")
	case req.Version != nil:
		return &requestError{code: codes.Unimplemented, msg: "version chooses a Delta table's version; this server reads Iceberg tables (snapshot_id, ref, as_of)"}
	case len(req.Columns) > maxColumns:
		return tooLargef("the request names %d columns; at most %d are allowed", len(req.Columns), maxColumns)
	case req.Limit < 0:
		return invalidf("limit must be >= 0 (0 means no limit), got %d", req.Limit)
	case req.BatchRows < 0 || req.MaxMessageBytes < 0 || req.SplitBytes < 0:
		return invalidf("batch_rows, max_message_bytes and split_bytes must be >= 0")
	}
	if req.AsOf != "" {
		if _, err := time.Parse(time.RFC3339Nano, req.AsOf); err != nil {
			return invalidf("as_of %q is not an RFC 3339 time (2026-01-31T12:00:00Z): %v", req.AsOf, err)
		}
	}
	return nil
}

// tableSource is the source of the table a request names: an Iceberg
// table read through the server's storage, every metadata object it reads
// checked against the caller's scope (and every data and delete file when
// it is opened).
func (s *Server) tableSource(ctx context.Context, req *scandv1.ScanRequest) (source.Source, error) {
	c := s.callerOf(ctx)
	if err := c.Check(strings.TrimSuffix(req.Table, "/")); err != nil {
		return nil, err
	}
	r := iceberg.Request{Table: req.Table, SnapshotID: req.SnapshotId, Ref: req.Ref}
	if req.AsOf != "" {
		t, err := time.Parse(time.RFC3339Nano, req.AsOf)
		if err != nil {
			return nil, invalidf("as_of %q is not an RFC 3339 time: %v", req.AsOf, err)
		}
		r.AsOf = t
	}
	f, err := planner.ParseFilter(req.GetFilter(), req.GetFilterSubstrait())
	if err != nil {
		return nil, err
	}
	if f != nil {
		r.Filter = f.Expr
	}
	return iceberg.New(s.bucket, r, iceberg.Options{Authorize: c.CheckFile}), nil
}
