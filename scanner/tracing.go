package scanner

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/scand/scand/internal/spans"
)

var tracer = otel.Tracer("scand/scanner")

// DecodeSpans wraps a File.Read's emit so that every batch gets a decode
// span, a child of ctx's: it covers the reader's work on that batch, from
// the moment Read started or the previous batch was handed over (emit
// returned) until this one is, and so includes the reader's waits for the
// bytes it needs (their fetch spans say which). It records the rows.
//
// Outside a recording span (tracing off, or the trace not sampled) emit
// is returned as it is, so an untraced scan pays nothing per batch.
//
// The span is started once the batch arrives, with the earlier start
// time, so that the time after the last batch (the reader closing down)
// leaves no span without a batch behind. File.Read calls emit in order, one
// batch at a time, so start needs no lock.
func DecodeSpans(ctx context.Context, path string, emit func(arrow.RecordBatch) error) func(arrow.RecordBatch) error {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return emit
	}
	start := time.Now()
	return func(rec arrow.RecordBatch) error {
		_, span := tracer.Start(ctx, "decode", trace.WithTimestamp(start),
			trace.WithAttributes(spans.Path.String(path), spans.Rows.Int64(rec.NumRows())))
		span.End()
		err := emit(rec)
		start = time.Now()
		return err
	}
}
