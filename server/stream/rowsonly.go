package stream

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// A rows_only ticket (ScanTask.rows_only, a scan of no columns) sends
// record batches of no columns whose lengths add up to the endpoint's
// rows. Without a filter or deletes the rows are the ticket's (the
// footers' counts, taken when the scan was planned) and no file is
// opened; otherwise the stream reads the ticket's columns as any other,
// filters them, and sends each surviving batch's length alone.

// noColumns is the schema of a rows_only stream.
var noColumns = arrow.NewSchema(nil, nil)

// maxRowsPerBatch cuts the batches of a rows_only stream: a batch's
// length is an int64 in IPC, but readers that hold it in an int32 (the
// Java library's row count) must not overflow.
const maxRowsPerBatch = 1 << 30

// RowsFromTicket says whether a rows_only task's rows are its ticket's,
// with nothing to read: no filter and no deletes in any of its files.
func RowsFromTicket(t *scandv1.ScanTask) bool {
	if !t.GetRowsOnly() || t.GetRowFilter() != nil || len(t.GetDeletes()) > 0 {
		return false
	}
	for _, m := range t.GetMore() {
		if len(m.GetDeletes()) > 0 {
			return false
		}
	}
	return true
}

// ticketRows are the rows a rows_only task without anything to read
// sends: its files' rows, within its limit, less the rows a resumed
// stream skips.
func ticketRows(t *scandv1.ScanTask) []int64 {
	rows := []int64{t.GetRows()}
	for _, m := range t.GetMore() {
		rows = append(rows, m.GetRows())
	}
	left := int64(-1) // no limit
	if t.GetLimit() > 0 {
		left = t.GetLimit()
	}
	skip := max(t.GetSkipRows(), 0)
	out := rows[:0]
	for _, n := range rows {
		if left >= 0 {
			n = min(n, left)
			left -= n
		}
		cut := min(n, skip)
		n, skip = n-cut, skip-cut
		if n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// SendTicketRows serves a rows_only task whose rows are its ticket's
// (RowsFromTicket): batches of no columns, the last carrying the stream's
// figures (no bytes read).
func SendTicketRows(cfg *Config, out flight.FlightService_DoGetServer, t *scandv1.ScanTask, c wire.Compression) error {
	start := time.Now()
	w := cfg.NewBatchWriter(out, noColumns, c)
	defer w.Close()
	stats := &scandv1.StreamStats{Path: t.GetPath(), Paths: []string{t.GetPath()}}
	for _, m := range t.GetMore() {
		stats.Paths = append(stats.Paths, m.GetPath())
	}
	stats.Files = int64(len(stats.Paths))
	var lengths []int64
	for _, n := range ticketRows(t) {
		for n > 0 {
			k := min(n, maxRowsPerBatch)
			lengths = append(lengths, k)
			n -= k
		}
	}
	if len(lengths) == 0 {
		lengths = []int64{0}
	}
	for i, n := range lengths {
		rec := array.NewRecordBatch(noColumns, nil, n)
		stats.Batches++
		stats.Rows += n
		var err error
		if i == len(lengths)-1 {
			stats.ElapsedSeconds = time.Since(start).Seconds()
			err = w.WriteWithAppMetadata(rec, wire.MarshalStats(stats))
		} else {
			err = w.Write(rec)
		}
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// rowsOnlyWriter sends each batch of a rows_only stream that reads as its
// length alone; the stream's own work (conforming, gathering, the held
// last batch with the figures) is done on the batches it read.
type rowsOnlyWriter struct{ BatchWriter }

func (w rowsOnlyWriter) Write(rec arrow.RecordBatch) error {
	empty := array.NewRecordBatch(noColumns, nil, rec.NumRows())
	defer empty.Release()
	return w.BatchWriter.Write(empty)
}

func (w rowsOnlyWriter) WriteWithAppMetadata(rec arrow.RecordBatch, meta []byte) error {
	empty := array.NewRecordBatch(noColumns, nil, rec.NumRows())
	defer empty.Release()
	return w.BatchWriter.WriteWithAppMetadata(empty, meta)
}
