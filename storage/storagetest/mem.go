package storagetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scand/scand/storage"
)

// Mem is an in-memory storage.Bucket that keeps the package contract: it is
// the reference backend the acceptance suite runs first, and the fake for
// tests above storage. Names are the map keys as given ("dir/a.parquet", or
// full URIs such as "s3://b/k" when it stands in for an object store); its
// Version is a hash of the content, like an ETag. It is safe for concurrent
// use.
type Mem struct {
	mu      sync.RWMutex
	objects map[string]memObject
	caps    storage.Capabilities // what opened objects declare
}

type memObject struct {
	data    []byte
	version string
	modTime time.Time
}

var _ storage.Bucket = (*Mem)(nil)

// NewMem returns a bucket holding a copy of objects.
func NewMem(objects map[string][]byte) *Mem {
	m := &Mem{objects: map[string]memObject{}}
	for name, data := range objects {
		m.Put(name, data)
	}
	return m
}

// SetCapabilities makes the objects opened from now on declare c: a Mem
// stands for a mapped file or a store with span reads in tests of the
// layers above (its reads are memory copies either way).
func (m *Mem) SetCapabilities(c storage.Capabilities) {
	m.mu.Lock()
	m.caps = c
	m.mu.Unlock()
}

// Put creates or replaces an object with a copy of data.
func (m *Mem) Put(name string, data []byte) {
	sum := sha256.Sum256(data)
	o := memObject{
		data:    append([]byte(nil), data...),
		version: "sha256:" + hex.EncodeToString(sum[:8]),
		modTime: time.Now(),
	}
	m.mu.Lock()
	m.objects[name] = o
	m.mu.Unlock()
}

// Delete removes an object; handles already open keep reading the old
// content.
func (m *Mem) Delete(name string) {
	m.mu.Lock()
	delete(m.objects, name)
	m.mu.Unlock()
}

// check refuses names that leave the root, as the contract requires. Names
// with a scheme are keys of an object store and taken literally, and so are
// other names: Mem does not clean "a/../b" into "b".
func check(name string) error {
	if strings.Contains(name, "://") {
		return nil
	}
	if strings.HasPrefix(name, "/") || escapes(name) {
		return fmt.Errorf("%q leaves the bucket's root: %w", name, fs.ErrPermission)
	}
	return nil
}

// escapes reports whether a relative slash path climbs above its start.
func escapes(name string) bool {
	depth := 0
	for _, seg := range strings.Split(name, "/") {
		switch seg {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

func (m *Mem) lookup(name string) (memObject, error) {
	if err := check(name); err != nil {
		return memObject{}, err
	}
	m.mu.RLock()
	o, ok := m.objects[name]
	m.mu.RUnlock()
	if !ok {
		return memObject{}, fmt.Errorf("%q: %w", name, fs.ErrNotExist)
	}
	return o, nil
}

func (o memObject) info(name string) storage.Info {
	return storage.Info{Name: name, Size: int64(len(o.data)), Version: o.version, ModTime: o.modTime}
}

// Stat implements storage.Bucket.
func (m *Mem) Stat(ctx context.Context, name string) (storage.Info, error) {
	if err := ctx.Err(); err != nil {
		return storage.Info{}, err
	}
	o, err := m.lookup(name)
	if err != nil {
		return storage.Info{}, err
	}
	return o.info(name), nil
}

// Open implements storage.Bucket.
func (m *Mem) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o, err := m.lookup(info.Name)
	if err != nil {
		return nil, err
	}
	if info.Version != "" && info.Version != o.version {
		return nil, fmt.Errorf("%q: %w", info.Name, storage.ErrChanged)
	}
	m.mu.RLock()
	caps := m.caps
	m.mu.RUnlock()
	return &memHandle{m: m, data: o.data, info: o.info(info.Name), caps: caps}, nil
}

// Canonical implements storage.Bucket: Mem names have one spelling.
func (m *Mem) Canonical(name string) (string, error) { return name, nil }

// List implements storage.Bucket.
func (m *Mem) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return m.ListPruned(ctx, prefix, storage.Pruning{}, fn)
}

// ListPruned implements storage.Bucket: Mem lists flat, and applies p to
// every name (storage.Pruning.Wants).
func (m *Mem) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	if err := check(prefix); err != nil {
		return err
	}
	m.mu.RLock()
	var infos []storage.Info
	for name, o := range m.objects {
		if strings.HasPrefix(name, prefix) && p.Wants(prefix, name) {
			infos = append(infos, o.info(name))
		}
	}
	m.mu.RUnlock()
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	for _, info := range infos {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

type memHandle struct {
	m      *Mem
	data   []byte // never written after Put
	info   storage.Info
	caps   storage.Capabilities
	closed atomic.Bool
}

func (h *memHandle) Info() storage.Info { return h.info }

func (h *memHandle) Capabilities() storage.Capabilities { return h.caps }

// ReadSpans copies each span: with or without declared span reads, a
// Mem read is a memory copy.
func (h *memHandle) ReadSpans(ctx context.Context, spans []storage.Span) error {
	return storage.ReadSpansAt(ctx, h, spans)
}

// Recheck fails with storage.ErrChanged once the object was replaced or
// deleted since Open, although the handle keeps reading what it opened:
// tests above storage use it to stand for a file rewritten mid-scan.
func (h *memHandle) Recheck(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.m.mu.RLock()
	o, ok := h.m.objects[h.info.Name]
	h.m.mu.RUnlock()
	if !ok || o.version != h.info.Version {
		return fmt.Errorf("%q was replaced or deleted while it was read: %w", h.info.Name, storage.ErrChanged)
	}
	return nil
}

func (h *memHandle) ReadAt(ctx context.Context, p []byte, off int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if h.closed.Load() {
		return fmt.Errorf("read %q: %w", h.info.Name, fs.ErrClosed)
	}
	if off < 0 {
		return fmt.Errorf("read %q at %d: negative offset: %w", h.info.Name, off, fs.ErrInvalid)
	}
	size := int64(len(h.data))
	if off >= size {
		if len(p) == 0 {
			return nil
		}
		return io.EOF
	}
	if n := copy(p, h.data[off:]); n < len(p) {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func (h *memHandle) Close() error {
	if h.closed.Swap(true) {
		return fmt.Errorf("close %q: %w", h.info.Name, fs.ErrClosed)
	}
	return nil
}
