package stream

import (
	"context"

	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// Endpoints of several files (ScanTask.more, docs/multifile.md): the
// planner packs whole small files, in listing order, into one endpoint up
// to the split bytes (package planner, pack.go); DoGet reads them one
// after another into one stream.
// The endpoint's limit and skip_rows count rows of the whole endpoint's
// output, so resuming (skip.go; the server's resume action) and limits work across file boundaries
// exactly as within one file: every file's size and version is pinned and
// checked, and decoding is deterministic.

// FileTasks are the tasks of an endpoint's files in order, each complete:
// the later files inherit the endpoint-wide fields of the head (the
// limit and skip_rows are set per file as the stream goes, nextFile).
func FileTasks(head *scandv1.ScanTask) []*scandv1.ScanTask {
	first := proto.CloneOf(head)
	first.More = nil
	out := []*scandv1.ScanTask{first}
	for _, m := range head.More {
		t := proto.CloneOf(m)
		t.BatchRows, t.Compression, t.RowFilter = head.BatchRows, head.Compression, head.RowFilter
		t.MaxMessageBytes, t.SchemaFingerprint = head.MaxMessageBytes, head.SchemaFingerprint
		out = append(out, t)
	}
	return out
}

// CheckMore refuses a ticket whose further files are malformed: the
// server never writes such tickets, and a signed one cannot be forged.
func CheckMore(task *scandv1.ScanTask) error {
	for _, m := range task.More {
		if m.GetPath() == "" || len(m.More) > 0 {
			return invalidf("ticket is not a scand ScanTask: pass the tickets of GetFlightInfo's endpoints unchanged")
		}
	}
	return nil
}

// TaskPaths are every file a task reads: its own, then its further files'.
func TaskPaths(task *scandv1.ScanTask) []string {
	out := []string{task.GetPath()}
	for _, m := range task.GetMore() {
		out = append(out, m.GetPath())
	}
	return out
}

// TaskRows are the rows of all of an endpoint's files.
func TaskRows(task *scandv1.ScanTask) int64 {
	rows := task.GetRows()
	for _, m := range task.GetMore() {
		rows += m.GetRows()
	}
	return rows
}

// runFiles is run for an endpoint of several files: one file after
// another into the one stream, each checked for changes (Recheck) once
// read, with the skip and the limit carried from file to file and the IO
// figures summed; the last file's batch carries them as usual. The next
// files open ahead of the one being read (ahead.go), until the last is
// reached or the limit is spent.
func (st *stream) runFiles(ctx context.Context, files []*scandv1.ScanTask) error {
	head := files[0]
	st.task = head
	st.vectors = st.cfg.openSharedVectors(ctx, files)
	st.ahead = st.cfg.newFilesAhead(files[1:], st.vectors)
	st.ahead.fill(ctx)
	var err error
	for i, t := range files {
		if i > 0 {
			st.nextFile(t, head.Limit > 0)
		}
		var next *scandv1.ScanTask
		if i+1 < len(files) {
			next = files[i+1]
		}
		if err = st.readFile(ctx, head, next); err != nil || st.limitReached() {
			break
		}
	}
	st.stopDecodeAhead() // before the last batch goes out: nothing more is read
	st.ahead.stop()
	if err == nil {
		err = st.finish()
	}
	st.logEnd(err)
	return err
}

// readFile opens, admits and reads the stream's current file (or takes
// it decoded ahead, decodeahead.go), and starts decoding next ahead
// (nil: the current file is the last); every file but the last is
// rechecked and closed here (finish does the last).
func (st *stream) readFile(ctx context.Context, head, next *scandv1.ScanTask) error {
	taken, err := st.takeDecoded(ctx)
	if err != nil {
		return err
	}
	if !taken {
		if err := st.open(ctx); err != nil {
			return err
		}
		if err := st.admit(ctx); err != nil {
			return err
		}
	}
	if next != nil && !st.limitReached() {
		st.startDecodeAhead(ctx, head, next)
	}
	if err := st.readAll(ctx); err != nil {
		return err
	}
	if next == nil || st.limitReached() {
		return nil
	}
	return st.doneWithFile()
}

// limitReached says the endpoint's limit is spent.
func (st *stream) limitReached() bool {
	return st.task.Limit > 0 && st.remaining == 0
}

// doneWithFile checks that the current file did not change under the
// stream, adds its IO figures to the stream's, and releases it.
func (st *stream) doneWithFile() error {
	if err := st.file.IO.Recheck(); err != nil {
		return err
	}
	st.file.IO.StopReadahead() // as finish does
	st.fillStats()
	st.done = proto.CloneOf(st.stats)
	st.file.Close()
	st.file = nil
	st.releaseDeletes()
	st.grant.Close()
	st.grant = nil
	st.read.Budget = nil
	return nil
}

// nextFile makes t the stream's current task, with the skip and the limit
// still to go: startAt computes remaining as limit minus skip.
func (st *stream) nextFile(t *scandv1.ScanTask, limited bool) {
	t.SkipRows = st.skip
	if limited {
		t.Limit = st.remaining + st.skip
	}
	st.task = t
}

// addIO adds the IO figures of the files read before the current one.
func addIO(to, done *scandv1.StreamStats) {
	if done == nil {
		return
	}
	to.Reads += done.Reads
	to.BytesFetched += done.BytesFetched
	to.BytesUsed += done.BytesUsed
	to.BytesPlanned += done.BytesPlanned
	to.BytesWasted += done.BytesWasted
	to.BytesUnused += done.BytesUnused
	to.CacheHits += done.CacheHits
	to.Hole = max(to.Hole, done.Hole) // a setting, not a count
	to.IoSeconds += done.IoSeconds
	to.IndexReads += done.IndexReads
	to.IndexBytesFetched += done.IndexBytesFetched
	to.PagesSkipped += done.PagesSkipped
	to.LateRowGroups += done.LateRowGroups
	to.BytesFromCache += done.BytesFromCache
}
