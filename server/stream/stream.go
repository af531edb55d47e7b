package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/scand/scand/internal/spans"
	"github.com/scand/scand/iosched"
	"github.com/scand/scand/planner"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/source/fieldid"
	"github.com/scand/scand/wire"
)

// Batch sizing (ScanRequest.max_message_bytes): aim each message at half
// the largest message the client accepts, and cut any batch over 3/4 of
// it, leaving room for IPC framing and estimation error. A client that
// says nothing gets gRPC's default 4 MiB receive limit: 2 MiB batches, cut
// at 3 MiB.
const (
	// defaultMessageBytes is gRPC's default receive limit, which stock
	// Flight clients (pyarrow, arrow-go) keep; it is also the floor: a
	// client that accepts less than that reads no stock Flight server.
	defaultMessageBytes = 4 << 20
	// maxClientMessageBytes caps what a client may ask for. A stream's
	// decode memory (streamWorkBytes: three or four batches in flight) is
	// charged to admission and grows with the batch, so 64 MiB (32 MiB
	// batches, about 130 MiB a stream) keeps a handful of streams within
	// a default decode share; larger batches save nothing measurable.
	maxClientMessageBytes = 64 << 20
	// maxBatchRows caps rows per batch at the default size: narrow
	// columns would otherwise make batches of millions of rows.
	maxBatchRows = 64 << 10
	// maxScaledBatchRows caps the row cap raised for larger messages.
	maxScaledBatchRows = 1 << 20
)

// messageSize is how a stream sizes its batches.
type messageSize struct {
	target int64 // bytes a batch of the server's choosing aims at
	cut    int64 // batches estimated over this many bytes are halved
	rows   int64 // rows per batch at most
}

// messageSizeFor sizes batches for a client that accepts messages of up
// to clientMax bytes (0: gRPC's default). The row cap grows with the
// target, so that narrow rows also get fewer messages.
func messageSizeFor(clientMax int64) messageSize {
	m := min(max(clientMax, defaultMessageBytes), maxClientMessageBytes)
	target := m / 2
	rows := min(maxScaledBatchRows, maxBatchRows*target/(defaultMessageBytes/2))
	return messageSize{target: target, cut: m / 4 * 3, rows: rows}
}

var errLimitReached = errors.New("limit reached")

// stream is one DoGet: it opens the ticket's file and projects it,
// rebuilds the scan's schema, waits for decode memory, reads the split,
// conforms every batch to the scan's schema, applies the limit, cuts
// batches to message size, and sends them, holding the last one back so
// that it can carry the stream's figures. It logs one line at the end.
type stream struct {
	cfg         *Config
	task        *scandv1.ScanTask
	compression wire.Compression
	out         flight.FlightService_DoGetServer
	start       time.Time
	identity    string // the caller's, for the log line and its fair share of decode memory
	peer        string // the client's address, for its fair share of decode memory
	stats       *scandv1.StreamStats

	file     *Opened
	proj     *scanner.Projection // the ticket's columns: the scan's schema
	readProj *scanner.Projection // what is read: those and the filter's
	pred     *filter.Predicate   // the filter, bound to the file; nil: none
	// lateGaveUp: a file of the stream read late found that most of its
	// pages held survivors (ReadCounts.LateGaveUp): with late
	// materialization auto, the stream's later files are read in one
	// pass, as auto reads the rest of that file.
	lateGaveUp bool
	fill       []filledColumn // partition columns, from the path
	schema     *arrow.Schema  // the scan's unified schema
	checked    *arrow.Schema  // schema as checked against the ticket's fingerprint (schemacheck.go)
	read       scanner.ReadOptions
	size       messageSize // from the ticket's max_message_bytes
	grant      *admission.Grant
	w          BatchWriter
	held       arrow.RecordBatch // the last batch, not yet sent
	gathered   gathered          // small batches waiting to go out as one (gather.go)
	remaining  int64             // rows still allowed by the limit
	sentBytes  int64             // Arrow data of the batches sent (scand_sent_bytes_total)
	skip       int64             // output rows still to skip (skip_rows, skip.go)
	// done are the IO figures of the files of the endpoint read before
	// the current one (multifile.go); nil for one file.
	done *scandv1.StreamStats
	// stuck is the result of a write given up on after the idle timeout:
	// it still runs, and the writer is closed only once it returns.
	stuck chan error
	// inflight is the write of the batch before held, with read-ahead
	// (readahead.go); nil when none runs.
	inflight *pendingWrite
	// ahead are the endpoint's next files, opened while this one is read
	// (ahead.go); nil for one file.
	ahead *filesAhead
	// deletes are the current file's deleted rows, for a table's file
	// with deletes (streamdeletes.go); nil otherwise.
	deletes *fileDeletes
	// vectors are the deletion-vector files several of the endpoint's
	// files read, opened once (deletesahead.go); nil: none.
	vectors sharedVectors
	// decoding is the endpoint's next file, decoded ahead, and decoded
	// the current one when it was (decodeahead.go); nil: none.
	decoding, decoded *decodedFile
	// unreadAhead are the IO figures of the files decoded ahead and
	// dropped (decodeahead.go).
	unreadAhead iosched.Stats
}

