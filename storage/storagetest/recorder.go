package storagetest

import (
	"context"
	"sync"

	"github.com/scand/scand/storage"
)

// Recorder is a Bucket that records what its Stat and Open are asked, in
// order, so that a test can say which objects were stat'ed (a HEAD each
// on an object store) and what an object was opened by (a size and
// version spare a store the HEAD).
type Recorder struct {
	storage.Bucket
	mu    sync.Mutex
	stats []string
	opens []storage.Info
}

// Record returns a Recorder over b.
func Record(b storage.Bucket) *Recorder { return &Recorder{Bucket: b} }

// Stat implements storage.Bucket.
func (r *Recorder) Stat(ctx context.Context, name string) (storage.Info, error) {
	r.mu.Lock()
	r.stats = append(r.stats, name)
	r.mu.Unlock()
	return r.Bucket.Stat(ctx, name)
}

// Open implements storage.Bucket.
func (r *Recorder) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	r.mu.Lock()
	r.opens = append(r.opens, info)
	r.mu.Unlock()
	return r.Bucket.Open(ctx, info)
}

// Stats returns the names Stat was asked, in order.
func (r *Recorder) Stats() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.stats...)
}

// Opens returns the Infos Open was given, in order.
func (r *Recorder) Opens() []storage.Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]storage.Info(nil), r.opens...)
}
