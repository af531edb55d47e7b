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
			Help: "--io-memory: what scans may hold, prefetched bytes and decoding streams together.",
		}, func() float64 { return float64(s.sched.Options().Memory) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_io_prefetch_budget_bytes",
			Help: "The part of --io-memory that bounds prefetched, unconsumed bytes.",
		}, func() float64 { return float64(s.sched.PrefetchBudget()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_decode_memory_budget_bytes",
			Help: "The part of --io-memory for decoding streams' working memory (0: no admission control).",
		}, func() float64 { return float64(s.sched.Admission().Capacity) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_decode_memory_bytes",
			Help: "Estimated working memory of the streams admitted to decode now.",
		}, func() float64 { return float64(s.sched.Admission().InUse) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_decode_memory_peak_bytes",
			Help: "Most estimated decode memory admitted at once since start.",
		}, func() float64 { return float64(s.sched.Admission().Peak) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_streams_decoding",
			Help: "DoGet streams admitted to decode now.",
		}, func() float64 { return float64(s.sched.Admission().Streams) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "scand_streams_waiting",
			Help: "DoGet streams waiting for decode memory.",
		}, func() float64 { return float64(s.sched.Admission().Waiting) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "scand_admission_overcommits_total",
			Help: "Streams admitted over the decode memory because every admitted stream was blocked on its client (a client not reading streams it opened).",
		}, func() float64 { return float64(s.sched.Admission().Overcommits) }),
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
