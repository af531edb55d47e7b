package parquet

import (
	"container/list"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The files of a table, or of a directory one job wrote, nearly always
// share one schema: the same schema elements and the same key-value
// metadata (the stored Arrow schema). What Open derives from those alone
// (pqarrow's schema manifest, built twice and decoding the stored Arrow
// schema each time, the Arrow schema Open reports, and Project's schemas
// of selected leaves) is then the same for every file. A plan of 500 such
// files that builds it 500 times spent a fifth of its CPU there.
//
// shapes keeps it by shapeKey (footershape.go), the encoded bytes it is
// derived from, so that equal keys derive equal values: a file whose key
// is known decodes its own footer (row groups, statistics) and takes the
// rest from its shape. Like footerEntry's, a shape's fields are read-only
// once made and shared by every File of that shape; only selected grows.
//
// The memo is the process's, as the page pools are (pool.go), bounded by
// shapeMemoBytes of estimated size, least recently used first out. It is
// not charged to a plan: a plan reserves each footer's decoded size, a
// shape's included, before decoding (reserveMetadata).

// shapeMemoBytes bounds the shapes kept.
const shapeMemoBytes = 16 << 20

// shape is what Open derives from a footer's shapeKey.
type shape struct {
	manifest, readManifest *pqarrow.SchemaManifest
	schema                 *arrow.Schema

	mu sync.Mutex
	// selected are Project's schemas of selections of leaves, by
	// selectionKey, up to maxSelections.
	selected map[string]*arrow.Schema
}

// selectedSchema is the schema Project derived for key, or nil.
func (s *shape) selectedSchema(key string) *arrow.Schema {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.selected[key]
}

// rememberSelected keeps sc as the schema of the selection key.
func (s *shape) rememberSelected(key string, sc *arrow.Schema) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.selected == nil {
		s.selected = map[string]*arrow.Schema{}
	}
	if _, ok := s.selected[key]; ok || len(s.selected) < maxSelections {
		s.selected[key] = sc
	}
}

// shapeMemo is an LRU of shapes by shapeKey, safe for concurrent use.
type shapeMemo struct {
	mu    sync.Mutex
	limit int64
	used  int64
	ll    *list.List
	items map[string]*list.Element
}

type shapeItem struct {
	key  string
	s    *shape
	size int64
}

var shapes = newShapeMemo(shapeMemoBytes)

func newShapeMemo(limit int64) *shapeMemo {
	return &shapeMemo{limit: limit, ll: list.New(), items: map[string]*list.Element{}}
}

// get returns the shape of key, or nil.
func (m *shapeMemo) get(key string) *shape {
	if key == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.items[key]
	if !ok {
		return nil
	}
	m.ll.MoveToFront(e)
	return e.Value.(*shapeItem).s
}

// put keeps s as key's shape, unless one is kept already (which it
// returns) or s would take more than a quarter of the memo.
func (m *shapeMemo) put(key string, s *shape, columns int) *shape {
	size := int64(len(key)) + footerEntryBytesPerColumn*int64(columns)
	if key == "" || size > m.limit/4 {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.items[key]; ok {
		m.ll.MoveToFront(e)
		return e.Value.(*shapeItem).s
	}
	m.items[key] = m.ll.PushFront(&shapeItem{key: key, s: s, size: size})
	m.used += size
	for m.used > m.limit {
		last := m.ll.Back()
		it := last.Value.(*shapeItem)
		m.ll.Remove(last)
		delete(m.items, it.key)
		m.used -= it.size
	}
	return s
}
