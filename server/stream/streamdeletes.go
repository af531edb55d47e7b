package stream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/deletes"
	"github.com/scand/scand/scanner/parquet"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/source/fieldid"
	"github.com/scand/scand/storage"
)

// A table's data file may come with deletes (ScanTask.deletes): rows its
// table removed without rewriting the file. The stream reads them after
// admission, charged to its decode memory, then reads the file's chosen
// row groups whole and in order, counting the rows each batch takes from
// each group, so that it knows every row's position in the file, and
// removes the deleted rows from each batch before anything else
// (partition columns, filter, limit, skipped rows) sees it. One read of
// all the groups, not one per group: the reader announces every group's
// ranges at once, so the next group is fetched while one is decoded.
//
// Deletes make the decoded batches (a row group's rows, or less) smaller
// still, and small batches are gathered into one message (gather.go):
// copied once to drop the deleted rows, then again to concatenate them.
// So the kept rows of small batches are held back (fileDeletes.held) and
// copied once, straight into one batch of the stream's target size. A
// stream with a limit (which should stop decoding as soon as it can) or
// batch_rows (whose batches go out as decoded) takes each batch's rows
// as it comes. The held batches are whole decoded batches: they are
// bounded by their own bytes too, so that a file whose deletes leave few
// rows holds no more than the gather would.
//
// The reader is given no filter or limit for such a file: both let it
// leave out rows inside a row group, and positions must stay exact. Their
// bytes are
// fetched earlier, while the file opens or while the files before it are
// read (deletesahead.go).

// fileDeletes are the deletes of the stream's current file.
type fileDeletes struct {
	rows   *deletes.Rows // deleted positions; nil: none
	eq     []equalityDeletes
	budget *deleteBudget
	groups []deletes.Span // the chosen row groups' first rows and rows, in reading order
	at     int            // the group of the next batch's first row
	done   int64          // rows of groups[at] read

	held              []deletes.Part // small batches whose kept rows wait to go out as one
	heldRows, heldLen int64          // their kept rows, and those rows' bytes (estimated)
	heldBytes         int64          // the held batches' own bytes
}

// releaseHeld drops the batches held back.
func (fd *fileDeletes) releaseHeld() {
	for _, p := range fd.held {
		p.Rec.Release()
	}
	fd.held, fd.heldRows, fd.heldLen, fd.heldBytes = nil, 0, 0, 0
}

// spans takes the file spans of the next n rows the reader gives.
func (fd *fileDeletes) spans(n int64) ([]deletes.Span, error) {
	var out []deletes.Span
	for n > 0 {
		if fd.at >= len(fd.groups) {
			return nil, fmt.Errorf("the reader gave more rows than its row groups hold: %w", scanner.ErrCorrupt)
		}
		g := fd.groups[fd.at]
		if k := min(n, g.Rows-fd.done); k > 0 {
			out = append(out, deletes.Span{FirstRow: g.FirstRow + fd.done, Rows: k})
			fd.done += k
			n -= k
		}
		if fd.done == g.Rows {
			fd.at, fd.done = fd.at+1, 0
		}
	}
	return out, nil
}

type equalityDeletes struct {
	set     *deletes.EqualitySet
	columns []string // the key columns' scan names in the data file
}

// deleteBudget charges deletes to the stream's grant, up to the decode
// share: the grant's Reserve never refuses many small claims, but a
// file's deletes that outgrow the share could never be held.
type deleteBudget struct {
	grant *admission.Grant
	limit int64 // 0: no admission control, no limit
	held  int64
}

func (b *deleteBudget) Reserve(ctx context.Context, n int64) error {
	if b.limit > 0 && b.held+n > b.limit {
		return fmt.Errorf("%w: the file's deletes need more than %d bytes of decode memory (raise --io-memory or --io-decode-memory)", admission.ErrOverBudget, b.limit)
	}
	if err := b.grant.Reserve(ctx, n); err != nil {
		return err
	}
	b.held += n
	return nil
}

func (b *deleteBudget) Release(n int64) {
	b.grant.Release(n)
	b.held -= n
}

// hasDeletes says whether the stream's current file has deletes.
func (st *stream) hasDeletes() bool { return len(st.task.Deletes) > 0 }