// run does the stream's work; errors are the layers' own (close and Run
// clean up, the server maps them).
func (st *stream) run(ctx context.Context) error {
	if len(st.task.More) > 0 {
		return st.runFiles(ctx, FileTasks(st.task))
	}
	if err := st.open(ctx); err != nil {
		return err
	}
	err := st.admit(ctx)
	if err == nil {
		err = st.readAll(ctx)
	}
	if err == nil {
		err = st.finish()
	}
	st.logEnd(err)
	return err
}

// open opens and projects the file, and rebuilds the scan's schema and
// the split's row groups from the ticket.
func (st *stream) open(ctx context.Context) error {
	o, err := st.openCurrent(ctx)
	if err != nil {
		return err
	}
	return st.setUp(o)
}

// setUp is open's work once the file is open: it takes o over.
func (st *stream) setUp(o *Opened) (err error) {
	t := st.task
	if o.File, err = fieldid.Rename(o.File, t.ColumnNames, t.NestedNames); err != nil {
		o.Close()
		return invalidf("ticket's column names do not fit %s (%v): pass GetFlightInfo's tickets unchanged", t.Path, err)
	}
	st.file = o
	st.stats.Paths = append(st.stats.Paths, t.Path)
	st.stats.Files = int64(len(st.stats.Paths))
	var columns []string // all
	if t.Columns != nil {
		if columns, err = planner.SelectedColumns(t.Columns, scanner.ColumnNames(o.File.Schema())); err != nil {
			return err
		}
	}
	if st.proj, err = o.File.Project(columns); err != nil {
		return err
	}
	if st.schema, err = planner.ApplyDelta(st.proj.Schema, t.SchemaDelta, st.cfg.Mem); err != nil {
		return err
	}
	if err := st.checkStreamSchema(); err != nil {
		return err
	}
	if err := st.bindFilter(columns); err != nil {
		return err
	}
	st.size = messageSizeFor(t.MaxMessageBytes)
	st.read = scanner.ReadOptions{Groups: make([]int, len(t.RowGroups)), BatchRows: t.BatchRows, Mem: st.cfg.Mem}
	for i, g := range t.RowGroups {
		if int(g) < 0 || int(g) >= len(st.readProj.Groups) {
			return invalidf("ticket names row group %d, but %s has %d", g, t.Path, len(st.readProj.Groups))
		}
		if i > 0 && g <= t.RowGroups[i-1] {
			return invalidf("ticket's row groups must be distinct and ascending (%d follows %d): pass the tickets of GetFlightInfo's endpoints unchanged", g, t.RowGroups[i-1])
		}
		st.read.Groups[i] = int(g)
	}
	if st.read.BatchRows == 0 {
		st.read.BatchRows = batchRowsFor(st.readProj, st.read.Groups, st.size)
	}
	if err := st.startAt(); err != nil {
		return err
	}
	st.handOverRows()
	return nil
}

// openCurrent opens the stream's current file, or takes it from the files
// opened ahead (ahead.go).
func (st *stream) openCurrent(ctx context.Context) (*Opened, error) {
	if st.ahead.has(st.task) {
		return st.ahead.take(ctx)
	}
	return st.cfg.openTask(ctx, st.task, false, st.vectors)
}

// handOverRows tells the reader which rows the stream can do without, so
// that it fetches less (the Parquet page index): the rows the filter
// rejects, or those past the limit of an unfiltered task (the rows it
// skips to resume, startAt, and then its remaining limit).
func (st *stream) handOverRows() {
	st.read.Filter = st.pred
	if st.pred == nil && st.task.Limit > 0 {
		st.read.Limit = st.skip + st.remaining
	}
	st.read.MaxIndexBytes = st.cfg.MaxIndexBytes
	st.read.LateMaterialization = st.cfg.LateMaterialization
	st.read.RoundTripBytes = st.cfg.Scheduler.Hole(st.task.Path)
	if st.lateGaveUp && st.read.LateMaterialization == scanner.LateAuto {
		st.read.LateMaterialization = scanner.LateOff
	}
	st.read.Counts = &scanner.ReadCounts{}
	if _, renamed := st.file.File.(*fieldid.Renamed); renamed || st.hasDeletes() {
		// The reader resolves the filter's columns by the file's own
		// names, and either hint lets it leave out rows inside a row
		// group, which position deletes must count (streamdeletes.go).
		st.read.Filter = nil
		st.read.Limit = 0
	}
	// conform decodes the dictionaries back before a batch is sent.
	st.read.FilterDictionaries = true
}

