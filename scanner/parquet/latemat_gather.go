package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batchGather joins the small batches of a late read from page headers
// (one per run of survivors) into batches of about half the target rows
// or more before they are emitted: each emitted batch costs the caller a
// filter evaluation and a message, whatever its rows. Batches of half the
// target or more go out as they are, after what was gathered, so the
// order holds.
type batchGather struct {
	// schema is the read's output schema (the batches' but for the
	// filter's dictionaries).
	schema *arrow.Schema
	target int64
	mem    memory.Allocator
	emit   func(arrow.RecordBatch) error
	recs   []arrow.RecordBatch
	rows   int64
}

// add takes rec (its reference).
func (g *batchGather) add(rec arrow.RecordBatch) error {
	if 2*rec.NumRows() >= g.target {
		if err := g.flush(); err != nil {
			rec.Release()
			return err
		}
		return g.emit(rec)
	}
	g.recs = append(g.recs, rec)
	g.rows += rec.NumRows()
	if 2*g.rows >= g.target {
		return g.flush()
	}
	return nil
}

// flush emits what was gathered, as one batch.
func (g *batchGather) flush() error {
	recs := g.recs
	g.recs, g.rows = nil, 0
	switch len(recs) {
	case 0:
		return nil
	case 1:
		return g.emit(recs[0])
	}
	out, err := concatRecords(recs, g.schema, g.mem)
	if err != nil { // columns that do not concatenate: one by one
		for i, r := range recs {
			if err := g.emit(r); err != nil {
				releaseRecords(recs[i+1:])
				return err
			}
		}
		return nil
	}
	releaseRecords(recs)
	return g.emit(out)
}

// release drops what was gathered and not emitted (a read that failed).
func (g *batchGather) release() {
	releaseRecords(g.recs)
	g.recs, g.rows = nil, 0
}

// concatRecords copies recs, which have the schema want but for the
// filter's dictionaries (native_dict.go, decoded here: one batch may hold
// a column as a dictionary and the next plain), into one batch.
func concatRecords(recs []arrow.RecordBatch, want *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	sc := recs[0].Schema()
	cols := make([]arrow.Array, 0, sc.NumFields())
	parts := make([]arrow.Array, 0, len(recs))
	defer func() {
		releaseArrays(cols)
		releaseArrays(parts)
	}()
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range sc.NumFields() {
		releaseArrays(parts)
		parts = parts[:0]
		for _, r := range recs {
			p, err := plainColumn(r.Column(i), want.Field(i).Type, mem)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return array.NewRecordBatch(withPlainTypes(sc, cols), cols, rows), nil
}

func releaseArrays(arrs []arrow.Array) {
	for _, a := range arrs {
		a.Release()
	}
}

func releaseRecords(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