// loadDeletes reads the current file's deletes (after admit).
func (st *stream) loadDeletes(ctx context.Context) error {
	st.releaseDeletes()
	if !st.hasDeletes() {
		return nil
	}
	fd := &fileDeletes{budget: &deleteBudget{grant: st.grant, limit: st.cfg.Admission.Stats().Capacity}}
	st.deletes = fd
	dataPath := st.task.TablePath
	if dataPath == "" {
		dataPath = st.task.Path
	}
	for i, d := range st.task.Deletes {
		var err error
		switch d.Kind {
		case scandv1.RowDeletes_DELETION_VECTOR:
			err = st.loadVector(ctx, i, d)
		case scandv1.RowDeletes_POSITION:
			err = st.loadPositions(ctx, i, d, dataPath)
		case scandv1.RowDeletes_EQUALITY:
			err = st.loadEquality(ctx, i, d)
		default:
			err = invalidf("ticket has deletes of unknown kind %d: pass GetFlightInfo's tickets unchanged", d.Kind)
		}
		if errors.Is(err, fs.ErrNotExist) {
			// The table's metadata names a delete file that is gone: reading
			// the data file without it would return deleted rows, so the
			// table is damaged (DATA_LOSS), not merely missing a file.
			return fmt.Errorf("%s: its delete file %s is missing (%v): the table is damaged; its rows are not read without their deletes: %w",
				st.task.Path, d.Path, err, scanner.ErrCorrupt)
		}
		if err != nil {
			return fmt.Errorf("%s: deletes %s: %w", st.task.Path, d.Path, err)
		}
	}
	return nil
}

func (st *stream) addRows(ctx context.Context, r *deletes.Rows) error {
	if st.deletes.rows == nil {
		st.deletes.rows = r
		return nil
	}
	return st.deletes.rows.Union(ctx, r)
}

func deleteInfo(d *scandv1.RowDeletes) storage.Info {
	return storage.Info{Name: d.Path, Size: d.Size, Version: d.Version}
}

// vectorRangeValid says a deletion vector's range lies in its file.
func vectorRangeValid(d *scandv1.RowDeletes) bool {
	return d.Length > 0 && d.Offset >= 0 && (d.Size <= 0 || d.Offset+d.Length <= d.Size)
}

// loadVector loads the i-th deletes of the file, a deletion vector.
func (st *stream) loadVector(ctx context.Context, i int, d *scandv1.RowDeletes) error {
	b := st.deletes.budget
	if len(d.Inline) > 0 {
		r, err := deletes.LoadDeletionVector(ctx, b, d.Inline, d.Cardinality)
		if err != nil {
			return err
		}
		return st.addRows(ctx, r)
	}
	if !vectorRangeValid(d) {
		return invalidf("deletion vector at %d+%d of a file of %d bytes: pass GetFlightInfo's tickets unchanged", d.Offset, d.Length, d.Size)
	}
	// Opened before, its range announced (deletesahead.go): the stream's
	// shared vector file, which it closes at its end, or this file's own.
	f := st.vectors.file(d)
	if f == nil {
		if f = st.file.deletes.vector(i); f == nil {
			var err error
			if f, err = st.cfg.Scheduler.Open(ctx, deleteInfo(d)); err != nil {
				return err
			}
		}
		defer f.Close()
	}
	if err := st.cfg.CheckFile(ctx, f.Info()); err != nil {
		return err
	}
	if err := b.Reserve(ctx, d.Length); err != nil {
		return err
	}
	defer b.Release(d.Length)
	buf := make([]byte, d.Length)
	if _, err := f.ReadAt(buf, d.Offset); err != nil {
		return err
	}
	r, err := deletes.LoadDeletionVector(ctx, b, buf, d.Cardinality)
	if err != nil {
		return err
	}
	return st.addRows(ctx, r)
}

// openDeleteFile opens the i-th deletes' file, or takes it from those
// made ready ahead (deletesahead.go).
func (st *stream) openDeleteFile(ctx context.Context, i int, d *scandv1.RowDeletes) (*Opened, error) {
	if o := st.file.deletes.file(i); o != nil {
		return o, nil
	}
	return st.cfg.Open(ctx, deleteInfo(d))
}

