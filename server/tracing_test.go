package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/scand/scand/internal/spans"
	"github.com/scand/scand/iosched"
)

var (
	recorderOnce sync.Once
	recorder     *tracetest.SpanRecorder
	recorderTP   *sdktrace.TracerProvider
)

// testTracing installs, once per test binary, a provider that records
// into an in-memory recorder. The packages' tracers follow the first
// provider installed, so there is one for every test. It samples only
// traces a client started (ParentBased over NeverSample): the other tests
// of the package, which send no traceparent, record nothing.
func testTracing() (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	recorderOnce.Do(func() {
		recorder = tracetest.NewSpanRecorder()
		recorderTP = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder),
			sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
		otel.SetTracerProvider(recorderTP)
	})
	return recorder, recorderTP
}

// spansOf waits until the trace has n RPC spans ended, and returns all of
// its spans: the server ends a DoGet's span just after the client has
// read the stream's end.
func spansOf(t *testing.T, rec *tracetest.SpanRecorder, id trace.TraceID, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var mine []sdktrace.ReadOnlySpan
		rpcs := 0
		for _, s := range rec.Ended() {
			if s.SpanContext().TraceID() == id {
				mine = append(mine, s)
				if s.SpanKind() == trace.SpanKindServer {
					rpcs++
				}
			}
		}
		if rpcs >= n || time.Now().After(deadline) {
			return mine
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rpcOf returns the name of the server span s descends from ("" when it
// has none), following parents through byID.
func rpcOf(s sdktrace.ReadOnlySpan, byID map[trace.SpanID]sdktrace.ReadOnlySpan) string {
	for {
		if s.SpanKind() == trace.SpanKindServer {
			return s.Name()[strings.LastIndex(s.Name(), "/")+1:]
		}
		p, ok := byID[s.Parent().SpanID()]
		if !ok {
			return ""
		}
		s = p
	}
}

// parentName is the name of s's parent, "rpc" for a server span.
func parentName(s sdktrace.ReadOnlySpan, byID map[trace.SpanID]sdktrace.ReadOnlySpan) string {
	p, ok := byID[s.Parent().SpanID()]
	switch {
	case !ok:
		return ""
	case p.SpanKind() == trace.SpanKindServer:
		return "rpc"
	}
	return p.Name()
}

func attrsOf(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// tracedScan runs one scan of a 4,000-row file in several endpoints
// through a real server with otelgrpc's handler, from arrow-go's stock
// Flight client sending a traceparent, and returns the trace's spans and
// the endpoints. The checked allocator must end at zero.
func tracedScan(t *testing.T, traceID trace.TraceID, clientSpan trace.SpanID) ([]sdktrace.ReadOnlySpan, int) {
	t.Helper()
	rec, tp := testTracing()
	dir := t.TempDir()
	batch := sampleRecord(0, 4000)
	defer batch.Release()
	writeParquet(t, dir, "t/a.parquet", batch, 1000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() {
		assertReleased(t, mem)
	})
	handler := otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagation.TraceContext{}))
	c := testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Mem: mem, ServerOptions: []grpc.ServerOption{grpc.StatsHandler(handler)}}))

	ctx := metadata.AppendToOutgoingContext(context.Background(),
		"traceparent", fmt.Sprintf("00-%s-%s-01", traceID, clientSpan))
	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"t/"}, "split_bytes": 1, "batch_rows": 500})
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	endpoints := len(res.info.Endpoint)
	if endpoints < 2 || res.rows() != 4000 {
		t.Fatalf("scan: %d endpoints, %d rows; want several endpoints and 4000 rows", endpoints, res.rows())
	}
	return spansOf(t, rec, traceID, 1+endpoints), endpoints
}

// spanWant is what TestScanSpanTree expects of the spans of one name below
// one RPC.
type spanWant struct {
	name, rpc string
	parent    string                                         // the direct parent's name, "rpc" for the RPC's span
	min       int                                            // spans at least
	attrs     []attribute.Key                                // each has these
	check     func(map[attribute.Key]attribute.Value) string // "" when right
	rows      int64                                          // their rows add up to this (0: not checked)
}

