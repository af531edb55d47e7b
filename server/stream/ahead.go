package stream

import (
	"cmp"
	"context"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// Files ahead: a packed endpoint (multifile.go) opens its next files while
// it decodes the current one.
//
// Read in turn, every small file of an endpoint costs its round trips
// (the footer when the metadata cache lacks it, then its data) before it
// decodes, and the decoder idles meanwhile. So the stream keeps up to
// Config.FilesAhead later files opening on goroutines of their own:
// each opens through the scheduler and reads its footer, then warms
// (iosched.File.Warm: a file within the tail size is fetched whole, in
// one request, its bytes charged to the scheduler's prefetch budget; on
// an object store a file up to WarmDataBytes has its data announced and
// read ahead too, iosched.File.WarmData), and its deletes are fetched
// (deletesahead.go). When the stream reaches a file it takes it, and
// starts the next one:
//
//	decoder:  decode 0 │ decode 1 │ decode 2 │ ...
//	ahead:    open+warm 1, 2 ──┘ open+warm 3 ┘ open+warm 4 ...
//
// so that N files take about N x max(fetch / FilesAhead, decode) rather
// than N x (fetch + decode). Files are taken in order, and each is still
// rechecked once read (a file rewritten after planning fails the stream
// with FAILED_PRECONDITION when the stream reaches it). When the stream
// ends, fails or spends its limit, stop cancels the files not taken and
// waits for their goroutines, which frees their buffers and budget.

// WarmDataBytes is the largest file on an object store whose data a file
// opened ahead announces whole (iosched.File.WarmData), so that it arrives
// while the stream decodes the files before it. Larger files are read as
// their reader plans them when the stream reaches them; a file's unread
// columns cost at most this many bytes.
const WarmDataBytes = 8 << 20

// DefaultFilesAhead is Config.FilesAhead's default (the server's
// Planning.FilesAhead): one file opened ahead, which hides decoding behind the next file's fetch. Object stores
// want more (cmd/scand sets it with S3 configured): there a small file's
// fetch is a round trip that dwarfs its decoding.
const DefaultFilesAhead = 1

// aheadFile is one file being opened ahead of the stream.
type aheadFile struct {
	task   *scandv1.ScanTask
	done   chan struct{} // closed once o or err is set
	cancel context.CancelFunc
	o      *Opened
	err    error
}

// filesAhead are the files of an endpoint after its first, opened ahead of
// the stream in order, at most depth at once. It is used by the stream's
// goroutine only; each aheadFile's own goroutine writes only its file.
type filesAhead struct {
	cfg     *Config
	tasks   []*scandv1.ScanTask // the endpoint's files after the first
	started int                 // tasks[:started] were started
	open    []*aheadFile        // started, not yet taken, in order
	depth   int
	// lent are the files taken ahead of the stream (takeLater) that it
	// has not reached yet: they count against depth (giveBack).
	lent   int
	shared sharedVectors // the stream's (deletesahead.go); read only
	// unread are the IO figures of the files stop closed untaken: their
	// footers and warmed bytes were fetched for the stream, which counts
	// them (what no read took, as unused).
	unread iosched.Stats
}

// unreadStats returns the IO figures of the files opened ahead and never
// taken (stop).
func (fa *filesAhead) unreadStats() iosched.Stats {
	if fa == nil {
		return iosched.Stats{}
	}
	return fa.unread
}

// newFilesAhead returns the opener of the files after the first of an
// endpoint; nil when Config.FilesAhead turns it off.
func (c *Config) newFilesAhead(later []*scandv1.ScanTask, shared sharedVectors) *filesAhead {
	depth := cmp.Or(c.FilesAhead, DefaultFilesAhead)
	if depth < 0 || len(later) == 0 {
		return nil
	}
	return &filesAhead{cfg: c, tasks: later, depth: depth, shared: shared}
}

// fill starts files until depth are open or none is left.
func (fa *filesAhead) fill(ctx context.Context) {
	if fa == nil {
		return
	}
	for len(fa.open)+fa.lent < fa.depth && fa.started < len(fa.tasks) {
		fa.open = append(fa.open, fa.start(ctx, fa.tasks[fa.started]))
		fa.started++
	}
}

// start opens and warms t on a goroutine of its own, under a context
// that stop cancels; a file taken keeps it until it is closed.
func (fa *filesAhead) start(ctx context.Context, t *scandv1.ScanTask) *aheadFile {
	actx, cancel := context.WithCancel(ctx)
	a := &aheadFile{task: t, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(a.done)
		a.o, a.err = fa.cfg.openTask(actx, t, true, fa.shared) // with its deletes (deletesahead.go)
	}()
	return a
}

// has says t is the next file to take.
func (fa *filesAhead) has(t *scandv1.ScanTask) bool {
	return fa != nil && len(fa.open) > 0 && fa.open[0].task == t
}

// take waits for the next file, hands it over (the caller closes it, which
// also ends its context) and starts one more.
func (fa *filesAhead) take(ctx context.Context) (*Opened, error) {
	a := fa.open[0]
	select {
	case <-a.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	fa.open = fa.open[1:]
	fa.fill(ctx)
	if a.err != nil {
		a.cancel()
		return nil, a.err
	}
	a.o.Done = andThen(a.o.Done, a.cancel)
	return a.o, nil
}

// takeLater hands the next file over to be read ahead of the stream
// (decodeahead.go) without waiting for it: the returned func waits (on
// any goroutine) and the caller closes what it returns. The file still
// counts against depth until giveBack.
func (fa *filesAhead) takeLater() func(context.Context) (*Opened, error) {
	a := fa.open[0]
	fa.open = fa.open[1:]
	fa.lent++
	return func(wctx context.Context) (*Opened, error) {
		select {
		case <-a.done:
		case <-wctx.Done():
			a.cancel()
			if <-a.done; a.o != nil {
				a.o.Close()
			}
			return nil, wctx.Err()
		}
		if a.err != nil {
			a.cancel()
			return nil, a.err
		}
		a.o.Done = andThen(a.o.Done, a.cancel)
		return a.o, nil
	}
}

// giveBack says a file taken with takeLater was reached or dropped: the
// next file starts.
func (fa *filesAhead) giveBack(ctx context.Context) {
	fa.lent--
	fa.fill(ctx)
}

// andThen is done followed by cancel.
func andThen(done func() error, cancel context.CancelFunc) func() error {
	return func() error {
		var err error
		if done != nil {
			err = done()
		}
		cancel()
		return err
	}
}

// stop cancels the files not taken and waits for their goroutines, then
// closes what they opened. It may be called more than once.
func (fa *filesAhead) stop() {
	if fa == nil {
		return
	}
	for _, a := range fa.open {
		a.cancel()
	}
	for _, a := range fa.open {
		<-a.done
		if a.o != nil {
			a.o.Close() // nothing was read from it
			fa.unread.Add(a.o.IO.Stats())
		}
	}
	fa.open, fa.started = nil, len(fa.tasks)
}
