package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/server/cluster"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/wire"
)

// DefaultFooterConcurrency bounds how many footers one request reads at
// once when Planning.FooterConcurrency is 0: enough to keep a local disk
// busy. Object stores are latency-bound (a footer costs a round trip,
// not bandwidth), so cmd/scand raises it with S3 configured.
const DefaultFooterConcurrency = 8

// footerConcurrency is how many footers one request reads at once.
func (s *Server) footerConcurrency() int {
	return cmp.Or(s.cfg.Planning.FooterConcurrency, DefaultFooterConcurrency)
}

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
	// With a filter: the file's whole schema (the filter may name any of
	// its columns), the projection DoGet reads (the scan's columns and the
	// filter's), the statistics for pruning, and the row groups that
	// survive it (nil: every group).
	schema   *arrow.Schema
	readProj *scanner.Projection
	stats    func(g int) filter.StatsSource
	keep     []int
	// dropped are the groups bloom filters dropped after statistics kept
	// them (bloomprune.go).
	dropped []int
	// late predicts, for a split of the file's groups, whether a filtered
	// read goes late (lateplan.go); nil without a filter.
	late func(groups []int, mode scanner.LateMode) scanner.LatePlan
	// part is the file's index in the scan's partitions, and extra the
	// IPC-encoded fields its tickets carry (ScanTask.extra_fields).
	part  int
	extra []byte
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
	// stats are what pruning kept, for FlightInfo's app_metadata.
	stats *scandv1.PlanStats
	// late is each task's late-materialization prediction (nil entries
	// without a filter).
	late []*scandv1.LatePlan
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