// admit waits for decode memory before any decoder opens; a waiting
// stream holds nothing but its file handle. The grant is then the
// decoders' budget.
func (st *stream) admit(ctx context.Context) error {
	g, err := st.cfg.Admission.AdmitFor(ctx, st.workBytes(), admission.Who{Identity: st.identity, Peer: st.peer})
	if err != nil {
		return err
	}
	st.grant = g
	if g != nil {
		st.read.Budget = g
		io := st.file.IO
		g.HoldsAlso(io.HeldBytes)
	}
	return st.loadDeletes(ctx)
}

// workBytes is the decode memory the stream asks admission for
// (streamWorkBytes); an unfiltered stream with a limit builds batches of
// at most that many rows, so a limit 10 scan asks for its pages alone.
func (st *stream) workBytes() int64 {
	rows := st.read.BatchRows
	if st.pred == nil && st.read.Limit > 0 {
		rows = min(rows, st.read.Limit)
	}
	return streamWorkBytes(st.readProj, st.read.Groups, rows, st.readAhead())
}

// cutErr is the stream's error once admission has ended it to free the
// memory it held while its client read nothing (admission.Grant.Cut).
func (st *stream) cutErr() error {
	if err := st.grant.CutErr(); err != nil {
		return fmt.Errorf("%s: %w", st.task.Path, err)
	}
	return nil
}

// readAll decodes the split and sends its batches.
func (st *stream) readAll(ctx context.Context) error {
	if st.w == nil { // one writer for all files of an endpoint (multifile.go)
		if st.task.GetRowsOnly() { // rowsonly.go
			st.w = rowsOnlyWriter{st.cfg.NewBatchWriter(st.out, noColumns, st.compression)}
		} else {
			st.w = st.cfg.NewBatchWriter(st.out, st.schema, st.compression)
		}
	}
	if st.nothingToRead() {
		st.stopDecoded() // its file may still be read ahead
		return nil
	}
	var err error
	switch {
	case st.decoded != nil:
		err = st.readDecoded(ctx) // decodeahead.go
	case st.deletes != nil:
		err = st.readWithDeletes(ctx)
	default:
		err = st.file.File.Read(ctx, st.readProj, st.read, scanner.DecodeSpans(ctx, st.task.Path, st.emit))
	}
	if err == nil || errors.Is(err, errLimitReached) {
		return nil
	}
	if serr := st.file.IO.Err(); serr != nil {
		err = serr // a decoder error caused by a failing store is the store's
	}
	return err
}

// emit takes one decoded batch: conformed, limited, cut and sent.
func (st *stream) emit(rec arrow.RecordBatch) (err error) {
	// A panic here is scand's bug, not a corrupt file: report it as such
	// rather than letting the decoder's containment call it data loss.
	defer recoverPanic(st.cfg.Log, "DoGet", &err)
	if rec, err = st.applyDeletes(rec); err != nil {
		return err
	}
	if rec, err = st.withPartitions(rec); err != nil {
		return err
	}
	if rec, err = st.applyFilter(rec); err != nil {
		return err
	}
	if rec.NumRows() == 0 && st.pred != nil {
		rec.Release()
		return nil
	}
	out, err := conform(rec, st.schema, st.cfg.Mem)
	rec.Release()
	if err != nil {
		return fmt.Errorf("%s: %w", st.task.Path, err)
	}
	if st.skip > 0 {
		if out = st.skipRows(out); out == nil {
			return nil
		}
	}
	limited := st.task.Limit > 0
	if limited {
		if out.NumRows() >= st.remaining {
			cut := out.NewSlice(0, st.remaining)
			out.Release()
			out = cut
		}
		st.remaining -= out.NumRows()
	}
	var sendErr error
	cutAt := st.size.cut
	if st.task.BatchRows > 0 {
		cutAt = 0 // the client chose the batch size
	}
	for _, piece := range splitBatch(out, cutAt) {
		if sendErr == nil {
			sendErr = st.sendGathered(piece)
		} else {
			piece.Release()
		}
	}
	if sendErr == nil && limited && st.remaining == 0 {
		return errLimitReached
	}
	return sendErr
}

