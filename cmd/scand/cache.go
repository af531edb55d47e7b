package main

import (
	"flag"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scand/scand/iosched/rangecache"
)

// cacheFlags configure the page cache of object-store data
// (iosched/rangecache, docs/cache.md). It is on whenever --cache-dir is
// given (or a memory tier is asked for alone).
type cacheFlags struct {
	dir      string
	size     byteSize // disk tier
	memory   byteSize // memory tier and disk write queue, taken out of --io-memory's prefetch share
	pageSize byteSize
}

// defaultCacheSize is the disk tier's bound when --cache-dir is given
// without --cache-size.
const defaultCacheSize = 10 << 30

func defineCacheFlags(fs *flag.FlagSet, c *cacheFlags) {
	fs.StringVar(&c.dir, "cache-dir", "", "`directory` of the local-disk page cache of object-store data (empty: no disk cache); scand owns its contents")
	fs.Var(&c.size, "cache-size", "`size` bound of --cache-dir, page files included (0 = 10GiB)")
	fs.Var(&c.memory, "cache-memory", "`size` of --io-memory the page cache holds pages in (its memory tier, and the pages queued for writing to --cache-dir), taken from the prefetch share (0 = an eighth of --io-memory with --cache-dir, none without)")
	fs.Var(&c.pageSize, "cache-page-size", "`size` of a cached page: the unit fetched and stored (0 = 1MiB)")
}

// memoryTier is the page cache's memory (its memory tier and its disk
// write queue, rangecache.Options.MemoryBytes) out of a prefetch budget of prefetch
// bytes out of total (--io-memory): as asked, else an eighth of total with
// a disk tier, never more than half the prefetch budget, so prefetching
// keeps room.
func (c cacheFlags) memoryTier(total, prefetch int64) int64 {
	m := int64(c.memory)
	if m == 0 && c.dir != "" {
		m = total / 8
	}
	return max(0, min(m, prefetch/2))
}

// openCache opens the page cache, or returns nil when none is configured.
// A directory that cannot be used is a warning, not a failure: scans then
// read from the store, uncached on disk.
func (c cacheFlags) open(memory int64, log *slog.Logger) *rangecache.Cache {
	if c.dir == "" && memory == 0 {
		return nil
	}
	opts := rangecache.Options{MemoryBytes: memory, PageSize: int64(c.pageSize), Logger: log}
	if c.dir != "" {
		opts.Dir, opts.DiskBytes = c.dir, int64(c.size)
		if opts.DiskBytes <= 0 {
			opts.DiskBytes = defaultCacheSize
		}
	}
	pc, err := rangecache.Open(opts)
	if err != nil && c.dir != "" {
		log.Warn("page cache: disk tier off", "dir", c.dir, "err", err)
		if memory == 0 {
			return nil
		}
		opts.Dir = ""
		pc, err = rangecache.Open(opts)
	}
	if err != nil {
		log.Warn("page cache off", "err", err)
		return nil
	}
	log.Info("page cache on", "dir", c.dir, "disk_bytes", opts.DiskBytes, "memory_bytes", memory, "page_bytes", pc.PageSize())
	return pc
}

// registerPageCache exports the page cache's counters (docs/cache.md).
func registerPageCache(reg prometheus.Registerer, pc *rangecache.Cache) {
	counter := func(name, help string, labels prometheus.Labels, v func(rangecache.Stats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(v(pc.Stats())) })
	}
	gauge := func(name, help string, labels prometheus.Labels, v func(rangecache.Stats) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(v(pc.Stats())) })
	}
	mem, disk := prometheus.Labels{"tier": "memory"}, prometheus.Labels{"tier": "disk"}
	reg.MustRegister(
		counter("scand_cache_hits_total", "Pages read from the page cache, per tier.", mem, func(s rangecache.Stats) int64 { return s.MemHits }),
		counter("scand_cache_hits_total", "Pages read from the page cache, per tier.", disk, func(s rangecache.Stats) int64 { return s.DiskHits }),
		counter("scand_cache_hit_bytes_total", "Bytes of pages read from the page cache, per tier.", mem, func(s rangecache.Stats) int64 { return s.MemHitBytes }),
		counter("scand_cache_hit_bytes_total", "Bytes of pages read from the page cache, per tier.", disk, func(s rangecache.Stats) int64 { return s.DiskHitBytes }),
		counter("scand_cache_misses_total", "Pages looked up and not found, per tier (a memory miss is then looked up on disk).", mem, func(s rangecache.Stats) int64 { return s.MemMisses }),
		counter("scand_cache_misses_total", "Pages looked up and not found, per tier (a memory miss is then looked up on disk).", disk, func(s rangecache.Stats) int64 { return s.DiskMisses }),
		counter("scand_cache_miss_bytes_total", "Bytes of pages looked up and not found, per tier.", mem, func(s rangecache.Stats) int64 { return s.MemMissBytes }),
		counter("scand_cache_miss_bytes_total", "Bytes of pages looked up and not found, per tier.", disk, func(s rangecache.Stats) int64 { return s.DiskMissBytes }),
		counter("scand_cache_evictions_total", "Pages evicted, per tier.", mem, func(s rangecache.Stats) int64 { return s.MemEvictions }),
		counter("scand_cache_evictions_total", "Pages evicted, per tier.", disk, func(s rangecache.Stats) int64 { return s.DiskEvictions }),
		gauge("scand_cache_bytes", "Bytes held by the page cache, per tier.", mem, func(s rangecache.Stats) int64 { return s.MemBytes }),
		gauge("scand_cache_bytes", "Bytes held by the page cache, per tier.", disk, func(s rangecache.Stats) int64 { return s.DiskBytes }),
		counter("scand_cache_fetches_total", "Storage requests the page cache made for missing pages.", nil, func(s rangecache.Stats) int64 { return s.Fetches }),
		counter("scand_cache_fetched_bytes_total", "Bytes of missing pages fetched from storage.", nil, func(s rangecache.Stats) int64 { return s.FetchedBytes }),
		counter("scand_cache_shared_pages_total", "Pages a read waited for while another read fetched them, instead of fetching them again.", nil, func(s rangecache.Stats) int64 { return s.Shared }),
		counter("scand_cache_written_bytes_total", "Bytes of page files written to the disk tier.", nil, func(s rangecache.Stats) int64 { return s.DiskWrittenBytes }),
		counter("scand_cache_writes_dropped_total", "Pages not written to disk because the writer was behind (its queue, part of --cache-memory, had no room).", nil, func(s rangecache.Stats) int64 { return s.DiskWritesDropped }),
		gauge("scand_cache_write_queue_bytes", "Bytes of pages queued for the disk tier or being written, part of --cache-memory.", nil, func(s rangecache.Stats) int64 { return s.WriteQueueBytes }),
		counter("scand_cache_corrupt_pages_total", "Page files that failed verification (torn, corrupt), dropped and fetched again.", nil, func(s rangecache.Stats) int64 { return s.CorruptPages }),
		counter("scand_cache_disk_failures_total", "Disk errors (full, unwritable, failing, slow) that turned the disk tier off for a while.", nil, func(s rangecache.Stats) int64 { return s.DiskFailures }),
		counter("scand_cache_stale_versions_total", "Cached object versions dropped because a newer version was read.", nil, func(s rangecache.Stats) int64 { return s.StaleVersions }),
	)
}
