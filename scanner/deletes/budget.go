package deletes

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/scand/scand/scanner"
)

// Rows is a set of deleted row positions of one data file, and the memory
// it holds on the caller's budget.
type Rows struct {
	Bitmap *roaring64.Bitmap
	budget scanner.Reserver
	held   int64
}

// Len is the number of deleted positions.
func (r *Rows) Len() int64 {
	if r == nil || r.Bitmap == nil {
		return 0
	}
	return int64(r.Bitmap.GetCardinality())
}

// Release gives the set's memory back to the budget. The set must not be
// used afterwards.
func (r *Rows) Release() {
	if r == nil {
		return
	}
	if r.budget != nil && r.held > 0 {
		r.budget.Release(r.held)
	}
	r.held, r.Bitmap = 0, nil
}

// bitmapOverhead is what a decoded bitmap may take beyond its serialized
// bytes: containers and slices of the 64-bit and 32-bit levels.
const bitmapOverhead = 256

// LoadDeletionVector decodes a framed deletion vector (DecodeDeletionVector)
// with its memory charged to budget (nil charges nothing): twice the blob's
// length before decoding, what the bitmap takes after.
func LoadDeletionVector(ctx context.Context, budget scanner.Reserver, blob []byte, cardinality int64) (*Rows, error) {
	return load(ctx, budget, len(blob), func() (*roaring64.Bitmap, error) { return DecodeDeletionVector(blob, cardinality) })
}

// LoadBitmap is LoadDeletionVector for an unframed vector (DecodeBitmap).
func LoadBitmap(ctx context.Context, budget scanner.Reserver, b []byte, cardinality int64) (*Rows, error) {
	return load(ctx, budget, len(b), func() (*roaring64.Bitmap, error) { return DecodeBitmap(b, cardinality) })
}

func load(ctx context.Context, budget scanner.Reserver, n int, decode func() (*roaring64.Bitmap, error)) (*Rows, error) {
	r := &Rows{budget: budget}
	if err := r.reserve(ctx, 2*int64(n)+bitmapOverhead); err != nil {
		return nil, err
	}
	bm, err := decode()
	if err != nil {
		r.Release()
		return nil, err
	}
	r.Bitmap = bm
	r.settle()
	return r, nil
}

func (r *Rows) reserve(ctx context.Context, n int64) error {
	if r.budget == nil || n <= 0 {
		return nil
	}
	if err := r.budget.Reserve(ctx, n); err != nil {
		return err
	}
	r.held += n
	return nil
}

// settle gives back what was reserved beyond the bitmap's size.
func (r *Rows) settle() {
	if r.budget == nil || r.Bitmap == nil {
		return
	}
	if size := int64(r.Bitmap.GetSizeInBytes()) + bitmapOverhead; size < r.held {
		r.budget.Release(r.held - size)
		r.held = size
	}
}
