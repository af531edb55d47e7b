package iosched

import (
	"container/list"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/scand/scand/storage"
)

// DefaultMetaCacheBytes bounds the metadata cache.
const DefaultMetaCacheBytes = 64 << 20

// metaCache is an LRU of parsed file metadata (Parquet footers, ORC
// footers), bounded by the entries' declared sizes. Keys include the
// object's size and version, so a replaced file never hits a stale entry.
// It is safe for concurrent use.
type metaCache struct {
	mu    sync.Mutex
	limit int64
	used  int64
	ll    *list.List
	items map[string]*list.Element
	// objects holds, per object by its name and size whatever the
	// version (objectKey), how many entries it has and the version of the
	// newest: the version an Open by size alone reopens it at
	// (Scheduler.versioned).
	objects map[string]objectEntries
	hits    atomic.Int64
	// misses counts lookups that found nothing (the reader then fetches
	// and parses the footer).
	misses atomic.Int64
}

type objectEntries struct {
	n       int
	version string
}

type cacheEntry struct {
	key, object, version string
	val                  any
	size                 int64
}

func newMetaCache(limit int64) *metaCache {
	return &metaCache{limit: limit, ll: list.New(), items: map[string]*list.Element{}, objects: map[string]objectEntries{}}
}

// versionOf returns the version of the newest entry of the object name of
// size bytes, if the cache holds any.
func (c *metaCache) versionOf(name string, size int64) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.objects[objectKey(name, size)]
	return o.version, ok
}

func (c *metaCache) get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.ll.MoveToFront(e)
		c.hits.Add(1)
		return e.Value.(*cacheEntry).val, true
	}
	c.misses.Add(1)
	return nil, false
}

// MetaCacheLookups returns how many metadata lookups the cache answered
// (hits) and how many it did not (misses), since the scheduler was made.
// Objects without a version are never looked up, so count in neither.
func (s *Scheduler) MetaCacheLookups() (hits, misses int64) {
	return s.cache.hits.Load(), s.cache.misses.Load()
}

func (c *metaCache) put(key, object, version string, val any, size int64) {
	if size > c.limit/4 {
		return // one huge footer must not flush everything else
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.remove(e)
	}
	c.items[key] = c.ll.PushFront(&cacheEntry{key: key, object: object, val: val, size: size, version: version})
	c.objects[object] = objectEntries{n: c.objects[object].n + 1, version: version}
	c.used += size
	for c.used > c.limit {
		c.remove(c.ll.Back())
	}
}

// remove drops e; the caller holds c.mu.
func (c *metaCache) remove(e *list.Element) {
	ent := e.Value.(*cacheEntry)
	c.ll.Remove(e)
	delete(c.items, ent.key)
	if o := c.objects[ent.object]; o.n <= 1 {
		delete(c.objects, ent.object)
	} else {
		o.n--
		c.objects[ent.object] = o
	}
	c.used -= ent.size
}

func objectKey(name string, size int64) string {
	return name + "\x00" + strconv.FormatInt(size, 10)
}

func cacheKey(kind string, info storage.Info) string {
	return kind + "\x00" + objectKey(info.Name, info.Size) + "\x00" + info.Version
}

// CachedMetadata returns what a reader stored for this exact object
// (name, size and version) under kind. It implements scanner.MetadataCache.
// An object opened without its version (S3 by its size alone) knows it
// once it has read, so its footer is cached for the next Open that names
// the version (a stream's ticket), though not found before its first read.
func (f *File) CachedMetadata(kind string) (any, bool) {
	info := f.Info()
	if info.Version == "" {
		return nil, false
	}
	v, ok := f.sched.cache.get(cacheKey(kind, info))
	if ok {
		f.io.cacheHits.Add(1)
	}
	return v, ok
}

// CacheMetadata stores parsed metadata of this object; size is what it
// costs in memory, roughly. The value must be safe for concurrent reads.
func (f *File) CacheMetadata(kind string, v any, size int64) {
	info := f.Info()
	if info.Version == "" {
		return
	}
	f.sched.cache.put(cacheKey(kind, info), objectKey(info.Name, info.Size), info.Version, v, size)
}
