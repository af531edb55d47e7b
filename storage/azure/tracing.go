package azure

import (
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracer names the spans of this package's HTTP attempts. The Google
// Cloud Storage SDK traces its own requests through the global
// OpenTelemetry provider; azcore needs an adapter module for that, so this
// one policy does the same job.
var tracer = otel.Tracer("github.com/scand/scand/storage/azure")

// tracePolicy is an azcore per-retry policy: one client span per HTTP
// attempt (retries show as siblings), under the caller's span, with the
// method, the blob's path and the status. The query, which may hold a SAS
// token, is never recorded.
type tracePolicy struct{}

func (tracePolicy) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	ctx, span := tracer.Start(raw.Context(), "azure.blob "+raw.Method, trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(attribute.String("http.request.method", raw.Method),
			attribute.String("url.path", raw.URL.Path),
			attribute.String("http.request.header.range", raw.Header.Get("x-ms-range")))
	}
	req = req.WithContext(ctx)
	resp, err := req.Next()
	switch {
	case err != nil:
		span.SetStatus(codes.Error, "request failed")
	case resp.StatusCode >= 400:
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
	default:
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	}
	return resp, err
}
