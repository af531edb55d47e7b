package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func TestParseTracingEnv(t *testing.T) {
	for _, tc := range []struct {
		name      string
		vars      map[string]string
		exporters []string
		protocol  string
		err       string // part of the error; "" for none
	}{
		{name: "unset: off"},
		{name: "none: off", vars: map[string]string{"OTEL_TRACES_EXPORTER": "none"}},
		{name: "disabled wins", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "TRUE"}},
		{name: "disabled false", vars: map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "false"}, exporters: []string{"console"}},
		{name: "otlp defaults to http/protobuf", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, exporters: []string{"otlp"}, protocol: "http/protobuf"},
		{name: "otlp over grpc", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, exporters: []string{"otlp"}, protocol: "grpc"},
		{name: "traces protocol wins", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
			exporters: []string{"otlp"}, protocol: "http/protobuf"},
		{name: "a list", vars: map[string]string{"OTEL_TRACES_EXPORTER": " OTLP , console,none"}, exporters: []string{"otlp", "console"}, protocol: "http/protobuf"},
		{name: "protocol ignored without otlp", vars: map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, exporters: []string{"console"}},
		{name: "unknown exporter", vars: map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}, err: `OTEL_TRACES_EXPORTER="jaeger": scand exports traces with otlp or console`},
		{name: "unsupported protocol", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: `OTLP protocol "http/json"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := testEnv(tc.vars)
			c, err := parseTracingEnv(e.getenv)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.exporters, tc.exporters) || c.protocol != tc.protocol {
				t.Errorf("got exporters %q protocol %q, want %q %q", c.exporters, c.protocol, tc.exporters, tc.protocol)
			}
		})
	}
}

// With no OTEL_* variable, startTracing installs nothing: the process
// keeps the API's default provider (whose spans are no-ops) and the gRPC
// server gets no stats handler.
func TestTracingOffInstallsNothing(t *testing.T) {
	before := otel.GetTracerProvider()
	for _, vars := range []map[string]string{nil, {"OTEL_TRACES_EXPORTER": "none"}, {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}} {
		e, stdout, _ := testEnv(vars)
		tr, err := startTracing(context.Background(), e, "127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if tr.provider != nil || len(tr.serverOptions) != 0 {
			t.Errorf("%v: tracing built a provider or server options", vars)
		}
		if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk || otel.GetTracerProvider() != before {
			t.Errorf("%v: a tracer provider was installed", vars)
		}
		tr.shutdown(nil) // off: nothing to flush, and no logger needed
		if stdout.String() != "" {
			t.Errorf("%v: wrote %q", vars, stdout)
		}
	}
}

// The console exporter writes the spans of the provider newTracing builds
// (not installed here: the test binary's other servers stay untraced),
// with the replica's resource, and shutdown flushes them.
func TestTracingConsoleExporter(t *testing.T) {
	e, stdout, _ := testEnv(nil)
	tr, err := newTracing(context.Background(), tracingConfig{exporters: []string{"console"}}, e.stdout, "127.0.0.1:8815")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.serverOptions) != 1 {
		t.Errorf("%d server options, want otelgrpc's stats handler", len(tr.serverOptions))
	}
	_, span := tr.provider.Tracer("test").Start(context.Background(), "plan")
	span.End()
	tr.shutdown(slog.New(slog.NewTextHandler(io.Discard, nil)))
	var got struct {
		Name     string
		Resource []struct {
			Key   string
			Value struct{ Value any }
		}
	}
	if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil {
		t.Fatalf("console output %q: %v", stdout, err)
	}
	res := map[string]any{}
	for _, kv := range got.Resource {
		res[kv.Key] = kv.Value.Value
	}
	if got.Name != "plan" || res["service.name"] != "scand" || res["service.instance.id"] != "127.0.0.1:8815" {
		t.Errorf("span %q with resource %v; want plan from scand at 127.0.0.1:8815", got.Name, res)
	}
}

func TestInstanceAddr(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	for listen, want := range map[string]string{
		"127.0.0.1:8815": "127.0.0.1:8815",
		"10.0.0.7:8815":  "10.0.0.7:8815",
		":8815":          host + ":8815",
		"0.0.0.0:8815":   host + ":8815",
		"[::]:8815":      host + ":8815",
		"not an address": "not an address",
	} {
		if got := instanceAddr(listen); got != want {
			t.Errorf("instanceAddr(%q) = %q, want %q", listen, got, want)
		}
	}
}

// parseTracingEnv never panics, turns tracing on only with a supported
// exporter, and with otlp always settles on a supported protocol.
func FuzzParseTracingEnv(f *testing.F) {
	f.Add("otlp", "grpc", "")
	f.Add("console,otlp", "", "false")
	f.Add("none", "http/json", "true")
	f.Add(" ,OTLP,", "http/protobuf", "")
	f.Fuzz(func(t *testing.T, exporter, protocol, disabled string) {
		e, _, _ := testEnv(map[string]string{"OTEL_TRACES_EXPORTER": exporter, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_SDK_DISABLED": disabled})
		c, err := parseTracingEnv(e.getenv)
		if strings.EqualFold(strings.TrimSpace(disabled), "true") && (err != nil || c.on()) {
			t.Fatalf("disabled, yet on=%v err=%v", c.on(), err)
		}
		if err != nil {
			return
		}
		otlp := false
		for _, x := range c.exporters {
			if x != "otlp" && x != "console" {
				t.Fatalf("exporter %q", x)
			}
			otlp = otlp || x == "otlp"
		}
		if otlp && c.protocol != "grpc" && c.protocol != "http/protobuf" {
			t.Fatalf("protocol %q", c.protocol)
		}
	})
}

// With otlp over http/protobuf, shutdown delivers the spans to the
// collector OTEL_EXPORTER_OTLP_ENDPOINT names (here a fake one on
// 127.0.0.1 that keeps what it is sent).
func TestTracingOTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var body []byte
	collector := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths, body = append(paths, r.URL.Path), append(body, b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	// The exporter's HTTP client would keep its connection to the
	// collector idle after shutdown, and its read and write loops outlive
	// the test until the collector's close reaches them: goleak
	// (TestMain) saw them once in CI. Without keep-alives the client
	// closes the connection after the export.
	collector.Config.SetKeepAlivesEnabled(false)
	collector.Start()
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	e, _, _ := testEnv(map[string]string{"OTEL_TRACES_EXPORTER": "otlp"})
	cfg, err := parseTracingEnv(e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newTracing(context.Background(), cfg, e.stdout, "127.0.0.1:8815")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.provider.Tracer("test").Start(context.Background(), "footer-of-the-test")
	span.End()
	tr.shutdown(slog.New(slog.NewTextHandler(io.Discard, nil)))
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(paths, []string{"/v1/traces"}) || !bytes.Contains(body, []byte("footer-of-the-test")) || !bytes.Contains(body, []byte("scand")) {
		t.Errorf("collector got %v, %d bytes; want one export to /v1/traces with the span and the service", paths, len(body))
	}
}
