package server

import (
	"context"
	"fmt"
	"time"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/delta"
)

// deltaCacheBytes bounds the Delta snapshots and listings a server keeps
// between scans (source/delta's Cache).
const deltaCacheBytes = 256 << 20

// tableSource returns the source of a request naming a table: a Delta
// table (a location holding _delta_log/) the caller may read, at the
// version or time asked for. The planner reads plain files only so far,
// so the table is listed as such (delta.Options.FilesOnly): what that
// cannot read correctly (column mapping, deletion vectors) is refused.
func (s *Server) tableSource(ctx context.Context, req *scandv1.ScanRequest) (source.Source, error) {
	loc := req.Table
	if err := s.callerOf(ctx).Check(loc); err != nil {
		return nil, err
	}
	ok, err := delta.IsTable(ctx, s.bucket, loc)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf(
			"no table at %q: it holds no _delta_log/ (this server reads Delta tables; name an Iceberg table's data files in \"paths\")", loc)}
	}
	opts := delta.Options{Cache: s.deltaCache, Mem: s.mem, FilesOnly: true}
	if req.Version != nil {
		v := req.GetVersion()
		opts.Version = &v
	}
	if req.AsOf != "" {
		t, err := time.Parse(time.RFC3339Nano, req.AsOf)
		if err != nil {
			return nil, invalidf("as_of %q is not an RFC 3339 time", req.AsOf)
		}
		opts.AsOf = t
	}
	return delta.New(s.bucket, loc, opts)
}
