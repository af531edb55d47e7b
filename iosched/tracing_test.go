package iosched_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/scand/scand/internal/spans"
	"github.com/scand/scand/iosched"
)

var (
	spanRecorderOnce sync.Once
	spanRecorder     *tracetest.SpanRecorder
)

// recordSpans installs, once per test binary (the package's tracer
// follows the first provider installed), a provider recording in memory,
// and returns its recorder, a context with a recording parent span (the
// RPC's, in the server) and that span's ID. The other tests of the
// package have no recording span, so their fetches record nothing.
func recordSpans(t *testing.T) (*tracetest.SpanRecorder, context.Context, trace.SpanID) {
	spanRecorderOnce.Do(func() {
		spanRecorder = tracetest.NewSpanRecorder()
		otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanRecorder)))
	})
	ctx, parent := otel.Tracer("test").Start(context.Background(), t.Name())
	t.Cleanup(func() { parent.End() })
	return spanRecorder, ctx, parent.SpanContext().SpanID()
}

// Every request that reaches storage is a fetch span below the context
// the file was opened with, saying where, how much and from which
// backend; a failed request's span is marked so.
func TestFetchSpans(t *testing.T) {
	errStore := errors.New("store: connection reset")
	for _, tc := range []struct {
		name   string
		fail   error
		status codes.Code
	}{
		{"ok", nil, codes.Unset},
		{"failed", errStore, codes.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, ctx, parent := recordSpans(t)
			f, _, reads := open(t, ctx, 1<<20, 4096)
			reads.err = tc.fail
			f.Prefetch([]iosched.Range{{Off: 100_000, Len: 10_000}, {Off: 110_500, Len: 20_000}})
			f.ReadAt(make([]byte, 10_000), 100_000)
			f.ReadAt(make([]byte, 100), 1<<20-100) // the tail
			f.Close()
			want := map[[2]int64]bool{}
			for _, r := range reads.get() {
				want[[2]int64{r.off, int64(r.n)}] = true
			}
			got := map[[2]int64]bool{}
			for _, s := range rec.Ended() {
				if s.Name() != "fetch" || s.Parent().SpanID() != parent {
					continue
				}
				a := map[attribute.Key]attribute.Value{}
				for _, kv := range s.Attributes() {
					a[kv.Key] = kv.Value
				}
				got[[2]int64{a[spans.Offset].AsInt64(), a[spans.Bytes].AsInt64()}] = true
				if a[spans.Path].AsString() != "f.parquet" || a[spans.Backend].AsString() != "local" || s.Status().Code != tc.status {
					t.Errorf("fetch span %v, status %v; want f.parquet from local, status %v", s.Attributes(), s.Status(), tc.status)
				}
			}
			if len(want) < 2 || len(got) != len(want) {
				t.Fatalf("storage saw %v, fetch spans say %v", want, got)
			}
			for k := range want {
				if !got[k] {
					t.Errorf("read %v has no fetch span (spans: %v)", k, got)
				}
			}
		})
	}
}
