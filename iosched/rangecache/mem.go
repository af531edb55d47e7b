package rangecache

import "sync"

// memTier holds pages in memory, within its share of the IO memory budget.
// It is safe for concurrent use.
type memTier struct {
	mu       sync.Mutex
	pol      *s3fifo
	pages    map[pageKey]memPage
	versions versionSet
	evicted  int64
}

// memPage is a page held in memory, with its key sum, so that a page
// evicted before the disk tier wrote it can be offered to the disk again.
type memPage struct {
	key  pageKey
	sum  keySum
	data []byte
}

func newMemTier(capacity int64) *memTier {
	return &memTier{pol: newS3FIFO(capacity), pages: map[pageKey]memPage{}, versions: versionSet{}}
}

// get returns the page, or nil. The slice is shared and never written.
func (m *memTier) get(k pageKey) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.pol.hit(k) {
		return nil
	}
	return m.pages[k].data
}

// peek returns the page, or nil, without counting a read.
func (m *memTier) peek(k pageKey) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pages[k].data
}

// put admits a page (data is kept, not copied: it must not be written)
// and returns the pages it evicted to make room.
func (m *memTier) put(k pageKey, sum keySum, data []byte) (evicted []memPage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pol.contains(k) {
		return nil
	}
	ev := m.pol.add(k, int64(len(data)), false)
	for _, e := range ev {
		if mp, ok := m.pages[e]; ok {
			evicted = append(evicted, mp)
		}
		delete(m.pages, e)
		m.versions.del(e)
	}
	m.evicted += int64(len(ev))
	if m.pol.contains(k) {
		m.pages[k] = memPage{key: k, sum: sum, data: data}
		m.versions.add(k)
	}
	return evicted
}

// dropStale removes the pages of obj's versions other than ver and
// returns how many versions it dropped.
func (m *memTier) dropStale(obj, ver uint64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	stale := m.versions.others(obj, ver)
	if len(stale) == 0 {
		return 0
	}
	for k := range m.pages {
		if k.obj == obj && stale[k.ver] {
			m.pol.remove(k)
			delete(m.pages, k)
			m.versions.del(k)
		}
	}
	return len(stale)
}

func (m *memTier) stats() (bytes, evictions int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pol.bytes(), m.evicted
}

// versionSet counts the pages held per object version, so that a read of
// a new version finds and drops the old one's pages at once.
type versionSet map[uint64]map[uint64]int

func (v versionSet) add(k pageKey) {
	m := v[k.obj]
	if m == nil {
		m = map[uint64]int{}
		v[k.obj] = m
	}
	m[k.ver]++
}

func (v versionSet) del(k pageKey) {
	m := v[k.obj]
	if m == nil {
		return
	}
	if m[k.ver]--; m[k.ver] <= 0 {
		delete(m, k.ver)
	}
	if len(m) == 0 {
		delete(v, k.obj)
	}
}

// others returns obj's versions held other than ver.
func (v versionSet) others(obj, ver uint64) map[uint64]bool {
	var out map[uint64]bool
	for w := range v[obj] {
		if w != ver {
			if out == nil {
				out = map[uint64]bool{}
			}
			out[w] = true
		}
	}
	return out
}
