package server

import (
	"context"

	"go.opentelemetry.io/otel"

	"github.com/scand/scand/internal/spans"
	"github.com/scand/scand/iosched"
	"github.com/scand/scand/planner"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/stream"
)

// The server's spans: plan (GetFlightInfo and GetSchema), footer (one per
// file opened) and send (one per message of a DoGet). Each is a child of
// the RPC's span, which otelgrpc's stats handler starts, from the
// client's traceparent when it sends one; cmd/scand passes that handler in
// Config.ServerOptions when tracing is on. The server itself imports only
// the OpenTelemetry API, and starts spans only under a recording one
// (spans.Start): with tracing off they cost nothing.
// docs/tracing.md lists the spans and their attributes.
//
// The tracer is taken once: otel.Tracer's tracers follow the provider
// installed later (the first one: cmd/scand installs one at start).
var tracer = otel.Tracer("scand/server")

// planTraced is the planner's Plan in a plan span, which records what the
// plan covers: the paths, the files they matched, the endpoints, rows and
// bytes.
func (s *Server) planTraced(ctx context.Context, req *scandv1.ScanRequest) (*planner.Plan, error) {
	ctx, span := spans.Start(ctx, tracer, "plan")
	if span.IsRecording() { // PathList copies the paths
		span.SetAttributes(spans.PathList(req.GetPaths()))
	}
	p, err := s.planner.Plan(ctx, req)
	if p != nil && span.IsRecording() {
		span.SetAttributes(spans.Files.Int64(p.Stats.GetFiles()), spans.Endpoints.Int(len(p.Tasks)),
			spans.Rows.Int64(p.Rows), spans.Bytes.Int64(p.Bytes))
	}
	return p, spans.End(span, err)
}

// openFooter is openFormat in a footer span: detecting the format and
// reading the footer are a file's first reads, so the bytes the file has
// fetched by then are the footer's (none when the metadata cache had it).
func (s *Server) openFooter(ctx context.Context, f *iosched.File) (*stream.Opened, error) {
	ctx, span := spans.Start(ctx, tracer, "footer")
	if span.IsRecording() {
		span.SetAttributes(spans.Path.String(f.Info().Name))
	}
	o, err := s.openFormat(ctx, f)
	if span.IsRecording() { // Stats takes the file's lock
		io := f.Stats()
		span.SetAttributes(spans.Bytes.Int64(io.BytesFetched), spans.Cached.Bool(io.CacheHits > 0))
		if o != nil {
			span.SetAttributes(spans.Format.String(o.File.Format().String()))
		}
	}
	return o, spans.End(span, err)
}
