package server

import (
	"github.com/scand/scand/planner/planmem"

	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/admission"
)

// registerMetrics exports the scan counters and the memory gauges of the
// scheduler and admission. Storage request metrics come from the storage
// wrapper, per backend, and the scheduler's per-backend holes from
// cmd/scand, which knows the backends.
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
	s.sentBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "scand_sent_bytes_total",
		Help: "Arrow data bytes of the record batches sent to clients (buffer bytes the batches use, before IPC framing and compression).",
	})
	s.rowsFiltered = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "scand_rows_filtered_total",
		Help: "Rows decoded and then dropped by a scan's filter.",
	})
	s.pruned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scand_pruned_total",
		Help: "What planning pruned by a filter before reading it, by level: partition_files (footers never read), stats_files, row_groups (ORC stripes) by statistics, bloom (row groups or stripes their bloom filters dropped after statistics kept them).",
	}, []string{"level"})
	for _, l := range []string{"partition_files", "stats_files", "row_groups", "bloom"} {
		s.pruned.WithLabelValues(l)
	}
	reg.MustRegister(s.scans, s.rows, s.sentBytes, s.rowsFiltered, s.pruned)
	reg.MustRegister(s.memoryGauges()...)
}

// memoryGauges report the prefetch budget and the decode share.
func (s *Server) memoryGauges() []prometheus.Collector {
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	decode := func(f func(admission.Stats) int64) func() float64 {
		return func() float64 { return float64(f(s.admit.Stats())) }
	}
	return []prometheus.Collector{
		gauge("scand_io_memory_peak_bytes", "Most prefetched, unconsumed bytes held at once since start (bounded by the prefetch budget).",
			func() float64 { return float64(s.sched.PeakMemory()) }),
		gauge("scand_io_memory_budget_bytes", "--io-memory: what scans may hold, prefetched bytes, decoding streams and planning together.",
			func() float64 {
				return float64(s.sched.PrefetchBudget() + s.admit.Stats().Capacity + s.cfg.PlanMemory.Stats().Capacity)
			}),
		gauge("scand_io_prefetch_budget_bytes", "The part of --io-memory that bounds prefetched, unconsumed bytes.",
			func() float64 { return float64(s.sched.PrefetchBudget()) }),
		gauge("scand_decode_memory_budget_bytes", "The part of --io-memory for decoding streams' working memory (0: no admission control).",
			decode(func(st admission.Stats) int64 { return st.Capacity })),
		gauge("scand_decode_memory_bytes", "Estimated working memory of the streams admitted to decode now.",
			decode(func(st admission.Stats) int64 { return st.InUse })),
		gauge("scand_decode_memory_peak_bytes", "Most estimated decode memory admitted at once since start.",
			decode(func(st admission.Stats) int64 { return st.Peak })),
		gauge("scand_streams_decoding", "DoGet streams admitted to decode now.",
			decode(func(st admission.Stats) int64 { return int64(st.Streams) })),
		gauge("scand_streams_waiting", "DoGet streams waiting for decode memory.",
			decode(func(st admission.Stats) int64 { return st.Waiting })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "scand_admission_overcommits_total",
			Help: "Streams admitted over the decode memory because every admitted stream was blocked on its client (a client not reading streams it opened).",
		}, decode(func(st admission.Stats) int64 { return st.Overcommits })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "scand_admission_cuts_total",
			Help: "Streams ended (RESOURCE_EXHAUSTED) to free the decode memory they held while blocked on a client that read nothing, when other streams waited for it.",
		}, decode(func(st admission.Stats) int64 { return st.Cuts })),
	}
}

// countPruned adds a plan's pruning to the counters.
func (s *Server) countPruned(st *scandv1.PlanStats) {
	if s.pruned == nil || st == nil {
		return
	}
	s.pruned.WithLabelValues("partition_files").Add(float64(st.FilesPrunedByPartition))
	s.pruned.WithLabelValues("stats_files").Add(float64(st.FilesPrunedByStats))
	s.pruned.WithLabelValues("row_groups").Add(float64(st.RowGroupsPruned))
	s.pruned.WithLabelValues("bloom").Add(float64(st.RowGroupsPrunedByBloom))
}

func (s *Server) countScan(rows, bytes int64, err error) {
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
	s.sentBytes.Add(float64(bytes))
}

func (s *Server) countFiltered(rows int64) {
	if s.rowsFiltered != nil {
		s.rowsFiltered.Add(float64(rows))
	}
}

// registerPlanMemory exports the planning share's figures (all zero when
// planning is not charged).
func registerPlanMemory(reg prometheus.Registerer, b *planmem.Budget) {
	gauge := func(name, help string, f func(planmem.Stats) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(f(b.Stats())) })
	}
	reg.MustRegister(
		gauge("scand_plan_memory_budget_bytes", "The part of --io-memory for planning (--io-plan-memory): footers being decoded and what plans keep.",
			func(s planmem.Stats) int64 { return s.Capacity }),
		gauge("scand_plan_memory_bytes", "Planning memory charged now.", func(s planmem.Stats) int64 { return s.Used }),
		gauge("scand_plan_memory_peak_bytes", "Most planning memory charged at once since start.", func(s planmem.Stats) int64 { return s.Peak }),
	)
}