// describe reads the footers of the chosen files (bounded in parallel) and
// projects each onto the requested columns, and with a filter onto the
// filter's columns too.
func (s *Server) describe(ctx context.Context, req *scandv1.ScanRequest, f *scanFilter, infos []storage.Info, chosen []int) ([]plannedFile, error) {
	files := make([]plannedFile, len(chosen))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.footerConcurrency())
	for i, at := range chosen {
		g.Go(func() error {
			o, err := s.open(gctx, infos[at])
			if err != nil {
				return err
			}
			defer o.Close()
			s.logWarnings(o.file)
			files[i], err = describeFile(o, req.Columns, f, s.sched.Hole(infos[at].Name))
			files[i].part = at
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return files, nil
}

// logWarnings logs what a reader has to say about a file it reads.
func (s *Server) logWarnings(f scanner.File) {
	if w, ok := f.(scanner.Warner); ok {
		for _, msg := range w.Warnings() {
			s.log.Warn("file read with a warning", "warning", msg)
		}
	}
}

// describeFile projects one opened file.
func describeFile(o *opened, columns []string, f *scanFilter, roundTrip int64) (plannedFile, error) {
	proj, err := o.file.Project(columns)
	if err != nil {
		return plannedFile{}, err
	}
	pf := plannedFile{info: o.io.Info(), format: o.file.Format(), proj: proj, readProj: proj}
	if len(columns) > 0 {
		pf.names = scanner.ColumnNames(o.file.Schema())
		pf.columns = selectColumns(pf.names, columns)
	}
	if f == nil {
		return pf, nil
	}
	pf.schema = o.file.Schema()
	pf.stats = statsOf(o.file)
	if len(columns) > 0 {
		if pf.readProj, err = o.file.Project(readColumns(columns, f.columns())); err != nil {
			return plannedFile{}, err
		}
	}
	pf.late = latePlanOf(o.file, pf.readProj, f.columns(), roundTrip)
	return pf, nil
}

// readColumns are the columns a filtered scan reads: the requested ones,
// then the filter's that are not among them.
func readColumns(columns, filterColumns []string) []string {
	out := slices.Clone(columns)
	for _, c := range filterColumns {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// makePlan does all of GetFlightInfo's work: expand the paths, prune hive
// partitions, read the footers of what is left, prune files and row
// groups by their statistics, and cut the rest into tasks.
func (s *Server) makePlan(ctx context.Context, req *scandv1.ScanRequest) (*plan, error) {
	f, err := parseFilter(req.GetFilter(), req.GetFilterSubstrait())
	if err != nil {
		return nil, err
	}
	infos, err := s.expand(ctx, req)
	if err != nil {
		return nil, err
	}
	parts := partitionsOf(infos)
	stats := &scandv1.PlanStats{Files: int64(len(infos))}
	chosen, err := prunePartitions(f, parts, infos, stats)
	if err != nil {
		return nil, err
	}
	schemaOnly := len(chosen) == 0 && len(infos) > 0
	if schemaOnly {
		// Every partition is pruned; one footer still gives the schema.
		chosen = []int{0}
	}
	files, err := s.describe(ctx, req, f, infos, chosen)
	if err != nil {
		return nil, err
	}
	if schemaOnly {
		files[0].keep = []int{}
	}
	if err := unknownColumns(req.Columns, files, parts); err != nil {
		return nil, err
	}
	unified, err := unifiedSchema(req.Columns, files, parts)
	if err != nil {
		return nil, err
	}
	if err := s.pruneStats(f, files, parts, stats); err != nil {
		return nil, err
	}
	if err := s.pruneBloom(ctx, f, files, parts, stats); err != nil {
		return nil, err
	}
	files = slices.DeleteFunc(files, func(pf plannedFile) bool { return pf.keep != nil && len(pf.keep) == 0 })
	p, err := s.planTasks(req, unified, files)
	if err != nil {
		return nil, err
	}
	p.identity = s.callerOf(ctx).id.Name
	p.stats = stats
	finishPlanStats(p, f)
	return p, nil
}

// unifiedSchema is the schema of every batch of the scan: the files'
// projections unified, with the hive partition columns: where the request
// names them, or after the files' columns when it asks for all. Named
// columns follow the projection rule of projection.go.
func unifiedSchema(columns []string, files []plannedFile, parts *partitions) (*arrow.Schema, error) {
	names := make([]string, len(files))
	schemas := make([]*arrow.Schema, len(files))
	for i, f := range files {
		names[i], schemas[i] = f.info.Name, f.proj.Schema
		for _, pf := range parts.fields {
			if f.proj.Schema.HasField(pf.Name) || (f.schema != nil && f.schema.HasField(pf.Name)) {
				return nil, invalidf("%s has a column %q, and its path names a hive partition of that name too: rename one of them", f.info.Name, pf.Name)
			}
		}
	}
	unified, err := scanner.Unify(names, schemas)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	meta := unified.Metadata() // the first file's, kept with partition columns too
	if len(columns) == 0 {
		if len(parts.fields) == 0 {
			return unified, nil
		}
		return arrow.NewSchema(append(slices.Clone(unified.Fields()), parts.fields...), &meta), nil
	}
	// Named columns: in request order (projection.go), which Unify's order
	// of first appearance is not when the first file lacks a column.
	return arrow.NewSchema(requestedFields(columns, unified, parts), &meta), nil
}

// unknownColumns fails with the requested columns no file has; files that
// lack a column another file has return nulls for it. Partition columns
// are known.
func unknownColumns(columns []string, files []plannedFile, parts *partitions) error {
	missing := map[string]int{}
	for _, f := range files {
		for _, m := range f.proj.Missing {
			missing[m]++
		}
	}
	var unknown []string
	for _, c := range columns {
		if missing[c] == len(files) && len(files) > 0 && !parts.has(c) {
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
	for _, pf := range parts.fields {
		available = append(available, pf.Name)
	}
	return &scanner.UnknownColumnError{Columns: scanner.SortedUnique(unknown), Available: available}
}

// planTasks cuts every file into splits of about the split bytes, one task
// each, and packs consecutive whole small files into one task (packer).
// Without a filter it stops once the request's limit is covered;
// with one, the rows a split returns are not known, so every task carries
// the whole limit (clients stop reading once they have it). Every task
// carries the fingerprint of unified, and every file's delta must rebuild
// unified exactly (projection.go), or planning fails with INTERNAL.
func (s *Server) planTasks(req *scandv1.ScanRequest, unified *arrow.Schema, files []plannedFile) (*plan, error) {
	splitBytes := cmp.Or(req.SplitBytes, s.cfg.Planning.SplitBytes)
	p := &plan{schema: unified}
	filtered := req.GetFilter() != "" || len(req.GetFilterSubstrait()) > 0
	remaining := req.Limit
	pack := &packer{target: splitBytes, filtered: filtered} // whole small files share endpoints (multifile.go)
	fingerprint := schemaFingerprint(unified)
	for _, f := range files {
		delta := schemaDelta(f.proj.Schema, unified, s.mem)
		if err := checkPlannedSchema(f.info.Name, f.proj.Schema, delta, unified, s.mem); err != nil {
			return nil, err
		}
		read := cmp.Or(f.readProj, f.proj)
		splits := splitGroups(read.Groups, f.keep, splitBytes)
		for _, split := range splits {
			task := newTask(req, f, split, delta)
			task.SchemaFingerprint = fingerprint
			rows, bytes := splitTotals(read, split)
			task.Rows = rows
			switch {
			case req.Limit > 0 && filtered:
				task.Limit, rows = req.Limit, min(rows, req.Limit)
			case req.Limit > 0 && rows >= remaining:
				task.Limit, rows = remaining, remaining
			}
			late := s.latePlan(f, split)
			if !pack.join(task, bytes, len(splits) == 1) {
				p.tasks = append(p.tasks, task)
				p.late = append(p.late, late)
			} else {
				joinLate(p.late[len(p.late)-1], late) // the open endpoint is the last
			}
			p.rows += rows
			p.bytes += bytes
			if req.Limit > 0 && !filtered {
				if remaining -= rows; remaining == 0 {
					return p, nil
				}
			}
		}
	}
	if filtered && req.Limit > 0 {
		p.rows = min(p.rows, req.Limit)
	}
	return p, nil
}

// newTask is the ticket of one split of f.
func newTask(req *scandv1.ScanRequest, f plannedFile, split []int, delta *scandv1.SchemaDelta) *scandv1.ScanTask {
	task := &scandv1.ScanTask{
		Path:        f.info.Name,
		Size:        f.info.Size,
		Version:     f.info.Version,
		Format:      formatProto(f.format),
		RowGroups:   toInt32(split),
		Columns:     f.columns,
		BatchRows:   req.BatchRows,
		SchemaDelta: delta,
		// Kept as sent: the stream clamps it (messageSizeFor).
		MaxMessageBytes: req.MaxMessageBytes,
		Compression:     req.Compression,
		ExtraFields:     f.extra,
	}
	switch {
	case req.GetFilter() != "":
		task.RowFilter = &scandv1.ScanTask_Filter{Filter: req.GetFilter()}
	case len(req.GetFilterSubstrait()) > 0:
		task.RowFilter = &scandv1.ScanTask_FilterSubstrait{FilterSubstrait: req.GetFilterSubstrait()}
	}
	return task
}

// splitTotals sums the rows and projected, compressed bytes of a split.
func splitTotals(p *scanner.Projection, split []int) (rows, bytes int64) {
	for _, g := range split {
		rows += p.Groups[g].Rows
		bytes += p.Groups[g].Bytes
	}
	return rows, bytes
}

// splitGroups cuts a file's row groups (those in keep, or all when keep
// is nil) into runs of about target projected bytes each. A group is never
// divided; groups without rows are skipped.
func splitGroups(groups []scanner.Group, keep []int, target int64) [][]int {
	if keep == nil {
		keep = make([]int, len(groups))
		for i := range keep {
			keep[i] = i
		}
	}
	var out [][]int
	var cur []int
	var size int64
	for _, i := range keep {
		g := groups[i]
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
	p, err := s.planTraced(ctx, req)
	if err != nil {
		s.logFailure(ctx, "GetFlightInfo", req, err)
		s.audit(ctx, "GetFlightInfo", s.callerOf(ctx).id.Name, err, "paths", req.Paths, "filter", req.GetFilter() != "" || len(req.GetFilterSubstrait()) > 0)
		return nil, toStatus(err)
	}
	info, err := s.flightInfo(d, p)
	s.audit(ctx, "GetFlightInfo", p.identity, err, "paths", req.Paths, "filter", p.stats.GetFilter(),
		"endpoints", len(p.tasks), "rows", p.rows, "bytes", p.bytes)
	if err != nil {
		return nil, toStatus(err)
	}
	s.countPruned(p.stats)
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
		AppMetadata:      wire.MarshalStats(p.stats),
	}
	ring := s.ring()
	for _, t := range p.tasks {
		ticket, err := proto.Marshal(t)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "encoding ticket: %v", err)
		}
		ep, err := s.signTicket(p.identity, ticket)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "signing ticket: %v", err)
		}
		ep.Location = locations(ring, t)
		info.Endpoint = append(info.Endpoint, ep)
	}
	if n := proto.Size(info); n > maxFlightInfoBytes {
		hint := "project fewer columns, or scan fewer files per request"
		if p.stats != nil && p.stats.Filter != "" {
			hint = "every ticket carries the filter: shorten it (a long IN list?), raise split_bytes, or scan fewer files per request"
		}
		return nil, tooLargef("the scan's FlightInfo would be %d bytes (%d endpoints, %d columns), over the 4 MiB a stock gRPC client accepts: %s",
			n, len(info.Endpoint), len(p.schema.Fields()), hint)
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
	p, err := s.planTraced(ctx, req)
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
