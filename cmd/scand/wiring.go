package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/planner/planmem"
	"github.com/scand/scand/scanner/parquet"
	"github.com/scand/scand/server"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/azure"
	"github.com/scand/scand/storage/gcs"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/s3"
)

// This file is scand's composition root: the only place that knows which
// storage backends exist. It builds the bucket (the local root and, when
// configured, S3, each behind the storage metrics wrapper), the IO
// scheduler over it, the admission controller, and the server given all
// three.

// decodeShare is what --io-decode-memory and --io-no-admission ask for.
type decodeShare struct {
	// off turns admission control off: every stream decodes at once, and
	// all of --io-memory bounds prefetched bytes.
	off bool
	// bytes is the share; 0 means half of --io-memory.
	bytes int64
}

// memorySplit is --io-memory divided between the scheduler's prefetch
// budget and the admission controller's decode share.
type memorySplit struct {
	prefetch int64 // iosched.Options.Memory
	admit    bool  // false: no admission control
	decode   int64 // the admission controller's capacity, when admit
}

// splitMemory divides total (0: iosched.DefaultMemory) as share asks: the
// decode share is half of it by default and never more than 7/8, so that
// prefetching keeps room; the prefetch budget is the rest.
func splitMemory(total int64, share decodeShare) memorySplit {
	total = cmp.Or(max(total, 0), iosched.DefaultMemory)
	if share.off {
		return memorySplit{prefetch: total}
	}
	decode := min(cmp.Or(share.bytes, total/2), total-total/8)
	if decode <= 0 {
		return memorySplit{prefetch: total} // a share of nothing could admit nobody
	}
	return memorySplit{prefetch: total - decode, admit: true, decode: decode}
}

// planShare is the planning share of --io-memory (total; 0: the
// default), taken from the prefetch budget: explicit, or 1/8 of the total
// by default, and never more than half of prefetch, so that prefetching
// keeps room. Footers, plans' kept state and bloom filters read to prune
// are charged to it (planner/planmem).
func planShare(prefetch, total, explicit int64) int64 {
	total = cmp.Or(max(total, 0), iosched.DefaultMemory)
	return max(min(cmp.Or(explicit, total/8), prefetch/2), 0)
}

// newServer wires a server for f, serving root. reg, when set, receives
// every metric: the server's, the storage wrappers' and the scheduler's
// holes per backend.
func newServer(ctx context.Context, f serveFlags, root string, log *slog.Logger, reg prometheus.Registerer) (*server.Server, error) {
	var sm *storage.Metrics
	if reg != nil {
		sm = storage.NewMetrics(reg)
	}
	bucket, err := newBucket(ctx, root, f, sm)
	if err != nil {
		return nil, err
	}
	sec, err := buildSecurity(f.security, f.listen, log)
	if err != nil {
		return nil, err
	}
	split := splitMemory(f.io.Memory, f.decode)
	plan := planShare(split.prefetch, f.io.Memory, int64(f.planMemory))
	io := f.io
	io.Memory = split.prefetch - plan
	if memTier := f.cache.memoryTier(cmp.Or(max(f.io.Memory, 0), iosched.DefaultMemory), io.Memory); f.cache.dir != "" || memTier > 0 {
		if io.PageCache = f.cache.open(memTier, log); io.PageCache != nil {
			io.Memory -= memTier
			if f.s3 != nil {
				io.PageCacheStore = f.s3.Endpoint
			}
		}
	}
	sched := iosched.New(bucket, io)
	var admit *admission.Controller
	if split.admit {
		admit = admission.New(split.decode, admission.DefaultStuckAfter)
	}
	if reg != nil {
		registerHoles(reg, sched)
		registerMetaCache(reg, sched)
		if io.PageCache != nil {
			registerPageCache(reg, io.PageCache)
		}
	}
	cats, err := openCatalogs(f.catalogs, nil) // catalogs.go
	if err != nil {
		return nil, err
	}
	// Process-wide: the column helpers are shared by every stream.
	parquet.SetDecodeParallelism(f.decodePar)
	return server.New(server.Config{
		DecodeParallelism: f.decodePar,
		Bucket:            bucket,
		Scheduler:         sched,
		Admission:         admit,
		PlanMemory:        planmem.New(plan, "--io-plan-memory"),
		Logger:            log,
		Audit:             f.audit,
		Planning: server.Planning{SplitBytes: int64(f.splitBytes), Timeout: f.planTimeout, MaxIndexBytes: int64(f.maxIndexBytes), LateMaterialization: f.lateMat,
			FooterConcurrency: f.footerConcurrency, FilesAhead: f.filesAhead},
		Limits:      f.limits,
		Version:     version,
		Metrics:     reg,
		SendPath:    f.sendPath,
		Compression: f.compression,
		Security:    sec,
		// Tracing's stats handler, when on (tracing.go).
		ServerOptions: f.grpcOptions,
		Ring:          f.ring,
		Catalogs:      cats,
	})
}

