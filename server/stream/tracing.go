package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/scand/scand/internal/spans"
)

// tracer is the server's: a stream's send spans (one per message) are
// children of the DoGet's RPC span, named as before the stream had its own
// package (docs/tracing.md). Taken once, as otel.Tracer's tracers follow
// the provider installed later.
var tracer = otel.Tracer("scand/server")

// startSend starts the span of one message of st's stream, carrying rec:
// its rows and its Arrow bytes (the body before IPC compression).
func (st *stream) startSend(rec arrow.RecordBatch) trace.Span {
	_, span := spans.Start(st.out.Context(), tracer, "send")
	if span.IsRecording() { // BatchBytes walks the batch's buffers
		span.SetAttributes(spans.Path.String(st.task.Path), spans.Rows.Int64(rec.NumRows()), spans.Bytes.Int64(BatchBytes(rec)))
	}
	return span
}
