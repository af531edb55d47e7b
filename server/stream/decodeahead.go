package stream

import (
	"context"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/server/admission"
)

// Decode ahead: a packed endpoint (multifile.go) decodes its next file
// while the stream filters, conforms and sends the current one.
//
// Files ahead (ahead.go) hide the next file's fetch, but decoding stays on
// the stream's goroutine, so an endpoint of many small files keeps one
// core busy. With decode ahead, once the current file is admitted, the
// next one is set up (opened, projected, its filter bound, admitted for
// its own decode memory under the stream's caller, see below) and read
// on a goroutine of its own into a channel of at most aheadBatches
// batches:
//
//	stream:  decode+send k ............│ send k+1 (from the channel) ...
//	ahead:   set up k+1, decode k+1 ───┘ set up k+2, decode k+2 ...
//
// so at most two files decode at once. The stream takes the decoded
// batches when it reaches the file, through the same emit as a file it
// reads itself: deletes (none here), partitions, the filter, conform,
// skip, limit and sending stay on its goroutine, in order, so the output
// and the figures are those of the sequential read. What the ahead
// file's set-up or read fails with is returned when the stream reaches
// it.
//
// The ahead read cannot know what the current file leaves: its skip and
// limit are applied by the stream when it takes the batches, and a file
// is decoded ahead only when the reader's own options do not depend on
// them: the ticket has a filter (the reader then gets no row limit, and
// skipped rows are dropped batch by batch), or neither limit nor skip.
// Late materialization's auto mode does depend on the files before (a
// file that gave up makes the later ones read in one pass): a file set
// up before that turned is read again on the stream's goroutine, and
// what its discarded read fetched is not counted. A file with deletes
// loads them on the goroutine once its decode memory is admitted, under
// its own grant (as admit does for a file the stream reads itself), and
// the stream takes its batches through emitDeleted, which places each in
// the file and holds the small ones, as readWithDeletes does
// (streamdeletes.go).
//
// Admission: the ahead file's grant is a second one, asked for while the
// stream holds its own, so it is asked for without waiting
// (admission.TryAdmitFor: only if it fits now and no stream waits). A
// waiting request would be a hold-and-wait on the stream's behalf: it
// would queue before streams that arrive after it and hold nothing, and,
// once next, be the one admission lets in over the limit or cuts stalled
// streams for, for work that may be skipped (a client reading its
// streams in order then had the stream it read later cut, since the
// ahead grant, never blocked on a client, kept the one it read first
// out: server's TestAdmissionClientReadingStreamsOutOfOrder).
// Not admitted at once, the file is set up but not read ahead: the
// stream admits it in turn when it reaches it, holding no grant then,
// and reads it itself (takeDecoded), as with decode ahead off. So what
// the stream waits for in takeDecoded and readDecoded never waits for
// decode memory: the set-up is the file's opening, and the read's
// decoders grow their grant with Reserve, which never waits (its
// fetches wait for prefetch memory a bounded while at most, iosched).
//
// Ending: when the limit is spent, the stream ends or fails, the ahead
// read is cancelled, its batches released, its goroutine waited for, and
// its file and grant closed (stopDecodeAhead); the IO figures of a file
// so dropped count as the stream's, as for a file opened ahead and not
// taken. A stream that parks (its client read nothing for parkAfter,
// stream.go) drops its next file the same way (dropDecodeAhead): a parked
// stream holds no grant admission can neither park nor cut (the ahead
// grant is never blocked on a client, so it would also keep admission
// from over-committing for the streams that are), and it reads that file
// itself in turn. The current file, if it was decoded ahead, keeps its
// read: its grant is the stream's own, which parks, and its channel
// holds at most aheadBatches batches.

// aheadBatches bounds the decoded batches waiting for the stream; the
// ahead file's admission grant covers them (streamWorkBytes charges three
// or four batches and the reader's working memory).
const aheadBatches = 3

