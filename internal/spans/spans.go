// Package spans holds what scand's packages share about their OpenTelemetry
// spans: the attribute keys, which dashboards and queries name and which
// must therefore stay stable, and how a span ends on an error.
//
// The packages that start spans (server, scanner, iosched) use the
// OpenTelemetry API only, through otel.Tracer("scand/<pkg>"); which
// provider records them, if any, is cmd/scand's choice (tracing.go).
//
// Spans start through Start, only under a span that is recording: in
// scand the RPC's span, which otelgrpc's stats handler starts when tracing
// is on. Off (no provider, no handler) or in a trace the sampler dropped,
// a span costs one interface call and allocates nothing, where even the
// API's no-op tracer allocates a context per span (BenchmarkSpan).
package spans

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of scand's spans. Do not rename: traces already stored
// and the queries over them use these names.
const (
	Path      = attribute.Key("scand.path")      // the object read
	Paths     = attribute.Key("scand.paths")     // a request's paths (the first maxPaths)
	Format    = attribute.Key("scand.format")    // parquet or orc
	Files     = attribute.Key("scand.files")     // files a scan's paths matched
	Endpoints = attribute.Key("scand.endpoints") // endpoints (tickets) a plan has
	Rows      = attribute.Key("scand.rows")      // rows planned, decoded or sent
	Bytes     = attribute.Key("scand.bytes")     // bytes fetched, planned or sent
	Offset    = attribute.Key("scand.offset")    // where in the object a fetch starts
	Backend   = attribute.Key("scand.backend")   // the store: local, s3
	Cached    = attribute.Key("scand.cached")    // the footer came from the metadata cache
	Canceled  = attribute.Key("scand.canceled")  // the work was cancelled, which is no failure
)

// maxPaths bounds the paths a span lists: a request may name thousands.
const maxPaths = 16

// PathList is the Paths attribute of paths: the first maxPaths of them.
func PathList(paths []string) attribute.KeyValue {
	return Paths.StringSlice(paths[:min(len(paths), maxPaths)])
}

// noSpan is the span Start returns when it records nothing: the API's
// empty, non-recording span, whose methods do nothing.
var noSpan = trace.SpanFromContext(context.Background())

// Start starts a span named name as a child of ctx's span when that one
// is recording, and returns ctx as it is and a span that does nothing
// otherwise. A trace is sampled at its root, so a child of a span that is
// not recording would not be either (the SDK's default sampler is
// ParentBased); skipping it up front is what makes tracing free when off.
func Start(ctx context.Context, t trace.Tracer, name string) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noSpan
	}
	return t.Start(ctx, name)
}

// End ends span, marking it failed when err is not nil, and returns err,
// so that a caller can write `return spans.End(span, f())`. A cancelled
// context is not a failure: a client that stops reading after its limit
// cancels the readahead of its stream, and traces would be full of red.
// Such a span gets Canceled instead.
func End(span trace.Span, err error) error {
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		span.SetAttributes(Canceled.Bool(true))
	default:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	return err
}