// newBucket mounts the local root as the default and, when configured, S3
// under s3://, Google Cloud Storage under gs:// and Azure Blob Storage
// under az:// (and abfss://, abfs://, wasbs://, wasb://): one mux, so one
// server serves all of them at once.
func newBucket(ctx context.Context, root string, f serveFlags, sm *storage.Metrics) (storage.Bucket, error) {
	var lopts []local.Option
	if f.localRead == local.ReadMmap {
		lopts = append(lopts, local.WithMmap())
	}
	lb, err := local.New(root, lopts...)
	if err != nil {
		return nil, err
	}
	mux := &storage.Mux{Default: storage.WithMetrics(lb, sm, "local")}
	if f.s3 != nil {
		cfg := *f.s3
		if sm != nil {
			cfg.Observe = countRetries(sm.Retries("s3"), cfg.Observe)
		}
		b, err := s3.New(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("S3: %w", err)
		}
		mux.Handle(s3.Scheme, storage.WithMetrics(b, sm, "s3"))
	}
	if f.gcs != nil {
		cfg := *f.gcs
		if sm != nil {
			cfg.Observe = gcs.Observer(retryCounter(sm.Retries("gcs"), gcs.OpRetry, cfg.Observe))
		}
		b, err := gcs.New(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("Google Cloud Storage: %w", err)
		}
		mux.Handle(gcs.Scheme, storage.WithMetrics(b, sm, "gcs"))
	}
	if f.azure != nil {
		cfg := *f.azure
		if sm != nil {
			cfg.Observe = azure.Observer(retryCounter(sm.Retries("azure"), azure.OpRetry, cfg.Observe))
		}
		b, err := azure.New(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("Azure Blob Storage: %w", err)
		}
		mb := storage.WithMetrics(b, sm, "azure")
		mux.Handle(azure.Scheme, mb)
		for _, scheme := range azure.AliasSchemes {
			mux.Handle(scheme, mb) // Canonical turns these into az:// names
		}
	}
	return mux, nil
}

// retryCounter counts a cloud backend's retries (op retryOp), then calls
// next.
func retryCounter[F ~func(string, int64, time.Duration, error)](retries prometheus.Counter, retryOp string, next F) func(string, int64, time.Duration, error) {
	return func(op string, n int64, d time.Duration, err error) {
		if op == retryOp {
			retries.Inc()
		}
		if next != nil {
			next(op, n, d, err)
		}
	}
}

// countRetries counts the S3 client's retries, then calls next.
func countRetries(retries prometheus.Counter, next s3.Observer) s3.Observer {
	return func(op string, n int64, d time.Duration, err error) {
		if op == s3.OpRetry {
			retries.Inc()
		}
		if next != nil {
			next(op, n, d, err)
		}
	}
}

// registerHoles exports the gap the scheduler merges across, per backend
// (S3's too when it is not configured, as always): the scheduler keys its
// latency models by a name's URI scheme, so any name of the backend will do.
func registerHoles(reg prometheus.Registerer, sched *iosched.Scheduler) {
	for backend, name := range map[string]string{"local": "file", "s3": s3.Scheme + "://bucket/key",
		"gcs": gcs.Scheme + "://bucket/key", "azure": azure.Scheme + "://container/key"} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "scand_io_hole_bytes",
			Help:        "Gap below which planned reads are merged, per backend (learned from TTFB x bandwidth unless pinned).",
			ConstLabels: prometheus.Labels{"backend": backend},
		}, func() float64 { return float64(sched.Hole(name)) }))
	}
}

// registerMetaCache exports the metadata cache's lookups: with several
// replicas, placement is what keeps the hit rate up (each file's splits
// go to the replica that has its footer).
func registerMetaCache(reg prometheus.Registerer, sched *iosched.Scheduler) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "scand_meta_cache_hits_total",
			Help: "File metadata (footers) served from the metadata cache.",
		}, func() float64 { h, _ := sched.MetaCacheLookups(); return float64(h) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "scand_meta_cache_misses_total",
			Help: "File metadata lookups the cache could not answer (the footer was read from storage).",
		}, func() float64 { _, m := sched.MetaCacheLookups(); return float64(m) }),
	)
}