// readDeleteFile reads the columns of o, a whole delete file.
func (st *stream) readDeleteFile(ctx context.Context, o *Opened, columns []string, emit func(arrow.RecordBatch) error) error {
	p, err := o.File.Project(columns)
	if err != nil {
		return err
	}
	if len(p.Missing) > 0 {
		return fmt.Errorf("delete file lacks columns %v: %w", p.Missing, scanner.ErrCorrupt)
	}
	groups := make([]int, len(p.Groups))
	for i := range groups {
		groups[i] = i
	}
	err = o.File.Read(ctx, p, scanner.ReadOptions{Groups: groups, Mem: st.cfg.Mem, Budget: st.deletes.budget}, emit)
	if err == nil {
		err = o.IO.Recheck()
	}
	return err
}

func (st *stream) loadPositions(ctx context.Context, i int, d *scandv1.RowDeletes, dataPath string) error {
	o, err := st.openDeleteFile(ctx, i, d)
	if err != nil {
		return err
	}
	defer o.Close()
	p := deletes.NewPositions(dataPath, st.deletes.budget)
	err = st.readDeleteFile(ctx, o, []string{deletes.PositionFilePathColumn, deletes.PositionPosColumn}, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		return p.Add(ctx, rec)
	})
	r := p.Rows()
	if err != nil {
		r.Release()
		return err
	}
	return st.addRows(ctx, r)
}

func (st *stream) loadEquality(ctx context.Context, i int, d *scandv1.RowDeletes) error {
	if len(d.EqualityFieldIds) == 0 || len(d.EqualityFieldIds) != len(d.EqualityColumns) {
		return invalidf("equality deletes name %d field ids and %d columns: pass GetFlightInfo's tickets unchanged", len(d.EqualityFieldIds), len(d.EqualityColumns))
	}
	// The delete file names the key columns by field id: it may have been
	// written before a column was renamed.
	o, err := st.openDeleteFile(ctx, i, d)
	if err != nil {
		return err
	}
	defer o.Close()
	names := make([]string, len(d.EqualityFieldIds))
	for k, id := range d.EqualityFieldIds {
		for _, f := range o.File.Schema().Fields() {
			if fid, ok := fieldid.ID(f); ok && fid == int(id) {
				names[k] = f.Name
			}
		}
		if names[k] == "" {
			return fmt.Errorf("equality delete file has no column of field id %d: %w", id, scanner.ErrCorrupt)
		}
	}
	set := deletes.NewEqualitySet(len(names), st.deletes.budget)
	cols := make([]int, len(names))
	for k := range cols {
		cols[k] = k
	}
	err = st.readDeleteFile(ctx, o, names, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		return set.Add(ctx, rec, cols)
	})
	if err != nil {
		set.Release()
		return err
	}
	st.deletes.eq = append(st.deletes.eq, equalityDeletes{set: set, columns: d.EqualityColumns})
	return nil
}

// equalityColumns are the data columns the file's equality deletes read.
func (st *stream) equalityColumns() []string {
	var out []string
	for _, d := range st.task.Deletes {
		if d.Kind == scandv1.RowDeletes_EQUALITY {
			out = append(out, d.EqualityColumns...)
		}
	}
	return out
}

// releaseDeletes gives the current file's deletes' memory back.
func (st *stream) releaseDeletes() {
	if st.deletes == nil {
		return
	}
	st.deletes.rows.Release()
	st.deletes.releaseHeld()
	for _, e := range st.deletes.eq {
		e.set.Release()
	}
	st.deletes = nil
}

// readWithDeletes reads the chosen row groups, knowing the file position
// of each group's first row.
func (st *stream) readWithDeletes(ctx context.Context) error {
	st.beginDeletes()
	defer st.deletes.releaseHeld()
	if err := st.file.File.Read(ctx, st.readProj, st.read, scanner.DecodeSpans(ctx, st.task.Path, st.emitDeleted)); err != nil {
		return err
	}
	return st.endDeletes()
}

// beginDeletes readies the file's deletes for its batches (emitDeleted):
// the file position of each chosen group's first row.
func (st *stream) beginDeletes() {
	starts := make([]int64, len(st.readProj.Groups))
	var pos int64
	for g, gr := range st.readProj.Groups {
		starts[g] = pos
		pos += gr.Rows
	}
	fd := st.deletes
	fd.groups, fd.at, fd.done = fd.groups[:0], 0, 0
	for _, g := range st.read.Groups {
		fd.groups = append(fd.groups, deletes.Span{FirstRow: starts[g], Rows: st.readProj.Groups[g].Rows})
	}
}

