package iceberg

import (
	"sync"

	"github.com/apache/iceberg-go/table"

	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// PlanCache keeps what planning a snapshot of a table found (iceberg-go's
// file scan tasks, the metadata objects read, the plan's counts), keyed by
// the metadata file and its version, the snapshot, the schema and the
// pruning filter.
// A snapshot's manifest list and manifests are immutable, so a later scan of
// the same snapshot with the same pruning filter plans the same tasks: it
// skips reading and decoding every manifest (most of a table's planning, and
// on an object store one round trip per manifest). The metadata file is
// still read on every scan, so a commit is seen at once.
//
// The cache is safe for concurrent use; entries are evicted least recently
// used beyond a bound on their files.
type PlanCache struct {
	mu       sync.Mutex
	maxFiles int
	files    int
	tick     uint64
	entries  map[planKey]*planEntry
}

type planKey struct {
	metadata, version string
	size              int64
	snapshot          int64
	// schema is the schema the filter's names are bound in: a snapshot
	// read by id may use an older schema than the same snapshot read as
	// the current one.
	schema int
	filter string
}

type planEntry struct {
	tasks []table.FileScanTask
	read  []string
	// infos are what the stats of read found when the plan was made, a
	// link's target included: a later caller is authorized against them.
	infos []storage.Info
	plan  source.TablePlan
	used  uint64
}

// NewPlanCache returns a cache holding the plans of at most maxFiles data
// files in all (each costs about a kilobyte: its path, statistics and
// deletes); maxFiles <= 0 caches nothing.
func NewPlanCache(maxFiles int) *PlanCache {
	return &PlanCache{maxFiles: maxFiles, entries: make(map[planKey]*planEntry)}
}

// get returns a cached plan. A nil cache has none.
func (c *PlanCache) get(k planKey) (*planEntry, bool) {
	if c == nil || k.version == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if ok {
		c.tick++
		e.used = c.tick
	}
	return e, ok
}

// put keeps a plan, evicting the least recently used beyond the bound. A
// plan over the whole bound is not kept; neither is one of a metadata file
// whose version the storage cannot tell.
func (c *PlanCache) put(k planKey, e *planEntry) {
	n := max(len(e.tasks), 1)
	if c == nil || k.version == "" || n > c.maxFiles {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[k]; ok {
		c.files -= max(len(old.tasks), 1)
	}
	c.tick++
	e.used = c.tick
	c.entries[k] = e
	c.files += n
	for c.files > c.maxFiles {
		var oldest planKey
		var oldestUsed uint64
		first := true
		for key, v := range c.entries {
			if first || v.used < oldestUsed {
				oldest, oldestUsed, first = key, v.used, false
			}
		}
		c.files -= max(len(c.entries[oldest].tasks), 1)
		delete(c.entries, oldest)
	}
}