// decodedFile is a file decoded ahead of the stream.
type decodedFile struct {
	task *scandv1.ScanTask // the endpoint's, as FileTasks made it
	// c is a stream of the file alone, set up on the goroutine: the
	// stream adopts its per-file fields when it reaches the file.
	c          *stream
	lateGaveUp bool          // what c's read was set up with
	ready      chan struct{} // closed once c is set up (or failed: setUpErr)
	setUpErr   error
	admitted   bool                   // c got its decode memory at once and is read ahead
	batches    chan arrow.RecordBatch // closed when the read ends (readErr)
	readErr    error
	cancel     context.CancelFunc
	adopted    bool
}

// decodeAhead says whether the stream decodes its next file ahead:
// Config.DecodeAhead, or by default with more than one core and
// read-ahead on.
func (c *Config) decodeAhead() bool {
	if c.DecodeAhead != 0 {
		return c.DecodeAhead > 0
	}
	return runtime.GOMAXPROCS(0) > 1 && c.DecodeParallelism != 1
}

// canDecodeAhead says whether t's reader options are known before the
// files ahead of it are read (see above).
func canDecodeAhead(head *scandv1.ScanTask) bool {
	filtered := head.GetFilter() != "" || len(head.GetFilterSubstrait()) > 0
	return filtered || (head.Limit == 0 && head.SkipRows == 0)
}

// startDecodeAhead starts decoding t, the file after the current one.
func (st *stream) startDecodeAhead(ctx context.Context, head, t *scandv1.ScanTask) {
	if st.decoding != nil || !st.cfg.decodeAhead() || !canDecodeAhead(head) || !st.ahead.has(t) {
		return // files ahead off: nothing is read ahead
	}
	open := st.ahead.takeLater()
	ct := proto.CloneOf(t)
	ct.SkipRows, ct.Limit = 0, 0 // the stream applies them (emit)
	c := &stream{cfg: st.cfg, task: ct, out: st.out, start: st.start, identity: st.identity, peer: st.peer,
		stats: &scandv1.StreamStats{Path: t.Path}, lateGaveUp: st.lateGaveUp, checked: st.checked, vectors: st.vectors}
	actx, cancel := context.WithCancel(ctx)
	d := &decodedFile{task: t, c: c, lateGaveUp: st.lateGaveUp, ready: make(chan struct{}),
		batches: make(chan arrow.RecordBatch, aheadBatches), cancel: cancel}
	st.decoding = d
	go d.run(actx, open)
}

// run sets the file up and reads it into d.batches.
func (d *decodedFile) run(ctx context.Context, open func(context.Context) (*Opened, error)) {
	defer close(d.batches)
	d.setUpErr = d.setUp(ctx, open)
	close(d.ready) // the stream adopts c's fields, which are read only from now on
	c := d.c
	if d.setUpErr != nil || !d.admitted || len(c.read.Groups) == 0 {
		return
	}
	defer recoverPanic(c.cfg.Log, "DoGet", &d.readErr)
	d.readErr = c.file.File.Read(ctx, c.readProj, c.read, scanner.DecodeSpans(ctx, c.task.Path, func(rec arrow.RecordBatch) error {
		select {
		case d.batches <- rec:
			return nil
		case <-ctx.Done():
			rec.Release()
			return ctx.Err()
		}
	}))
}

// setUp opens the file and sets c up for it (open), as the stream would,
// then asks for its decode memory without waiting (admitAhead).
func (d *decodedFile) setUp(ctx context.Context, open func(context.Context) (*Opened, error)) (err error) {
	c := d.c
	defer recoverPanic(c.cfg.Log, "DoGet", &err)
	o, err := open(ctx)
	if err != nil {
		return err
	}
	if err = c.setUp(o); err != nil {
		return err
	}
	if d.admitted = c.admitAhead(); d.admitted {
		return c.loadDeletes(ctx) // under c's grant, as admit does
	}
	return nil
}

// admitAhead admits the decode memory of a file decoded ahead only if it
// fits at once with nobody waiting (admission.TryAdmitFor): the stream
// holds its own grant meanwhile (see Admission above). Not admitted, the
// file is set up but not read: the stream admits and reads it itself
// when it reaches it, holding no grant then. A file admitted loads its
// deletes after (setUp), as admit does.
func (c *stream) admitAhead() bool {
	g, ok := c.cfg.Admission.TryAdmitFor(c.workBytes(), admission.Who{Identity: c.identity, Peer: c.peer})
	if ok && g != nil {
		c.grant = g
		c.read.Budget = g
		g.HoldsAlso(c.file.IO.HeldBytes)
	}
	return ok
}

