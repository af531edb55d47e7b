package delta

import (
	"slices"
	"sync"

	"github.com/scand/scand/source"
)

// Cache holds the snapshots and listings of recently read table versions,
// shared by every scan of a server: a version read again replays nothing,
// and a newer version of a cached table replays only the commits after
// the newest cached version below it. Entries are keyed by table location
// and version, and checked against the head of that version in the
// current listing (its commit's name, size and version), so a table
// written anew at the same place is never answered from an old entry.
// Memory is bounded by an estimate of what the entries hold.
type Cache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	tick    uint64
	entries map[cacheKey]*cacheEntry
}

type cacheKey struct {
	location string
	version  int64
}

type cacheEntry struct {
	head    string
	snap    *snapshot
	listing *source.Listing
	bytes   int64
	used    uint64
}

// NewCache returns a cache holding entries of about maxBytes in all.
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: maxBytes, entries: make(map[cacheKey]*cacheEntry)}
}

// perFileBytes estimates what one file costs an entry beyond its strings:
// the add action, map entries, the listing's File with its statistics.
const perFileBytes = 600

func (c *Cache) entry(location string, version int64, head string) *cacheEntry {
	e := c.entries[cacheKey{location, version}]
	if e == nil || e.head != head {
		return nil
	}
	c.tick++
	e.used = c.tick
	return e
}

func (c *Cache) listing(location string, version int64, head string) (*source.Listing, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entry(location, version, head); e != nil && e.listing != nil {
		return e.listing, true
	}
	return nil, false
}

// snapshotBelow returns the newest cached snapshot of location at or
// below version and above the checkpoint replay would start from, whose
// head the listing still shows; nil when there is none.
func (c *Cache) snapshotBelow(location string, version, cpVersion int64, ix logIndex) *snapshot {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *cacheEntry
	for k, e := range c.entries {
		if k.location != location || k.version > version || k.version < cpVersion || e.snap == nil {
			continue
		}
		if best == nil || k.version > best.snap.version {
			if e.head == ix.head(k.version) {
				best = e
			}
		}
	}
	if best == nil {
		return nil
	}
	c.tick++
	best.used = c.tick
	return best.snap
}

func (c *Cache) putSnapshot(location string, version int64, head string, s *snapshot) {
	if c == nil {
		return
	}
	var n int64
	for p, a := range s.files {
		n += int64(len(p)+len(a.Path)+len(a.Stats)) + perFileBytes
	}
	c.put(location, version, head, func(e *cacheEntry) { e.snap = s }, n)
}

func (c *Cache) putListing(location string, version int64, head string, l *source.Listing) {
	if c == nil {
		return
	}
	var n int64
	for _, f := range l.Files {
		n += int64(len(f.Object.Name)) + perFileBytes
	}
	c.put(location, version, head, func(e *cacheEntry) { e.listing = l }, n)
}

func (c *Cache) put(location string, version int64, head string, set func(*cacheEntry), n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > c.max {
		return
	}
	k := cacheKey{location, version}
	e := c.entries[k]
	if e == nil || e.head != head {
		if e != nil {
			c.size -= e.bytes
		}
		e = &cacheEntry{head: head}
		c.entries[k] = e
	}
	set(e)
	e.bytes += n
	c.size += n
	c.tick++
	e.used = c.tick
	for c.size > c.max {
		var oldest cacheKey
		var old *cacheEntry
		for k2, e2 := range c.entries {
			if e2 != e && (old == nil || e2.used < old.used) {
				oldest, old = k2, e2
			}
		}
		if old == nil {
			break
		}
		delete(c.entries, oldest)
		c.size -= old.bytes
	}
}

// cloneListing copies what a caller may change of a cached listing: the
// Files slice (each File's slices and maps are shared, and read only).
func cloneListing(l *source.Listing) *source.Listing {
	c := *l
	c.Files = slices.Clone(l.Files)
	c.Partitions = slices.Clone(l.Partitions)
	return &c
}
