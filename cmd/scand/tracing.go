package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
)

// Tracing (docs/tracing.md) is configured by the standard OTEL_*
// variables only, as every OpenTelemetry SDK is, so that a collector's
// usual Kubernetes wiring works unchanged. It is off unless
// OTEL_TRACES_EXPORTER names an exporter (otlp or console) and
// OTEL_SDK_DISABLED is not true; off, nothing is installed: the packages'
// spans stay the API's no-ops and the gRPC server gets no stats handler.
//
// The exporters are chosen here rather than by contrib's autoexport, which
// would also link the metrics and logs exporters and a Prometheus bridge
// (and upgrade the Prometheus libraries /metrics is served with) for the
// one variable we need. What each exporter reads itself
// (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT, ...), the batch
// processor (OTEL_BSP_*), the sampler (OTEL_TRACES_SAMPLER) and the
// resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) are the SDK's.

// tracingShutdownTimeout bounds the flush of the spans still queued when
// the server stops.
const tracingShutdownTimeout = 5 * time.Second

// tracingConfig is what the environment asks of tracing.
type tracingConfig struct {
	exporters []string // "otlp", "console"; none: tracing is off
	protocol  string   // of otlp: "grpc" or "http/protobuf"
}

func (c tracingConfig) on() bool { return len(c.exporters) > 0 }

// parseTracingEnv reads OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER (a comma
// separated list) and the OTLP protocol. Values the specification names
// but scand does not support are errors, so that a typo does not leave a
// server silently untraced.
func parseTracingEnv(getenv func(string) (string, bool)) (tracingConfig, error) {
	var c tracingConfig
	if v, _ := getenv("OTEL_SDK_DISABLED"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return c, nil
	}
	list, _ := getenv("OTEL_TRACES_EXPORTER")
	for _, name := range strings.Split(list, ",") {
		switch name = strings.ToLower(strings.TrimSpace(name)); name {
		case "", "none":
		case "otlp", "console":
			c.exporters = append(c.exporters, name)
		default:
			return c, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: scand exports traces with otlp or console (or none, the default)", list)
		}
	}
	if !slices.Contains(c.exporters, "otlp") {
		return c, nil
	}
	c.protocol = "http/protobuf" // the specification's default
	for _, key := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v, _ := getenv(key); strings.TrimSpace(v) != "" {
			c.protocol = strings.TrimSpace(v)
			break
		}
	}
	if c.protocol != "grpc" && c.protocol != "http/protobuf" {
		return c, fmt.Errorf("OTLP protocol %q: scand sends traces over grpc or http/protobuf", c.protocol)
	}
	return c, nil
}

// tracing is the tracer provider a server runs with, and the gRPC server
// options that put its spans on every RPC. The zero value is tracing off.
type tracing struct {
	provider      *sdktrace.TracerProvider
	propagator    propagation.TextMapPropagator
	serverOptions []grpc.ServerOption
}

// startTracing sets up and installs tracing as the environment asks, for
// a server listening on listen. Off, it installs nothing.
func startTracing(ctx context.Context, e env, listen string, log *slog.Logger) (*tracing, error) {
	cfg, err := parseTracingEnv(e.getenv)
	if err != nil || !cfg.on() {
		return &tracing{}, err
	}
	t, err := newTracing(ctx, cfg, e.stdout, listen)
	if err != nil {
		return nil, err
	}
	t.install(log)
	log.Info("tracing on", "exporters", strings.Join(cfg.exporters, ","), "otlp_protocol", cfg.protocol)
	return t, nil
}

// newTracing builds the provider of cfg, which must be on, without
// installing it; the console exporter writes to stdout.
func newTracing(ctx context.Context, cfg tracingConfig, stdout io.Writer, listen string) (*tracing, error) {
	res, err := tracingResource(ctx, listen)
	if err != nil {
		return nil, err
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, name := range cfg.exporters {
		exp, err := newSpanExporter(ctx, name, cfg.protocol, stdout)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	t := &tracing{
		provider:   sdktrace.NewTracerProvider(opts...),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	t.serverOptions = []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(t.provider),
		otelgrpc.WithPropagators(t.propagator),
		// Kubernetes probes check health every few seconds: spans of
		// nothing, in every trace store.
		otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
	))}
	return t, nil
}

// newSpanExporter returns the exporter named name. The OTLP exporters
// read their endpoint, headers, TLS and timeout from OTEL_EXPORTER_OTLP_*
// themselves, and connect lazily: a collector that is down costs dropped
// spans (logged), never a failed start.
func newSpanExporter(ctx context.Context, name, protocol string, stdout io.Writer) (sdktrace.SpanExporter, error) {
	var exp sdktrace.SpanExporter
	var err error
	switch {
	case name == "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(stdout))
	case protocol == "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: %s exporter: %w", name, err)
	}
	return exp, nil
}

// tracingResource describes this replica: service.name scand, its
// version, and service.instance.id, the address it serves on, so that the
// spans of one scan's streams say which replica served each. The
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES variables win.
func tracingResource(ctx context.Context, listen string) (*resource.Resource, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", "scand"),
			attribute.String("service.version", version),
			attribute.String("service.instance.id", instanceAddr(listen)),
		),
		resource.WithHost(),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return res, nil
}

// instanceAddr is listen as peers and clients could reach it: a server
// listening on all interfaces (":8815", "0.0.0.0:8815") is named by its
// host name, which in Kubernetes is the pod's.
func instanceAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if name, err := os.Hostname(); err == nil {
			return net.JoinHostPort(name, port)
		}
	}
	return listen
}

// install makes t's provider and propagator the process's, and sends the
// SDK's errors (an exporter that cannot reach its collector) to log.
func (t *tracing) install(log *slog.Logger) {
	otel.SetTracerProvider(t.provider)
	otel.SetTextMapPropagator(t.propagator)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing failed", "err", err.Error())
	}))
}

// shutdown flushes the spans still queued and stops the exporters; off,
// it does nothing.
func (t *tracing) shutdown(log *slog.Logger) {
	if t == nil || t.provider == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
	defer cancel()
	if err := t.provider.Shutdown(ctx); err != nil {
		log.Warn("tracing: flushing spans at exit failed", "err", err.Error())
	}
}
