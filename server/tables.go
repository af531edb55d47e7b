package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/scand/scand/planner"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/delta"
	"github.com/scand/scand/source/iceberg"
)

// deltaCacheBytes bounds the Delta snapshots and listings a server keeps
// between scans (source/delta's Cache).
const deltaCacheBytes = 256 << 20

// icebergPlanFiles bounds the Iceberg plans a server keeps between scans
// (source/iceberg's PlanCache), in data files: about a kilobyte each.
const icebergPlanFiles = 128 << 10

// tableSource returns the source of a request naming a table the caller
// may read: a Delta table (a location holding _delta_log/), else an
// Iceberg table (a location holding metadata/, or a metadata file). The
// format is told by what the location holds; snapshot_id and ref are
// Iceberg's, version Delta's.
func (s *Server) tableSource(ctx context.Context, req *scandv1.ScanRequest) (source.Source, error) {
	if name, cat, ok := s.cfg.Catalogs.Lookup(req.Table); ok {
		return s.catalogSource(ctx, req, name, cat) // catalogs.go
	}
	loc := strings.TrimSuffix(req.Table, "/")
	c := s.callerOf(ctx)
	if err := c.Check(loc); err != nil {
		return nil, err
	}
	var asOf time.Time
	if req.AsOf != "" {
		t, err := time.Parse(time.RFC3339Nano, req.AsOf)
		if err != nil {
			return nil, invalidf("as_of %q is not an RFC 3339 time", req.AsOf)
		}
		asOf = t
	}
	isDelta, lastCheckpoint, err := delta.Locate(ctx, s.bucket, loc)
	if err != nil {
		return nil, err
	}
	if isDelta {
		if len(req.IcebergTasks) > 0 {
			return nil, invalidf("%q is a Delta table: iceberg_tasks are tasks of an Iceberg table", loc)
		}
		if req.SnapshotId != 0 || req.Ref != "" {
			return nil, invalidf("%q is a Delta table: choose its version with version or as_of (snapshot_id and ref are Iceberg's)", loc)
		}
		opts := delta.Options{Cache: s.deltaCache, Mem: s.mem, AsOf: asOf, LastCheckpoint: lastCheckpoint}
		if req.Version != nil {
			v := req.GetVersion()
			opts.Version = &v
		}
		return delta.New(s.bucket, loc, opts)
	}
	if req.Version != nil {
		return nil, &requestError{code: codes.InvalidArgument, msg: "version chooses a Delta table's version; " + req.Table + " holds no _delta_log/ (an Iceberg table's snapshot is chosen with snapshot_id, ref or as_of)"}
	}
	r, err := icebergRequest(req, asOf)
	if err != nil {
		return nil, err
	}
	return notDelta{iceberg.New(s.bucket, r, iceberg.Options{Authorize: c.CheckFile, Plans: s.icebergPlans})}, nil
}

// icebergRequest is what req asks of an Iceberg table.
func icebergRequest(req *scandv1.ScanRequest, asOf time.Time) (iceberg.Request, error) {
	r := iceberg.Request{Table: req.Table, SnapshotID: req.SnapshotId, Ref: req.Ref, AsOf: asOf}
	for _, t := range req.IcebergTasks {
		r.Tasks = append(r.Tasks, iceberg.Task{Data: t.GetTask(), SpecID: int(t.GetSpecId())})
	}
	f, err := planner.ParseFilter(req.GetFilter(), req.GetFilterSubstrait())
	if err != nil {
		return r, err
	}
	if f != nil {
		r.Filter = f.Expr
	}
	return r, nil
}

// notDelta is an Iceberg source of a location that is no Delta table
// either: its "no table" error says both were looked for.
type notDelta struct{ *iceberg.Source }

func (n notDelta) List(ctx context.Context) (*source.Listing, error) {
	l, err := n.Source.List(ctx)
	var se *source.Error
	if errors.As(err, &se) && se.Kind == source.NotFound && errors.Is(err, iceberg.ErrNoTable) {
		return nil, &source.Error{Kind: source.NotFound, Msg: se.Msg + ", and no _delta_log/ (a Delta table)"}
	}
	return l, err
}
