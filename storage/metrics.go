package storage

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the per-backend storage figures scand exports. One set is
// registered per process; WithMetrics wraps each backend with its label.
type Metrics struct {
	requests *prometheus.CounterVec
	failures *prometheus.CounterVec
	duration *prometheus.HistogramVec
	bytes    *prometheus.CounterVec
	retries  *prometheus.CounterVec
}

// NewMetrics registers the storage metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scand_storage_requests_total",
			Help: "Requests sent to storage, by backend and operation (stat, open, list, read).",
		}, []string{"backend", "op"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scand_storage_request_failures_total",
			Help: "Storage requests that failed, other than cancellations and missing objects.",
		}, []string{"backend", "op"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scand_storage_request_duration_seconds",
			Help:    "Latency of storage requests; for reads, until the last byte.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2.5, 14), // 50 us .. ~3 min
		}, []string{"backend", "op"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scand_storage_read_bytes_total",
			Help: "Bytes read from storage.",
		}, []string{"backend"}),
	}
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scand_storage_retries_total",
		Help: "Requests a backend retried (throttling, resets, stalls), fed by the backend itself.",
	}, []string{"backend"})
	reg.MustRegister(m.requests, m.failures, m.duration, m.bytes, m.retries)
	return m
}

// WithMetrics wraps b so that every request is counted under backend.
// Label values are created up front, so each series exists from startup.
func WithMetrics(b Bucket, m *Metrics, backend string) Bucket {
	if m == nil {
		return b
	}
	for _, op := range []string{"stat", "open", "list", "read"} {
		m.requests.WithLabelValues(backend, op)
		m.failures.WithLabelValues(backend, op)
		m.duration.WithLabelValues(backend, op)
	}
	m.bytes.WithLabelValues(backend)
	m.retries.WithLabelValues(backend)
	return &meteredBucket{b: b, m: m, backend: backend}
}

type meteredBucket struct {
	b       Bucket
	m       *Metrics
	backend string
}

func (mb *meteredBucket) observe(op string, start time.Time, err error) {
	mb.m.requests.WithLabelValues(mb.backend, op).Inc()
	mb.m.duration.WithLabelValues(mb.backend, op).Observe(time.Since(start).Seconds())
	if err != nil && !expected(err) {
		mb.m.failures.WithLabelValues(mb.backend, op).Inc()
	}
}

// expected reports errors that are the client's doing, not the store's.
func expected(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}

// Canonical implements Bucket: names are the wrapped bucket's.
func (mb *meteredBucket) Canonical(name string) (string, error) { return mb.b.Canonical(name) }

func (mb *meteredBucket) Stat(ctx context.Context, name string) (Info, error) {
	start := time.Now()
	info, err := mb.b.Stat(ctx, name)
	mb.observe("stat", start, err)
	return info, err
}

func (mb *meteredBucket) Open(ctx context.Context, info Info) (Object, error) {
	start := time.Now()
	obj, err := mb.b.Open(ctx, info)
	mb.observe("open", start, err)
	if err != nil {
		return nil, err
	}
	return &meteredObject{Object: obj, mb: mb}, nil
}

func (mb *meteredBucket) List(ctx context.Context, prefix string, fn func(Info) error) error {
	start := time.Now()
	err := mb.b.List(ctx, prefix, fn)
	mb.observe("list", start, err)
	return err
}

func (mb *meteredBucket) ListPruned(ctx context.Context, prefix string, p Pruning, fn func(Info) error) error {
	start := time.Now()
	err := mb.b.ListPruned(ctx, prefix, p, fn)
	mb.observe("list", start, err)
	return err
}

// meteredObject counts reads; Capabilities, Recheck, Info and Close are
// the inner object's (embedded).
type meteredObject struct {
	Object
	mb *meteredBucket
}

func (o *meteredObject) ReadAt(ctx context.Context, p []byte, off int64) error {
	start := time.Now()
	err := o.Object.ReadAt(ctx, p, off)
	o.mb.observe("read", start, err)
	if err == nil {
		o.mb.m.bytes.WithLabelValues(o.mb.backend).Add(float64(len(p)))
	}
	return err
}

// ReadSpans implements Object; it counts as one read of the whole range
// when the object reads spans in one request (that is what the store
// transferred), and passes the inner object's answer through unchanged.
func (o *meteredObject) ReadSpans(ctx context.Context, spans []Span) error {
	if !o.Capabilities().SpanReads {
		// Span by span: each ReadAt is counted as itself.
		return ReadSpansAt(ctx, o, spans)
	}
	start := time.Now()
	err := o.Object.ReadSpans(ctx, spans)
	o.mb.observe("read", start, err)
	if r, rerr := SpanRange(spans); err == nil && rerr == nil {
		o.mb.m.bytes.WithLabelValues(o.mb.backend).Add(float64(r.End - r.Off))
	}
	return err
}

// Requests returns the request counter of one backend and operation.
func (m *Metrics) Requests(backend, op string) prometheus.Counter {
	return m.requests.WithLabelValues(backend, op)
}

// Failures returns the failure counter of one backend and operation.
func (m *Metrics) Failures(backend, op string) prometheus.Counter {
	return m.failures.WithLabelValues(backend, op)
}

// ReadBytes returns the read bytes counter of one backend.
func (m *Metrics) ReadBytes(backend string) prometheus.Counter {
	return m.bytes.WithLabelValues(backend)
}

// Retries returns the retry counter of one backend, for backends that
// retry inside a request and can report it.
func (m *Metrics) Retries(backend string) prometheus.Counter {
	return m.retries.WithLabelValues(backend)
}
