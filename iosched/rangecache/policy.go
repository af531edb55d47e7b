package rangecache

import "container/list"

// s3fifo is the eviction policy of both tiers: S3-FIFO (Yang et al., "FIFO
// queues are all you need for cache eviction", SOSP 2023), weighted by
// bytes. It is a pure value: no locks, no IO; the tiers hold their lock
// around it and act on the keys it evicts.
//
// New pages enter a small FIFO (a tenth of the capacity). A page read
// again while there moves to the main FIFO when it reaches the small
// queue's head; a page read only once leaves, its key kept in a ghost
// FIFO, so a one-off scan passes through the small queue without
// touching the main one. A page fetched again while its key is a ghost
// goes straight to main. Main is a FIFO with reinsertion: a page read
// since it was last at the head goes round again (its count decremented,
// at most 3), else it is evicted.
//
// Why S3-FIFO rather than TinyLFU admission: it resists scans as well on
// block workloads, needs no frequency sketch (nothing to rebuild or lose
// on restart: the disk tier's files, oldest first, are the main queue),
// and its queues are FIFOs, which suits a directory of page files.
type s3fifo struct {
	capacity    int64
	small, main list.List // of *entry, head = oldest
	ghost       list.List // of ghostEntry
	smallBytes  int64
	mainBytes   int64
	ghostBytes  int64
	entries     map[pageKey]*list.Element
	ghosts      map[pageKey]*list.Element
}

type entry struct {
	key   pageKey
	size  int64
	freq  int8
	small bool
}

type ghostEntry struct {
	key  pageKey
	size int64
}

const maxFreq = 3

func newS3FIFO(capacity int64) *s3fifo {
	return &s3fifo{capacity: capacity, entries: map[pageKey]*list.Element{}, ghosts: map[pageKey]*list.Element{}}
}

// bytes is the weight held.
func (c *s3fifo) bytes() int64 { return c.smallBytes + c.mainBytes }

func (c *s3fifo) contains(k pageKey) bool { _, ok := c.entries[k]; return ok }

// hit records a read of k and reports whether k is held.
func (c *s3fifo) hit(k pageKey) bool {
	el, ok := c.entries[k]
	if ok {
		e := el.Value.(*entry)
		e.freq = min(e.freq+1, maxFreq)
	}
	return ok
}

// add inserts k of size bytes (a no-op when held, or when it can never fit)
// and returns the keys evicted to make room, oldest first. toMain puts it
// straight into the main queue (the disk tier's files at restart).
func (c *s3fifo) add(k pageKey, size int64, toMain bool) (evicted []pageKey) {
	if _, ok := c.entries[k]; ok || size > c.capacity || size < 0 {
		return nil
	}
	if g, ok := c.ghosts[k]; ok {
		c.dropGhost(g)
		toMain = true
	}
	for c.bytes()+size > c.capacity {
		evicted = append(evicted, c.evict())
	}
	e := &entry{key: k, size: size, small: !toMain}
	if toMain {
		c.entries[k] = c.main.PushBack(e)
		c.mainBytes += size
	} else {
		c.entries[k] = c.small.PushBack(e)
		c.smallBytes += size
	}
	return evicted
}

// remove drops k (a page found corrupt, or of a stale version).
func (c *s3fifo) remove(k pageKey) bool {
	el, ok := c.entries[k]
	if !ok {
		return false
	}
	e := el.Value.(*entry)
	delete(c.entries, k)
	if e.small {
		c.small.Remove(el)
		c.smallBytes -= e.size
	} else {
		c.main.Remove(el)
		c.mainBytes -= e.size
	}
	return true
}

// evict removes one page and returns its key. Callers make sure one is held.
func (c *s3fifo) evict() pageKey {
	for {
		if c.small.Len() > 0 && (c.smallBytes >= c.capacity/10 || c.main.Len() == 0) {
			el := c.small.Front()
			e := el.Value.(*entry)
			c.small.Remove(el)
			c.smallBytes -= e.size
			if e.freq > 0 {
				e.freq, e.small = 0, false
				c.entries[e.key] = c.main.PushBack(e)
				c.mainBytes += e.size
				continue
			}
			delete(c.entries, e.key)
			c.addGhost(e.key, e.size)
			return e.key
		}
		el := c.main.Front()
		e := el.Value.(*entry)
		if e.freq > 0 {
			e.freq--
			c.main.MoveToBack(el)
			continue
		}
		c.main.Remove(el)
		c.mainBytes -= e.size
		delete(c.entries, e.key)
		return e.key
	}
}

// addGhost remembers an evicted key; the ghosts weigh at most the capacity.
func (c *s3fifo) addGhost(k pageKey, size int64) {
	c.ghosts[k] = c.ghost.PushBack(ghostEntry{key: k, size: size})
	c.ghostBytes += size
	for c.ghostBytes > c.capacity {
		c.dropGhost(c.ghost.Front())
	}
}

func (c *s3fifo) dropGhost(el *list.Element) {
	g := el.Value.(ghostEntry)
	c.ghost.Remove(el)
	c.ghostBytes -= g.size
	delete(c.ghosts, g.key)
}
