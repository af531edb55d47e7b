package storagetest

import (
	"context"

	"github.com/scand/scand/storage"
)

// ReadHook is called before a read reaches the wrapped bucket, with the
// object's name and the range asked for (for ReadSpans, the range from the
// first span to the end of the last). A non-nil error fails the read
// with that error instead.
type ReadHook func(ctx context.Context, name string, off int64, n int) error

// WithReadHook returns b (its capabilities, names and listings unchanged)
// with hook in front of every Object.ReadAt of the
// objects it opens, and of every ReadSpans: tests use it to count and record reads, or to inject
// storage failures. hook may be called concurrently.
func WithReadHook(b storage.Bucket, hook ReadHook) storage.Bucket {
	return &hookBucket{Bucket: b, hook: hook}
}

type hookBucket struct {
	storage.Bucket
	hook ReadHook
}

func (b *hookBucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	o, err := b.Bucket.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	return &hookObject{Object: o, hook: b.hook}, nil
}

// hookObject embeds the inner object, so Capabilities, Recheck, Info and
// Close are exactly its.
type hookObject struct {
	storage.Object
	hook ReadHook
}

func (o *hookObject) ReadAt(ctx context.Context, p []byte, off int64) error {
	if err := o.hook(ctx, o.Info().Name, off, len(p)); err != nil {
		return err
	}
	return o.Object.ReadAt(ctx, p, off)
}

func (o *hookObject) ReadSpans(ctx context.Context, spans []storage.Span) error {
	if !o.Capabilities().SpanReads {
		return storage.ReadSpansAt(ctx, o, spans) // the hook sees each span
	}
	r, err := storage.SpanRange(spans)
	if err != nil {
		return err
	}
	if err := o.hook(ctx, o.Info().Name, r.Off, int(r.End-r.Off)); err != nil {
		return err
	}
	return o.Object.ReadSpans(ctx, spans)
}
