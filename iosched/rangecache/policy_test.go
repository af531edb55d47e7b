package rangecache

import (
	"container/list"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// modelFIFO is S3-FIFO written as plainly as possible, slices and linear
// searches, for the property test to hold the real one against.
type modelFIFO struct {
	capacity    int64
	small, main []modelEntry
	ghost       []modelEntry
}

type modelEntry struct {
	key  pageKey
	size int64
	freq int8
}

func sum(es []modelEntry) int64 {
	var n int64
	for _, e := range es {
		n += e.size
	}
	return n
}

func find(es []modelEntry, k pageKey) int {
	return slices.IndexFunc(es, func(e modelEntry) bool { return e.key == k })
}

func (m *modelFIFO) hit(k pageKey) bool {
	for _, q := range [][]modelEntry{m.small, m.main} {
		if i := find(q, k); i >= 0 {
			q[i].freq = min(q[i].freq+1, maxFreq)
			return true
		}
	}
	return false
}

func (m *modelFIFO) add(k pageKey, size int64) (ev []pageKey) {
	if find(m.small, k) >= 0 || find(m.main, k) >= 0 || size > m.capacity {
		return nil
	}
	toMain := false
	if i := find(m.ghost, k); i >= 0 {
		m.ghost = slices.Delete(m.ghost, i, i+1)
		toMain = true
	}
	for sum(m.small)+sum(m.main)+size > m.capacity {
		ev = append(ev, m.evict())
	}
	if toMain {
		m.main = append(m.main, modelEntry{key: k, size: size})
	} else {
		m.small = append(m.small, modelEntry{key: k, size: size})
	}
	return ev
}

func (m *modelFIFO) evict() pageKey {
	for {
		if len(m.small) > 0 && (sum(m.small) >= m.capacity/10 || len(m.main) == 0) {
			e := m.small[0]
			m.small = m.small[1:]
			if e.freq > 0 {
				e.freq = 0
				m.main = append(m.main, e)
				continue
			}
			m.ghost = append(m.ghost, e)
			for sum(m.ghost) > m.capacity {
				m.ghost = m.ghost[1:]
			}
			return e.key
		}
		e := m.main[0]
		m.main = m.main[1:]
		if e.freq > 0 {
			e.freq--
			m.main = append(m.main, e)
			continue
		}
		return e.key
	}
}

func (m *modelFIFO) remove(k pageKey) {
	if i := find(m.small, k); i >= 0 {
		m.small = slices.Delete(m.small, i, i+1)
	}
	if i := find(m.main, k); i >= 0 {
		m.main = slices.Delete(m.main, i, i+1)
	}
}

func (m *modelFIFO) keys() []pageKey {
	var ks []pageKey
	for _, e := range append(slices.Clone(m.small), m.main...) {
		ks = append(ks, e.key)
	}
	return ks
}

func (c *s3fifo) keys() []pageKey {
	var ks []pageKey
	for _, q := range []*listOf{{&c.small}, {&c.main}} {
		for el := q.l.Front(); el != nil; el = el.Next() {
			ks = append(ks, el.Value.(*entry).key)
		}
	}
	return ks
}

// TestS3FIFOMatchesModel: random operations on the policy and the model
// give the same hits, evictions and contents, and the policy never holds
// more than its capacity.
func TestS3FIFOMatchesModel(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		capacity := int64(rng.IntN(50) + 1)
		c := newS3FIFO(capacity)
		m := &modelFIFO{capacity: capacity}
		keys := rng.IntN(40) + 2
		for op := range 300 {
			k := pageKey{page: int64(rng.IntN(keys))}
			switch r := rng.IntN(10); {
			case r < 5:
				if got, want := c.hit(k), m.hit(k); got != want {
					t.Fatalf("seed %d op %d: hit(%v) = %v, model %v", seed, op, k, got, want)
				}
			case r < 9:
				size := int64(rng.IntN(int(capacity)/3+2) + 1)
				if got, want := c.add(k, size, false), m.add(k, size); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d op %d: add(%v, %d) evicted %v, model %v", seed, op, k, size, got, want)
				}
			default:
				c.remove(k)
				m.remove(k)
			}
			if got, want := c.keys(), m.keys(); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d op %d: holds %v, model %v", seed, op, got, want)
			}
			if c.bytes() > capacity || c.bytes() != sum(m.small)+sum(m.main) {
				t.Fatalf("seed %d op %d: %d bytes held, capacity %d, model %d", seed, op, c.bytes(), capacity, sum(m.small)+sum(m.main))
			}
			if len(c.entries) != len(c.keys()) || c.ghostBytes > capacity {
				t.Fatalf("seed %d op %d: index out of step with queues", seed, op)
			}
		}
	}
}

// TestS3FIFOScanResistant: a hot set read repeatedly keeps its place
// through a one-off scan four times the cache's size.
func TestS3FIFOScanResistant(t *testing.T) {
	const capacity = 100
	c := newS3FIFO(capacity)
	hot := func() (hits int) {
		for p := range int64(50) {
			k := pageKey{obj: 1, page: p}
			if c.hit(k) {
				hits++
			} else {
				c.add(k, 1, false)
			}
		}
		return hits
	}
	hot()
	hot()
	hot()
	for p := range int64(4 * capacity) {
		k := pageKey{obj: 2, page: p}
		if !c.hit(k) {
			c.add(k, 1, false)
		}
	}
	if hits := hot(); hits < 40 {
		t.Fatalf("hot set kept %d of 50 pages through a scan, want >= 80%%", hits)
	}
}

type listOf struct{ l *list.List }
