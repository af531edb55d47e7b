// Package spans holds what scand's packages share about their OpenTelemetry
// spans: the attribute keys, which dashboards and queries name and which
// must therefore stay stable, and how a span ends on an error.
//
// The packages that start spans (server, scanner, iosched) use the
// OpenTelemetry API only, through otel.Tracer("scand/<pkg>"); which
// provider records them, if any, is cmd/scand's choice (tracing.go). With
// none installed every span is the API's no-op, and the calls cost a few
// nanoseconds (see the benchmark in this package).
package spans

import (
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
)

// maxPaths bounds the paths a span lists: a request may name thousands.
const maxPaths = 16

// PathList is the Paths attribute of paths: the first maxPaths of them.
func PathList(paths []string) attribute.KeyValue {
	return Paths.StringSlice(paths[:min(len(paths), maxPaths)])
}

// End ends span, marking it failed when err is not nil, and returns err,
// so that a caller can write `return spans.End(span, f())`.
func End(span trace.Span, err error) error {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	return err
}
