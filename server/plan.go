package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage"
)

// footerConcurrency bounds how many footers one request reads at once.
const footerConcurrency = 8

// plannedFile is one file of a scan, with its projection resolved.
type plannedFile struct {
	info   storage.Info
	format scanner.Format
	proj   *scanner.Projection
	// columns is the request's column list as this file sees it (nil for
	// all columns), and names the file's column names, kept for the
	// unknown-column error.
	columns *scandv1.ColumnSelection
	names   []string
}

// plan is a scan after GetFlightInfo's work: the unified schema and the
// tasks, one per endpoint.
type plan struct {
	schema *arrow.Schema
	tasks  []*scandv1.ScanTask
	rows   int64
	bytes  int64
	// identity is the caller's, whom the tickets are signed for.
	identity string
}

// expand resolves the request's paths into distinct files the caller may
// read, in request order (see expandPath).
func (s *Server) expand(ctx context.Context, req *scandv1.ScanRequest) ([]storage.Info, error) {
	var files []storage.Info
	seen := map[string]bool{}
	c := s.callerOf(ctx)
	for _, p := range req.Paths {
		infos, err := s.expandPath(ctx, c, p)
		if err != nil {
			return nil, err
		}
		for _, info := range infos {
			if seen[info.Name] {
				continue
			}
			seen[info.Name] = true
			files = append(files, info)
			if len(files) > maxFiles {
				return nil, tooLargef("the request matches more than %d files; scan fewer at a time", maxFiles)
			}
		}
	}
	return files, nil
}