// send sends the batch held back and holds rec instead: stock clients see
// app_metadata only on data messages, so the figures ride on the last.
func (st *stream) send(rec arrow.RecordBatch) error {
	if st.readAhead() {
		return st.sendAhead(rec) // readahead.go
	}
	if st.held != nil {
		err := st.write(st.held, nil)
		st.held.Release()
		st.held = nil
		if err == nil {
			// Decode memory comes back before decoding goes on.
			err = st.unpark()
		}
		if err != nil {
			rec.Release()
			return err
		}
	}
	st.held = rec
	st.stats.Batches++
	st.stats.Rows += rec.NumRows()
	st.sentBytes += BatchBytes(rec)
	return nil
}

// write sends one batch. Writes block while the client does not read
// (flow control). Admission must know, or a client reading its streams in
// order could wait forever for memory its other streams hold, and a
// blocked stream decodes nothing: it parks its grant's estimate for the
// rest of a write that blocks for longer than parkAfter (send takes it
// back).
func (st *stream) write(rec arrow.RecordBatch, meta []byte) error {
	if err := st.cutErr(); err != nil {
		return err
	}
	st.grant.Blocked(true)
	defer st.grant.Blocked(false)
	span := st.startSend(rec)
	return spans.End(span, st.writeWithin(rec, meta, st.cfg.StreamIdleTimeout))
}

// park is what a stream whose send has blocked for parkAfter gives back
// while its client reads nothing: its grant's estimate of the decoders'
// working memory (they decode nothing meanwhile), and the file's
// readahead that nothing has read yet (iosched.File.Pause). What it
// still holds is what it sends (the message gRPC writes and the batches
// waiting behind it) and the pages they point into; a stream that holds
// that long while others wait for memory is cut (admission.Grant.Cut).
// A next file decoded ahead (decodeahead.go) is dropped, its grant and
// batches given back: a parked stream holds no second grant that
// admission could neither park nor cut, and the file is read in turn
// once the client reads again.
func (st *stream) park() {
	st.dropDecodeAhead()
	st.grant.Park()
	if st.file != nil {
		st.file.IO.Pause()
	}
}

// unpark undoes park once a send returns, before decoding goes on.
func (st *stream) unpark() error {
	if st.file != nil {
		st.file.IO.Unpause()
	}
	return st.grant.Resume(st.out.Context())
}

// parkAfter is how long a send may block before its stream parks its
// decode-memory estimate: longer than a reading client keeps a message
// waiting, so streams of healthy clients keep their grants.
const parkAfter = 500 * time.Millisecond

// writeWithin runs the write on a goroutine of its own and gives up on it
// after idle: a send blocked that long means the client stopped reading,
// and only returning from DoGet makes gRPC end the stream, which in turn
// unblocks the send. The goroutine holds its own reference to rec.
func (st *stream) writeWithin(rec arrow.RecordBatch, meta []byte, idle time.Duration) error {
	done := make(chan error, 1)
	rec.Retain()
	go func() {
		defer rec.Release()
		if meta != nil {
			done <- st.w.WriteWithAppMetadata(rec, meta)
			return
		}
		done <- st.w.Write(rec)
	}()
	timer, park := time.NewTimer(idle), time.NewTimer(parkAfter)
	defer timer.Stop()
	defer park.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-park.C:
			st.park()
		case <-st.grant.Cut():
			st.stuck = done
			return st.cutErr()
		case <-timer.C:
			st.stuck = done
			return &Error{Kind: IdleTimeout, Msg: fmt.Sprintf(
				"%s: the client read nothing for %v, so the server ended the stream (--stream-idle-timeout); read streams as their data arrives, or open fewer at once",
				st.task.Path, idle)}
		}
	}
}

// finish checks that the file did not change under the stream, then sends
// the last batch (an empty one if there was none) with the figures.
func (st *stream) finish() error {
	if err := st.flushGathered(); err != nil {
		return err
	}
	if err := st.awaitWrite(); err != nil {
		return err
	}
	if err := st.file.IO.Recheck(); err != nil {
		return err
	}
	if st.held == nil {
		st.held = emptyBatch(st.schema, st.cfg.Mem)
		st.stats.Batches++
	}
	// The file's reading is over: its readahead stops, so that the
	// figures count every byte fetched (as used, wasted or unused).
	st.file.IO.StopReadahead()
	st.fillStats()
	err := st.write(st.held, wire.MarshalStats(st.stats))
	st.held.Release()
	st.held = nil
	return err
}

