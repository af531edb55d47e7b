package deletes

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/scand/scand/scanner"
)

// Column names of a position-delete file (Iceberg's reserved fields 2147483546
// and 2147483545).
const (
	PositionFilePathColumn = "file_path"
	PositionPosColumn      = "pos"
)

// Positions gathers the rows of position-delete files that name one data
// file into the set of its deleted positions.
type Positions struct {
	path string
	rows *Rows
	buf  []uint64
}

// NewPositions starts the set of dataPath's deleted positions: dataPath
// is the data file's name as the delete files write it (the table
// metadata's file_path, a full URI). Memory is charged to budget (nil
// charges nothing).
func NewPositions(dataPath string, budget scanner.Reserver) *Positions {
	return &Positions{path: dataPath, rows: &Rows{Bitmap: roaring64.New(), budget: budget}}
}

// positionBytes bounds what one more position costs a roaring bitmap: 2
// bytes in an array container, less in a bitmap or run container, plus a
// share of a container's own header.
const positionBytes = 3

// Add takes one batch of a position-delete file, with string columns
// file_path and int64 pos (other columns are ignored). Rows naming other
// data files are skipped. A null or negative position, or a missing
// column, is corrupt.
func (p *Positions) Add(ctx context.Context, rec arrow.RecordBatch) error {
	paths, pos, err := positionColumns(rec)
	if err != nil {
		return err
	}
	p.buf = p.buf[:0]
	for i := 0; i < int(rec.NumRows()); i++ {
		if paths.IsNull(i) || pos.IsNull(i) {
			return corruptf("position delete row %d has a null file_path or pos", i)
		}
		if paths.Value(i) != p.path {
			continue
		}
		v := pos.Value(i)
		if v < 0 {
			return corruptf("position delete row %d has negative position %d", i, v)
		}
		p.buf = append(p.buf, uint64(v))
	}
	if len(p.buf) == 0 {
		return nil
	}
	if err := p.rows.reserve(ctx, positionBytes*int64(len(p.buf))); err != nil {
		return fmt.Errorf("position deletes of %s: %w", p.path, err)
	}
	p.rows.Bitmap.AddMany(p.buf)
	return nil
}

type stringValues interface {
	IsNull(int) bool
	Value(int) string
}

func positionColumns(rec arrow.RecordBatch) (stringValues, *array.Int64, error) {
	var paths stringValues
	var pos *array.Int64
	for i, f := range rec.Schema().Fields() {
		switch f.Name {
		case PositionFilePathColumn:
			switch c := rec.Column(i).(type) {
			case *array.String:
				paths = c
			case *array.LargeString:
				paths = c
			case *array.StringView:
				paths = c
			}
		case PositionPosColumn:
			pos, _ = rec.Column(i).(*array.Int64)
		}
	}
	if paths == nil || pos == nil {
		return nil, nil, corruptf("position delete file lacks a string file_path or int64 pos column (it has %s)", rec.Schema())
	}
	return paths, pos, nil
}

// Rows ends the gathering: the set of deleted positions, holding its
// memory until Release. The Positions must not be used afterwards.
func (p *Positions) Rows() *Rows {
	r := p.rows
	p.rows, p.buf = nil, nil
	r.settle()
	return r
}

// Union adds other's positions to r and releases other. Both must charge
// the same budget.
func (r *Rows) Union(ctx context.Context, other *Rows) error {
	if other == nil || other.Bitmap == nil {
		return nil
	}
	defer other.Release()
	if err := r.reserve(ctx, int64(other.Bitmap.GetSizeInBytes())); err != nil {
		return err
	}
	if r.Bitmap == nil {
		r.Bitmap = roaring64.New()
	}
	r.Bitmap.Or(other.Bitmap)
	r.settle()
	return nil
}
