package spans

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestEnd(t *testing.T) {
	failed := errors.New("store: read failed")
	for _, tc := range []struct {
		name     string
		err      error
		status   codes.Code
		events   int
		canceled bool
	}{
		{"ok", nil, codes.Unset, 0, false},
		{"failed", failed, codes.Error, 1, false},
		{"canceled", fmt.Errorf("fetch a.parquet: %w", context.Canceled), codes.Unset, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			_, span := tp.Tracer("test").Start(context.Background(), "fetch")
			if got := End(span, tc.err); got != tc.err {
				t.Errorf("End returned %v, want %v", got, tc.err)
			}
			s := rec.Ended()
			if len(s) != 1 || s[0].Status().Code != tc.status || len(s[0].Events()) != tc.events {
				t.Fatalf("ended %d spans; status %v, %d events; want 1, %v, %d", len(s), s[0].Status(), len(s[0].Events()), tc.status, tc.events)
			}
			canceled := false
			for _, kv := range s[0].Attributes() {
				canceled = canceled || (kv.Key == Canceled && kv.Value.AsBool())
			}
			if canceled != tc.canceled {
				t.Errorf("canceled attribute %v, want %v", canceled, tc.canceled)
			}
		})
	}
}

func TestPathList(t *testing.T) {
	for _, n := range []int{0, 3, maxPaths, maxPaths + 5} {
		paths := make([]string, n)
		for i := range paths {
			paths[i] = fmt.Sprint("p", i)
		}
		if got := len(PathList(paths).Value.AsStringSlice()); got != min(n, maxPaths) {
			t.Errorf("%d paths: listed %d", n, got)
		}
	}
}

// Start records a child only under a recording span.
func TestStart(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test")
	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())).Tracer("test")
	recording, rpc := tracer.Start(context.Background(), "rpc")
	dropped, drop := unsampled.Start(context.Background(), "rpc")
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		record bool
	}{
		{"no parent", context.Background(), false},
		{"parent not sampled", dropped, false},
		{"recording parent", recording, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.Ended())
			ctx, span := Start(tc.ctx, tracer, "fetch")
			if span.IsRecording() != tc.record || (ctx == tc.ctx) == tc.record {
				t.Errorf("recording %v, new context %v; want %v", span.IsRecording(), ctx != tc.ctx, tc.record)
			}
			End(span, nil)
			if got := len(rec.Ended()) - before; got != map[bool]int{false: 0, true: 1}[tc.record] {
				t.Errorf("%d spans recorded", got)
			}
			if tc.record && rec.Ended()[before].Parent().SpanID() != rpc.SpanContext().SpanID() {
				t.Errorf("the span is not the child of the recording parent")
			}
		})
	}
	rpc.End()
	drop.End()
}

// The cost of one span as scand's packages start one (Start, attributes
// when recording, End): tracing off (no provider installed, the packages'
// tracers taken at init from the API's default), the API's no-op tracer
// called without Start's check, for comparison, and the SDK recording
// under a sampled parent.
var offTracer = otel.Tracer("scand/bench")

func BenchmarkSpan(b *testing.B) {
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discard{}))
	for _, bc := range []struct {
		name   string
		tracer trace.Tracer
		start  func(context.Context, trace.Tracer, string) (context.Context, trace.Span)
	}{
		{"off", offTracer, Start},
		{"off-unchecked", offTracer, func(ctx context.Context, t trace.Tracer, name string) (context.Context, trace.Span) {
			return t.Start(ctx, name)
		}},
		{"sdk", sdk.Tracer("scand/bench"), Start},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx, parent := bc.tracer.Start(context.Background(), "rpc")
			defer parent.End()
			b.ReportAllocs()
			for b.Loop() {
				_, span := bc.start(ctx, bc.tracer, "fetch")
				if span.IsRecording() {
					span.SetAttributes(Offset.Int64(4096), Bytes.Int64(1<<20), Backend.String("s3"))
				}
				End(span, nil)
			}
		})
	}
}

// discard is a span processor that keeps nothing, so that the benchmark
// measures the spans, not a growing recorder.
type discard struct{}

func (discard) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discard) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discard) Shutdown(context.Context) error                  { return nil }
func (discard) ForceFlush(context.Context) error                { return nil }