func spanTreeWants(endpoints int) []spanWant {
	fetchAttrs := []attribute.Key{spans.Path, spans.Offset, spans.Bytes, spans.Backend}
	return []spanWant{
		{name: "rpc", rpc: "GetFlightInfo", min: 1},
		{name: "rpc", rpc: "DoGet", min: endpoints},
		{name: "plan", rpc: "GetFlightInfo", parent: "rpc", min: 1, attrs: []attribute.Key{spans.Paths, spans.Files, spans.Endpoints, spans.Rows, spans.Bytes},
			check: func(a map[attribute.Key]attribute.Value) string {
				if a[spans.Files].AsInt64() != 1 || a[spans.Endpoints].AsInt64() != int64(endpoints) {
					return fmt.Sprintf("files %d, endpoints %d; want 1 and %d", a[spans.Files].AsInt64(), a[spans.Endpoints].AsInt64(), endpoints)
				}
				return ""
			}},
		{name: "footer", rpc: "GetFlightInfo", parent: "plan", min: 1, attrs: []attribute.Key{spans.Path, spans.Format, spans.Bytes, spans.Cached},
			check: func(a map[attribute.Key]attribute.Value) string {
				if a[spans.Cached].AsBool() || a[spans.Bytes].AsInt64() == 0 || a[spans.Format].AsString() != "parquet" {
					return "planning's footer read must fetch bytes of a parquet file, not hit the cache"
				}
				return ""
			}},
		{name: "fetch", rpc: "GetFlightInfo", parent: "plan", min: 1, attrs: fetchAttrs},
		{name: "footer", rpc: "DoGet", parent: "rpc", min: endpoints, attrs: []attribute.Key{spans.Path, spans.Bytes, spans.Cached},
			check: func(a map[attribute.Key]attribute.Value) string {
				if !a[spans.Cached].AsBool() || a[spans.Bytes].AsInt64() != 0 {
					return "a stream's footer must come from the metadata cache planning filled"
				}
				return ""
			}},
		{name: "fetch", rpc: "DoGet", parent: "rpc", min: endpoints, attrs: fetchAttrs,
			check: func(a map[attribute.Key]attribute.Value) string {
				if a[spans.Bytes].AsInt64() <= 0 || a[spans.Backend].AsString() != "local" {
					return "want bytes > 0 from the local backend"
				}
				return ""
			}},
		{name: "decode", rpc: "DoGet", parent: "rpc", min: 8, attrs: []attribute.Key{spans.Path, spans.Rows}, rows: 4000},
		{name: "send", rpc: "DoGet", parent: "rpc", min: 8, attrs: []attribute.Key{spans.Path, spans.Rows, spans.Bytes}, rows: 4000},
	}
}

// One scan through a real server and a stock Flight client that sends a
// traceparent: the RPC spans continue the client's trace, and plan,
// footer, fetch, decode and send spans hang below them with their
// attributes.
func TestScanSpanTree(t *testing.T) {
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	clientSpan, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	got, endpoints := tracedScan(t, traceID, clientSpan)
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range got {
		byID[s.SpanContext().SpanID()] = s
	}
	for _, s := range got {
		if s.SpanKind() == trace.SpanKindServer && (s.Parent().SpanID() != clientSpan || !s.Parent().IsRemote()) {
			t.Errorf("%s: parent %v, want the client's span %v (remote)", s.Name(), s.Parent().SpanID(), clientSpan)
		}
	}
	for _, w := range spanTreeWants(endpoints) {
		t.Run(w.name+" under "+w.rpc, func(t *testing.T) { checkSpans(t, w, got, byID) })
	}
}

// checkSpans checks the spans w describes among got.
func checkSpans(t *testing.T, w spanWant, got []sdktrace.ReadOnlySpan, byID map[trace.SpanID]sdktrace.ReadOnlySpan) {
	n, rows := 0, int64(0)
	for _, s := range got {
		name := s.Name()
		if s.SpanKind() == trace.SpanKindServer {
			name = "rpc"
		}
		if name != w.name || rpcOf(s, byID) != w.rpc {
			continue
		}
		n++
		a := attrsOf(s)
		rows += a[spans.Rows].AsInt64()
		if p := parentName(s, byID); w.parent != "" && p != w.parent {
			t.Errorf("span %s: parent %q, want %q", s.Name(), p, w.parent)
		}
		for _, want := range w.attrs {
			if _, ok := a[want]; !ok {
				t.Errorf("span %s lacks %s: %v", s.Name(), want, s.Attributes())
			}
		}
		if w.check != nil {
			if msg := w.check(a); msg != "" {
				t.Errorf("span %s %v: %s", s.Name(), s.Attributes(), msg)
			}
		}
	}
	if n < w.min {
		t.Errorf("%d spans, want at least %d", n, w.min)
	}
	if w.rows != 0 && rows != w.rows {
		t.Errorf("rows add up to %d, want %d", rows, w.rows)
	}
}
