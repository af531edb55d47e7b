package iosched

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/scand/scand/internal/spans"
)

// Every storage request a File makes (a coalesced request, a part of a
// large one, a tail read, a direct read) is a fetch span, a child of the
// context the File was opened with, and so of the RPC that opened it.
// The package uses the OpenTelemetry API only, and starts spans only
// under a recording one (spans.Start): with tracing off they cost nothing.
var tracer = otel.Tracer("scand/iosched")

// startFetch starts the span of one storage request of n bytes at off. It
// begins once the request holds its slot among the requests in flight, so
// it measures the store, not the queue.
func (f *File) startFetch(ctx context.Context, off, n int64) (context.Context, trace.Span) {
	ctx, span := spans.Start(ctx, tracer, "fetch")
	if span.IsRecording() { // no attributes to build when tracing is off
		span.SetAttributes(spans.Path.String(f.info.Name), spans.Offset.Int64(off), spans.Bytes.Int64(n),
			spans.Backend.String(backendOf(f.info.Name)))
	}
	return ctx, span
}

func endFetch(span trace.Span, err error) { spans.End(span, err) }

// backendOf names the store serving name: its URI scheme, or "local" for
// a name without one (storage.Mux's default, the local root in scand).
func backendOf(name string) string {
	if i := strings.Index(name, "://"); i >= 0 {
		return name[:i]
	}
	return "local"
}