// endDeletes checks that the batches covered the groups exactly and sends
// what is held back.
func (st *stream) endDeletes() error {
	fd := st.deletes
	// Fewer rows than the groups hold would have put the rows read at
	// positions that were not theirs.
	for fd.at < len(fd.groups) && fd.groups[fd.at].Rows == fd.done {
		fd.at, fd.done = fd.at+1, 0
	}
	if fd.at != len(fd.groups) {
		return fmt.Errorf("%s: the reader gave fewer rows than its row groups hold: %w", st.task.Path, scanner.ErrCorrupt)
	}
	return st.flushHeld()
}

// emitDeleted takes the reader's next batch: its position deletes applied
// and emitted, or held back with the other small ones. It takes over rec.
func (st *stream) emitDeleted(rec arrow.RecordBatch) error {
	fd := st.deletes
	n := rec.NumRows()
	spans, err := fd.spans(n)
	if err != nil {
		rec.Release()
		return fmt.Errorf("%s: %w", st.task.Path, err)
	}
	p, err := deletes.Select(rec, spans, fd.rows)
	if err != nil {
		rec.Release()
		return fmt.Errorf("%s: %w", st.task.Path, err)
	}
	if st.task.Limit > 0 || st.task.BatchRows > 0 {
		out, err := st.takeOne(p)
		rec.Release()
		if err != nil {
			return err
		}
		return st.emit(out)
	}
	if p.Kept == 0 {
		rec.Release()
		return nil
	}
	whole := BatchBytes(rec)
	bytes := whole
	if p.Kept < n {
		bytes = whole / n * p.Kept
	}
	if !st.fits(2*p.Kept, 2*bytes) { // half the target or more: goes out by itself
		err := st.flushHeld()
		if err == nil {
			var out arrow.RecordBatch
			if out, err = st.takeOne(p); err == nil {
				err = st.emit(out)
			}
		}
		rec.Release()
		return err
	}
	if len(fd.held) > 0 && (!st.fits(fd.heldRows+p.Kept, fd.heldLen+bytes) || fd.heldBytes+whole > st.size.target) {
		if err := st.flushHeld(); err != nil {
			rec.Release()
			return err
		}
	}
	fd.held = append(fd.held, p)
	fd.heldRows += p.Kept
	fd.heldLen += bytes
	fd.heldBytes += whole
	return nil
}

// takeOne is the kept rows of one part, a new batch or the part's batch
// itself, retained when nothing of it is deleted.
func (st *stream) takeOne(p deletes.Part) (arrow.RecordBatch, error) {
	switch p.Kept {
	case p.Rec.NumRows():
		p.Rec.Retain()
		return p.Rec, nil
	case 0:
		return p.Rec.NewSlice(0, 0), nil
	}
	out, err := deletes.Take(st.out.Context(), []deletes.Part{p}, parquet.ArrayAllocator(st.cfg.Mem))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.task.Path, err)
	}
	return out, nil
}

// flushHeld emits the kept rows of the batches held back, as one batch,
// or one by one when their columns do not join (dictionaries that do not
// unify).
func (st *stream) flushHeld() error {
	fd := st.deletes
	if len(fd.held) == 0 {
		return nil
	}
	defer fd.releaseHeld()
	if len(fd.held) > 1 {
		if out, err := deletes.Take(st.out.Context(), fd.held, parquet.ArrayAllocator(st.cfg.Mem)); err == nil {
			return st.emit(out)
		}
	}
	for _, p := range fd.held {
		out, err := st.takeOne(p)
		if err == nil {
			err = st.emit(out)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// applyDeletes removes from rec, a batch whose position deletes are
// applied (emitDeleted), the rows the file's equality deletes match. It
// takes over rec.
func (st *stream) applyDeletes(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	fd := st.deletes
	if fd == nil {
		return rec, nil
	}
	ctx := st.out.Context()
	out := rec
	for _, e := range fd.eq {
		cols := make([]int, len(e.columns))
		for i, c := range e.columns {
			idx := out.Schema().FieldIndices(c)
			if len(idx) == 0 {
				out.Release()
				return nil, fmt.Errorf("%s: equality delete key column %q is not in the file: %w", st.task.Path, c, scanner.ErrUnsupported)
			}
			cols[i] = idx[0]
		}
		next, err := e.set.Apply(ctx, out, cols, st.cfg.Mem)
		out.Release()
		if err != nil {
			return nil, err
		}
		out = next
	}
	return out, nil
}