// fillStats copies the file's IO figures and the elapsed time into the
// stream's figures.
func (st *stream) fillStats() {
	var io iosched.Stats
	if st.file != nil { // nil between two files of an endpoint
		io = st.file.IO.Stats()
	}
	io.Add(st.ahead.unreadStats())
	io.Add(st.unreadAhead)
	st.stats.Reads = io.Reads
	st.stats.BytesFetched = io.BytesFetched
	st.stats.BytesUsed = io.BytesUsed
	st.stats.BytesPlanned = io.BytesPlanned
	st.stats.BytesWasted = io.BytesWasted
	st.stats.BytesUnused = io.BytesUnused
	st.stats.CacheHits = io.CacheHits
	st.stats.Hole = io.Hole
	st.stats.IoSeconds = io.IOSeconds
	st.stats.IndexReads = io.IndexReads
	st.stats.IndexBytesFetched = io.IndexBytesFetched
	st.stats.BytesFromCache = io.BytesFromCache
	st.stats.PagesSkipped = 0
	if c := st.read.Counts; c != nil {
		st.stats.PagesSkipped = c.PagesSkipped
		st.stats.LateRowGroups = c.LateGroups
		st.lateGaveUp = st.lateGaveUp || c.LateGaveUp
	}
	addIO(st.stats, st.done)
	st.stats.ElapsedSeconds = time.Since(st.start).Seconds()
}

// logEnd counts the stream and logs its one line.
func (st *stream) logEnd(err error) {
	st.cfg.CountScan(st.stats.Rows, st.sentBytes, err)
	st.cfg.CountFiltered(st.stats.RowsFiltered)
	if err != nil {
		st.fillStats()
	}
	attrs := []any{"identity", st.identity, "path", st.stats.Path, "rows", st.stats.Rows, "batches", st.stats.Batches, "reads", st.stats.Reads,
		"bytes_fetched", st.stats.BytesFetched, "elapsed", time.Since(st.start)}
	st.cfg.Audit(st.out.Context(), "DoGet", st.identity, err, "path", st.stats.Path, "rows", st.stats.Rows,
		"bytes_fetched", st.stats.BytesFetched)
	if err != nil {
		st.cfg.Log.Warn("scan failed", append(attrs, "err", err.Error())...)
		return
	}
	st.cfg.Log.Info("scan", attrs...)
}

// close releases what the stream holds, whatever happened.
func (st *stream) close() {
	st.stopDecodeAhead()
	st.ahead.stop()
	if st.held != nil {
		st.held.Release()
	}
	releaseAll(st.gathered.recs)
	if st.inflight != nil {
		// A failed stream's last write may still run: close the writer
		// once it returns, as for a stuck one.
		st.stuck, st.inflight = st.inflight.done, nil
	}
	if st.w != nil && st.stuck != nil {
		w, stuck := st.w, st.stuck
		go func() { <-stuck; w.Close() }() // gRPC ends the write once DoGet returns
	} else if st.w != nil {
		st.w.Close()
	}
	st.releaseDeletes()
	st.vectors.close()
	st.grant.Close()
	if st.file != nil {
		st.file.Close()
	}
}

// batchRowsFor picks rows per batch so that a batch of the projected
// columns is about size.target bytes, judged from the row groups' sizes,
// and at most size.rows. streamWorkBytes charges admission for batches of
// that many rows, so the decode-memory estimate follows the target.
func batchRowsFor(p *scanner.Projection, groups []int, size messageSize) int64 {
	rows, bytes, _ := groupTotals(p, groups)
	if rows == 0 || bytes == 0 {
		return size.rows
	}
	perRow := max(1, bytes/rows)
	return min(size.rows, max(1, size.target/perRow))
}

// streamWorkBytes estimates the memory a stream holds while it decodes:
// the reader's working memory for its largest group, and three batches
// (the one being built, the one held back for the figures, and the one
// gRPC is writing), four with read-ahead (the next one is built while
// the one before the held one is written: readahead.go).
func streamWorkBytes(p *scanner.Projection, groups []int, batchRows int64, readAhead bool) int64 {
	rows, bytes, work := groupTotals(p, groups)
	batch := bytes
	if rows > 0 && batchRows > 0 && batchRows < rows {
		batch = bytes / rows * batchRows
	}
	batches := int64(3)
	if readAhead {
		batches++
	}
	return work + batches*batch
}

// groupTotals sums the rows and decoded bytes of the chosen groups, and
// finds the largest working memory among them.
func groupTotals(p *scanner.Projection, groups []int) (rows, memBytes, maxWork int64) {
	for _, g := range groups {
		rows += p.Groups[g].Rows
		memBytes += p.Groups[g].MemBytes
		maxWork = max(maxWork, p.Groups[g].WorkBytes)
	}
	return rows, memBytes, maxWork
}
