package azure_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/scand/scand/storage/azure"
)

// TestTracing checks that each request is a span under the caller's, and
// that a SAS in the URL never reaches a span.
func TestTracing(t *testing.T) {
	ctr := newContainer(t, map[string][]byte{"a": []byte("abc")})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(prev)
	b := newBackend(t, "", azure.Config{SAS: accountSAS(t)})
	ctx, parent := tp.Tracer("test").Start(context.Background(), "scan")
	if _, err := b.Stat(ctx, "az://"+ctr+"/a"); err != nil {
		t.Fatal(err)
	}
	parent.End()
	var found bool
	for _, s := range rec.Ended() {
		if s.Name() != "azure.blob HEAD" {
			continue
		}
		found = true
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("the request span is not under the caller's")
		}
		for _, a := range s.Attributes() {
			if strings.Contains(a.Value.Emit(), "sig=") {
				t.Errorf("attribute %s carries the SAS: %s", a.Key, a.Value.Emit())
			}
		}
	}
	if !found {
		t.Errorf("no azure.blob HEAD span among %d", len(rec.Ended()))
	}
}
