package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/planner"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/cluster"
	"github.com/scand/scand/server/flightsql"
	"github.com/scand/scand/wire"
)

// GetFlightInfo and GetSchema call the planner (package planner) and turn
// its plan into Flight's answer: each task's ticket signed for the
// caller, its locations on the ring, the whole under gRPC's message cap.

// GetFlightInfo plans a scan: one endpoint per split, each with a ScanTask
// ticket, and the unified schema.
func (s *Server) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (_ *flight.FlightInfo, err error) {
	defer recoverHandler(s.log, "GetFlightInfo", &err)
	start := time.Now()
	if err := s.allowFlightInfo(s.callerOf(ctx)); err != nil {
		return nil, toStatus(err)
	}
	req, err := parseDescriptor(d)
	if err != nil {
		return nil, toStatus(err)
	}
	identity := s.callerOf(ctx).id.Name // whom the tickets are signed for
	p, err := s.planTraced(ctx, req)
	if err != nil {
		s.logFailure(ctx, "GetFlightInfo", req, err)
		s.audit(ctx, "GetFlightInfo", identity, err, "paths", req.Paths, "filter", req.GetFilter() != "" || len(req.GetFilterSubstrait()) > 0)
		return nil, toStatus(err)
	}
	info, err := s.flightInfo(d, p, identity)
	s.audit(ctx, "GetFlightInfo", identity, err, "paths", req.Paths, "filter", p.Stats.GetFilter(),
		"endpoints", len(p.Tasks), "rows", p.Rows, "bytes", p.Bytes)
	if err != nil {
		return nil, toStatus(err)
	}
	s.countPruned(p.Stats)
	s.log.Info("planned scan", "identity", identity, "paths", req.Paths, "columns", len(req.Columns), "endpoints", len(p.Tasks),
		"rows", p.Rows, "bytes", p.Bytes, "elapsed", time.Since(start))
	return info, nil
}

// flightInfo is GetFlightInfo's answer for plan p of descriptor d, its
// tickets signed for identity.
func (s *Server) flightInfo(d *flight.FlightDescriptor, p *planner.Plan, identity string) (*flight.FlightInfo, error) {
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(p.Schema, s.mem),
		FlightDescriptor: d,
		TotalRecords:     p.Rows,
		TotalBytes:       p.Bytes,
		Ordered:          true,
		AppMetadata:      wire.MarshalStats(p.Stats),
	}
	ring := s.ring()
	for _, t := range p.Tasks {
		ticket, err := proto.Marshal(t)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "encoding ticket: %v", err)
		}
		ep, err := s.signTicket(identity, ticket)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "signing ticket: %v", err)
		}
		ep.Location = locations(ring, t)
		info.Endpoint = append(info.Endpoint, ep)
	}
	if n := proto.Size(info); n > maxFlightInfoBytes {
		hint := "project fewer columns, or scan fewer files per request"
		if p.Stats != nil && p.Stats.Filter != "" {
			hint = "every ticket carries the filter: shorten it (a long IN list?), raise split_bytes, or scan fewer files per request"
		}
		return nil, tooLargef("the scan's FlightInfo would be %d bytes (%d endpoints, %d columns), over the 4 MiB a stock gRPC client accepts: %s",
			n, len(info.Endpoint), len(p.Schema.Fields()), hint)
	}
	return info, nil
}

// ring is the replicas' ring for one plan (one snapshot, so that every
// endpoint of a FlightInfo is placed on the same members); the zero Ring
// without Config.Ring.
func (s *Server) ring() cluster.Ring {
	if s.cfg.Ring == nil {
		return cluster.Ring{}
	}
	return s.cfg.Ring()
}

// locations are where task should be read (cluster.Ring.Place of its file
// and first row group): the owner, then the runner-up; none without a
// ring. Any replica serves any ticket, so these are a preference.
func locations(ring cluster.Ring, task *scandv1.ScanTask) []*flight.Location {
	first := 0
	if g := task.GetRowGroups(); len(g) > 0 {
		first = int(g[0])
	}
	var out []*flight.Location
	for _, m := range ring.Place(cluster.Key{Path: task.GetPath(), FirstGroup: first}) {
		out = append(out, &flight.Location{Uri: m})
	}
	return out
}

