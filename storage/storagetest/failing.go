package storagetest

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync/atomic"

	"github.com/scand/scand/storage"
)

var errInner = errors.New("the inner object's own error")

// failing is the inner bucket of RunWrapper: a Mem whose objects fail
// every call with fail once it is set, which can spell names its own way
// (canonical), and which counts ListPruned calls.
type failing struct {
	*Mem
	fail      atomic.Pointer[error]
	canonical bool
	pruned    atomic.Int64
}

func (b *failing) Canonical(name string) (string, error) {
	if !b.canonical {
		return name, nil
	}
	return strings.TrimPrefix(path.Clean(name), "./"), nil
}

func (b *failing) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	b.pruned.Add(1)
	return b.Mem.ListPruned(ctx, prefix, p, fn)
}

func (b *failing) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return b.ListPruned(ctx, prefix, storage.Pruning{}, fn)
}

func (b *failing) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	o, err := b.Mem.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	return &failingObject{Object: o, b: b}, nil
}

type failingObject struct {
	storage.Object
	b *failing
}

func (o *failingObject) err(op string) error {
	if e := o.b.fail.Load(); e != nil {
		return fmt.Errorf("%s %q: %w", op, o.Info().Name, *e)
	}
	return nil
}

func (o *failingObject) ReadAt(ctx context.Context, p []byte, off int64) error {
	if err := o.err("read"); err != nil {
		return err
	}
	return o.Object.ReadAt(ctx, p, off)
}

func (o *failingObject) ReadSpans(ctx context.Context, spans []storage.Span) error {
	if err := o.err("read spans"); err != nil {
		return err
	}
	return o.Object.ReadSpans(ctx, spans)
}

func (o *failingObject) Recheck(ctx context.Context) error {
	if err := o.err("recheck"); err != nil {
		return err
	}
	return o.Object.Recheck(ctx)
}