// stop cancels the read, releases its batches and waits for its
// goroutine; what the stream did not adopt is closed, its IO figures
// added to unread.
func (d *decodedFile) stop(unread *iosched.Stats) {
	d.cancel()
	for rec := range d.batches {
		rec.Release()
	}
	if d.adopted {
		return
	}
	c := d.c
	c.releaseDeletes()
	if c.file != nil {
		c.file.Close()
		unread.Add(c.file.IO.Stats())
	}
	c.grant.Close()
}

// stopDecodeAhead stops the files decoded ahead, if any: the current
// one's read and the next one's.
func (st *stream) stopDecodeAhead() {
	st.stopDecoded()
	st.dropDecodeAhead() // the stream ends: nothing more starts
}

// dropDecodeAhead stops the next file's ahead read, if any, while the
// stream goes on (park): the stream opens and reads that file itself
// when it reaches it (takeDecoded finds nothing), and what the dropped
// read fetched counts as read ahead and unused.
func (st *stream) dropDecodeAhead() {
	if d := st.decoding; d != nil {
		st.decoding = nil
		d.stop(&st.unreadAhead)
		st.ahead.lent--
	}
}

// stopDecoded stops the read of the current file decoded ahead, if any.
func (st *stream) stopDecoded() {
	if d := st.decoded; d != nil {
		st.decoded = nil
		d.stop(&st.unreadAhead)
	}
}

// takeDecoded makes the file decoded ahead the stream's current one, as
// open and admit would have: it waits for the set-up, which never waits
// for memory (admitAhead), and returns its error. A file set up but not
// admitted is admitted here, on the stream's goroutine, which holds no
// grant then (doneWithFile closed the last file's, and the next file is
// started ahead only once this one is admitted), and read in turn. It
// reports false when the file was set up under late materialization the
// files before have since turned off: the stream then reads it itself.
func (st *stream) takeDecoded(ctx context.Context) (bool, error) {
	d := st.decoding
	if d == nil || d.task != st.task {
		return false, nil
	}
	select {
	case <-d.ready:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	st.stopDecoded()
	st.decoding, st.decoded = nil, d
	st.ahead.giveBack(ctx)
	if d.setUpErr == nil && d.lateGaveUp != st.lateGaveUp && st.cfg.LateMaterialization == scanner.LateAuto {
		st.stopDecoded()
		return false, nil
	}
	c := d.c
	d.adopted = true
	st.file = c.file
	if st.file != nil {
		st.stats.Paths = append(st.stats.Paths, st.task.Path)
		st.stats.Files = int64(len(st.stats.Paths))
	}
	st.proj, st.readProj, st.pred, st.fill = c.proj, c.readProj, c.pred, c.fill
	st.schema, st.checked, st.size, st.read = c.schema, c.checked, c.size, c.read
	st.grant = c.grant
	st.releaseDeletes()
	st.deletes, c.deletes = c.deletes, nil
	err := d.setUpErr
	if err == nil {
		err = st.startAt()
	}
	if err != nil || !d.admitted {
		st.stopDecoded() // not admitted: its goroutine read nothing and ends
	}
	if err == nil && !d.admitted {
		err = st.admit(ctx) // readAll then reads the file itself
	}
	return true, err
}

// readDecoded takes the batches of the current file, decoded ahead, as
// readAll takes those it reads: through emit, or emitDeleted for a file
// with deletes (readWithDeletes).
func (st *stream) readDecoded(ctx context.Context) error {
	d := st.decoded
	defer st.stopDecoded()
	emit := st.emit
	if st.deletes != nil {
		st.beginDeletes()
		defer st.deletes.releaseHeld()
		emit = st.emitDeleted
	}
	for {
		select {
		case rec, ok := <-d.batches:
			if !ok {
				if d.readErr != nil || st.deletes == nil {
					return d.readErr
				}
				return st.endDeletes()
			}
			if err := emit(rec); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