// maxFlightInfoBytes keeps GetFlightInfo's answer under gRPC's default 4
// MiB receive limit, which stock clients do not raise, with room for
// framing.
const maxFlightInfoBytes = 4<<20 - 64<<10

// endpoints' tickets.
func (s *Server) GetSchema(ctx context.Context, d *flight.FlightDescriptor) (_ *flight.SchemaResult, err error) {
	defer recoverHandler(s.log, "GetSchema", &err)
	req, err := parseDescriptor(d)
	if err != nil {
		return nil, toStatus(err)
	}
	p, err := s.planTraced(ctx, req)
	if err != nil {
		s.logFailure(ctx, "GetSchema", req, err)
		return nil, toStatus(err)
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(p.Schema, s.mem)}, nil
}

func (s *Server) logFailure(ctx context.Context, method string, req *scandv1.ScanRequest, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.log.Warn(method+" failed", "identity", s.callerOf(ctx).id.Name, "paths", req.GetPaths(), "err", fmt.Sprint(err))
}

// PlanCount plans req for counting its rows (planner.PlanCount), for the
// Flight SQL front door's COUNT(*): the rows the statistics prove match,
// and the FlightInfo of the rest, whose endpoints are read as any scan's.
// It is GetFlightInfo for the caller of ctx (rate limit, scopes, signed
// tickets), without a descriptor. Errors are gRPC statuses.
func (s *Server) PlanCount(ctx context.Context, req *scandv1.ScanRequest) (_ int64, _ *flight.FlightInfo, err error) {
	defer recoverHandler(s.log, "PlanCount", &err)
	c := s.callerOf(ctx)
	if err := s.allowFlightInfo(c); err != nil {
		return 0, nil, toStatus(err)
	}
	p, err := s.planner.PlanCount(ctx, req)
	if err != nil {
		s.logFailure(ctx, "PlanCount", req, err)
		s.audit(ctx, "PlanCount", c.id.Name, err, "paths", req.Paths, "filter", req.GetFilter() != "")
		return 0, nil, toStatus(err)
	}
	info, err := s.flightInfo(nil, p, c.id.Name)
	s.audit(ctx, "PlanCount", c.id.Name, err, "paths", req.Paths, "filter", p.Stats.GetFilter(),
		"endpoints", len(p.Tasks), "rows", p.Rows, "counted", p.Counted)
	if err != nil {
		return 0, nil, toStatus(err)
	}
	s.countPruned(p.Stats)
	return p.Counted, info, nil
}

// PlanExtremes plans req for the least and greatest values of columns
// (planner.PlanExtremes), for the Flight SQL front door's MIN and MAX:
// the bounds exact statistics give, and the FlightInfo of the rest. As
// PlanCount, it is GetFlightInfo for the caller of ctx. Errors are gRPC
// statuses.
func (s *Server) PlanExtremes(ctx context.Context, req *scandv1.ScanRequest, columns []string) (_ map[string]flightsql.Bounds, _ *flight.FlightInfo, err error) {
	defer recoverHandler(s.log, "PlanExtremes", &err)
	c := s.callerOf(ctx)
	if err := s.allowFlightInfo(c); err != nil {
		return nil, nil, toStatus(err)
	}
	p, err := s.planner.PlanExtremes(ctx, req, columns)
	if err != nil {
		s.logFailure(ctx, "PlanExtremes", req, err)
		s.audit(ctx, "PlanExtremes", c.id.Name, err, "paths", req.Paths, "filter", req.GetFilter() != "")
		return nil, nil, toStatus(err)
	}
	info, err := s.flightInfo(nil, p, c.id.Name)
	s.audit(ctx, "PlanExtremes", c.id.Name, err, "paths", req.Paths, "filter", p.Stats.GetFilter(),
		"endpoints", len(p.Tasks), "rows", p.Rows)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	s.countPruned(p.Stats)
	known := make(map[string]flightsql.Bounds, len(p.Extremes))
	for name, st := range p.Extremes {
		if st.Min != nil && st.Max != nil {
			known[name] = flightsql.Bounds{Min: st.Min, Max: st.Max}
		}
	}
	return known, info, nil
}