// describe reads the footers of all files (bounded in parallel) and
// projects each onto the requested columns.
func (s *Server) describe(ctx context.Context, req *scandv1.ScanRequest, infos []storage.Info) ([]plannedFile, error) {
	files := make([]plannedFile, len(infos))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(footerConcurrency)
	for i, info := range infos {
		g.Go(func() error {
			o, err := s.open(gctx, info)
			if err != nil {
				return err
			}
			defer o.Close()
			proj, err := o.file.Project(req.Columns)
			if err != nil {
				return err
			}
			files[i] = plannedFile{info: o.io.Info(), format: o.file.Format(), proj: proj}
			if len(req.Columns) > 0 {
				files[i].names = scanner.ColumnNames(o.file.Schema())
				files[i].columns = selectColumns(files[i].names, req.Columns)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return files, nil
}

// makePlan does all of GetFlightInfo's work.
func (s *Server) makePlan(ctx context.Context, req *scandv1.ScanRequest) (*plan, error) {
	infos, err := s.expand(ctx, req)
	if err != nil {
		return nil, err
	}
	files, err := s.describe(ctx, req, infos)
	if err != nil {
		return nil, err
	}
	if err := unknownColumns(req.Columns, files); err != nil {
		return nil, err
	}
	names := make([]string, len(files))
	schemas := make([]*arrow.Schema, len(files))
	for i, f := range files {
		names[i], schemas[i] = f.info.Name, f.proj.Schema
	}
	unified, err := scanner.Unify(names, schemas)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	p := s.planTasks(req, unified, files)
	p.identity = s.callerOf(ctx).id.Name
	return p, nil
}

// unknownColumns fails with the requested columns no file has; files that
// lack a column another file has return nulls for it.
func unknownColumns(columns []string, files []plannedFile) error {
	missing := map[string]int{}
	for _, f := range files {
		for _, m := range f.proj.Missing {
			missing[m]++
		}
	}
	var unknown []string
	for _, c := range columns {
		if missing[c] == len(files) {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	// Every file's columns, each once, in file order.
	var available []string
	seen := map[string]bool{}
	for _, f := range files {
		for _, n := range f.names {
			if !seen[n] {
				seen[n] = true
				available = append(available, n)
			}
		}
	}
	return &scanner.UnknownColumnError{Columns: scanner.SortedUnique(unknown), Available: available}
}

// planTasks cuts every file into splits of about the split bytes, one task
// each, until the request's limit is covered.
func (s *Server) planTasks(req *scandv1.ScanRequest, unified *arrow.Schema, files []plannedFile) *plan {
	splitBytes := cmp.Or(req.SplitBytes, s.cfg.Planning.SplitBytes)
	p := &plan{schema: unified}
	remaining := req.Limit
	for _, f := range files {
		delta := schemaDelta(f.proj.Schema, unified, s.mem)
		for _, split := range splitGroups(f.proj.Groups, splitBytes) {
			task := &scandv1.ScanTask{
				Path:        f.info.Name,
				Size:        f.info.Size,
				Version:     f.info.Version,
				Format:      formatProto(f.format),
				RowGroups:   toInt32(split),
				Columns:     f.columns,
				BatchRows:   req.BatchRows,
				SchemaDelta: delta,
				Compression: req.Compression,
			}
			rows, bytes := splitTotals(f.proj, split)
			task.Rows = rows
			if req.Limit > 0 && rows >= remaining {
				task.Limit, rows = remaining, remaining
			}
			p.tasks = append(p.tasks, task)
			p.rows += rows
			p.bytes += bytes
			if req.Limit > 0 {
				if remaining -= rows; remaining == 0 {
					return p
				}
			}
		}
	}
	return p
}

// splitTotals sums the rows and projected, compressed bytes of a split.
func splitTotals(p *scanner.Projection, split []int) (rows, bytes int64) {
	for _, g := range split {
		rows += p.Groups[g].Rows
		bytes += p.Groups[g].Bytes
	}
	return rows, bytes
}

// splitGroups cuts a file's row groups into runs of consecutive groups of
// about target projected bytes each. A group is never divided; groups
// without rows are skipped.
func splitGroups(groups []scanner.Group, target int64) [][]int {
	var out [][]int
	var cur []int
	var size int64
	for i, g := range groups {
		if g.Rows == 0 {
			continue
		}
		if len(cur) > 0 && size+g.Bytes > target {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += g.Bytes
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func toInt32(s []int) []int32 {
	out := make([]int32, 0, len(s))
	for _, v := range s {
		out = append(out, int32(v))
	}
	return out
}

func formatProto(f scanner.Format) scandv1.Format {
	switch f {
	case scanner.FormatParquet:
		return scandv1.Format_FORMAT_PARQUET
	case scanner.FormatORC:
		return scandv1.Format_FORMAT_ORC
	}
	return scandv1.Format_FORMAT_UNSPECIFIED
}

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
	p, err := s.planWithin(ctx, req)
	if err != nil {
		s.logFailure(ctx, "GetFlightInfo", req, err)
		return nil, toStatus(err)
	}
	info, err := s.flightInfo(d, p)
	if err != nil {
		return nil, toStatus(err)
	}
	s.log.Info("planned scan", "identity", p.identity, "paths", req.Paths, "columns", len(req.Columns), "endpoints", len(p.tasks),
		"rows", p.rows, "bytes", p.bytes, "elapsed", time.Since(start))
	return info, nil
}

// flightInfo is GetFlightInfo's answer for plan p of descriptor d.
func (s *Server) flightInfo(d *flight.FlightDescriptor, p *plan) (*flight.FlightInfo, error) {
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(p.schema, s.mem),
		FlightDescriptor: d,
		TotalRecords:     p.rows,
		TotalBytes:       p.bytes,
		Ordered:          true,
	}
	for _, t := range p.tasks {
		ticket, err := proto.Marshal(t)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "encoding ticket: %v", err)
		}
		ep, err := s.signTicket(p.identity, ticket)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "signing ticket: %v", err)
		}
		info.Endpoint = append(info.Endpoint, ep)
	}
	if n := proto.Size(info); n > maxFlightInfoBytes {
		return nil, tooLargef("the scan's FlightInfo would be %d bytes (%d endpoints, %d columns), over the 4 MiB a stock gRPC client accepts: project fewer columns, or scan fewer files per request",
			n, len(info.Endpoint), len(p.schema.Fields()))
	}
	return info, nil
}

// maxFlightInfoBytes keeps GetFlightInfo's answer under gRPC's default 4
// MiB receive limit, which stock clients do not raise, with room for
// framing.
const maxFlightInfoBytes = 4<<20 - 64<<10

// planWithin is makePlan bounded by the server's own planning deadline,
// so that a request naming huge globs cannot keep a handler (and its
// listing and footer reads) busy for as long as the client waits.
func (s *Server) planWithin(ctx context.Context, req *scandv1.ScanRequest) (*plan, error) {
	pctx, cancel := context.WithTimeout(ctx, s.cfg.Planning.Timeout)
	defer cancel()
	p, err := s.makePlan(pctx, req)
	if err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return nil, &requestError{code: codes.DeadlineExceeded, msg: fmt.Sprintf(
			"planning the scan took longer than %v (--plan-timeout): name fewer files, or narrower globs or prefixes", s.cfg.Planning.Timeout)}
	}
	return p, err
}

// GetSchema returns the unified schema of a scan without planning its
// endpoints' tickets.
func (s *Server) GetSchema(ctx context.Context, d *flight.FlightDescriptor) (_ *flight.SchemaResult, err error) {
	defer recoverHandler(s.log, "GetSchema", &err)
	req, err := parseDescriptor(d)
	if err != nil {
		return nil, toStatus(err)
	}
	p, err := s.planWithin(ctx, req)
	if err != nil {
		s.logFailure(ctx, "GetSchema", req, err)
		return nil, toStatus(err)
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(p.schema, s.mem)}, nil
}

func (s *Server) logFailure(ctx context.Context, method string, req *scandv1.ScanRequest, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.log.Warn(method+" failed", "identity", s.callerOf(ctx).id.Name, "paths", req.GetPaths(), "err", fmt.Sprint(err))
}
