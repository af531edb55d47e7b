package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Small batches are gathered into one message. A packed endpoint of small
// files (multifile.go) decodes a batch per file, and a selective filter
// leaves a few rows of each decoded batch; sent as they come, 2,000 files
// of 1,000 rows are 2,000 messages, each paying its IPC framing, a gRPC
// message and the client's per-batch work. Batches under half the
// stream's target (rows or bytes) wait in st.gathered and go out as one
// batch, concatenated, once they reach the target or the stream ends.
// Larger batches go out as they are (after what was gathered, so the
// order holds): only small ones are copied. A client that set batch_rows
// gets its batches as decoded.
type gathered struct {
	recs        []arrow.RecordBatch
	rows, bytes int64
}

// sendGathered is send for the batches emit makes.
func (st *stream) sendGathered(rec arrow.RecordBatch) error {
	if st.task.BatchRows > 0 {
		return st.send(rec)
	}
	rows, bytes := rec.NumRows(), BatchBytes(rec)
	g := &st.gathered
	if len(g.recs) > 0 && !st.fits(g.rows+rows, g.bytes+bytes) {
		if err := st.flushGathered(); err != nil {
			rec.Release()
			return err
		}
	}
	if !st.fits(2*rows, 2*bytes) { // half the target or more: not worth a copy
		if err := st.flushGathered(); err != nil {
			rec.Release()
			return err
		}
		return st.send(rec)
	}
	g.recs = append(g.recs, rec)
	g.rows, g.bytes = g.rows+rows, g.bytes+bytes
	return nil
}

// fits says a batch of rows and bytes is within the stream's target.
func (st *stream) fits(rows, bytes int64) bool {
	return rows <= max(1, st.read.BatchRows) && bytes <= st.size.target
}

// flushGathered sends what was gathered as one batch.
func (st *stream) flushGathered() error {
	g := &st.gathered
	recs := g.recs
	*g = gathered{}
	switch len(recs) {
	case 0:
		return nil
	case 1:
		return st.send(recs[0])
	}
	rec, err := concatBatches(recs, st)
	if err != nil { // e.g. dictionaries that do not unify: send them one by one
		for i, r := range recs {
			if err := st.send(r); err != nil {
				releaseAll(recs[i+1:])
				return err
			}
		}
		return nil
	}
	releaseAll(recs)
	return st.send(rec)
}

// concatBatches copies recs, which share st.schema, into one batch.
func concatBatches(recs []arrow.RecordBatch, st *stream) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, st.schema.NumFields())
	defer func() { releaseAll(cols) }()
	parts := make([]arrow.Array, len(recs))
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range cols {
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, st.cfg.Mem)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(st.schema, cols, rows), nil
}

func releaseAll[T interface{ Release() }](xs []T) {
	for _, x := range xs {
		if any(x) != nil {
			x.Release()
		}
	}
}
