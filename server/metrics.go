package server

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics exports the scheduler's memory and the scan counters.
// Storage request metrics come from the storage wrapper, per backend.
func (s *Server) registerMetrics(reg prometheus.Registerer) {
	s.scans = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scand_scans_total",
		Help: "DoGet streams (one per endpoint) by result: ok, error, canceled.",
	}, []string{"result"})
	for _, r := range []string{"ok", "error", "canceled"} {
		s.scans.WithLabelValues(r)
	}
	s.rows = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "scand_rows_sent_total",
		Help: "Rows sent to clients.",
	})
	reg.MustRegister(s.scans, s.rows,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_io_memory_peak_bytes",
			Help: "Most prefetched, unconsumed bytes held at once since start (bounded by --io-memory).",
		}, func() float64 { return float64(s.sched.PeakMemory()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_io_memory_budget_bytes",
			Help: "The IO scheduler's memory budget.",
		}, func() float64 { return float64(s.sched.Options().Memory) }),
	)
	for backend, name := range map[string]string{"local": "", "s3": "s3://"} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "scand_io_hole_bytes",
			Help:        "Gap below which planned reads are merged, per backend (learned from TTFB x bandwidth unless pinned).",
			ConstLabels: prometheus.Labels{"backend": backend},
		}, func() float64 { return float64(s.sched.Hole(name)) }))
	}
}

func (s *Server) countScan(rows int64, err error) {
	if s.scans == nil {
		return
	}
	switch {
	case err == nil:
		s.scans.WithLabelValues("ok").Inc()
	case errors.Is(err, context.Canceled):
		s.scans.WithLabelValues("canceled").Inc()
	default:
		s.scans.WithLabelValues("error").Inc()
	}
	s.rows.Add(float64(rows))
}
