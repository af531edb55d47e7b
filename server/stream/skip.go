package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// startAt prepares a stream to skip its ticket's skip_rows: the limit
// counts the skipped rows, and without a filter the leading row groups
// whose rows are all skipped are dropped from the read, so a resumed
// stream does not decode again what the broken one sent. The rest is
// skipped batch by batch (skipRows).
func (st *stream) startAt() error {
	st.skip = st.task.SkipRows
	if st.skip < 0 {
		return invalidf("ticket's skip_rows %d is negative: pass the tickets of GetFlightInfo's endpoints or of the resume action unchanged", st.skip)
	}
	if st.task.Limit > 0 {
		st.remaining = max(0, st.task.Limit-st.skip)
	}
	if st.pred != nil || st.hasDeletes() {
		// Which rows pass, or which the file's deletes leave, is known
		// only once decoded: a group's row count is not its output.
		return nil
	}
	groups := st.read.Groups
	for len(groups) > 0 && st.readProj.Groups[groups[0]].Rows <= st.skip {
		st.skip -= st.readProj.Groups[groups[0]].Rows
		groups = groups[1:]
	}
	st.read.Groups = groups
	return nil
}

// nothingToRead says the stream's rows are all skipped or past its limit;
// it must then not call Read, whose empty group list means every group.
func (st *stream) nothingToRead() bool {
	return len(st.read.Groups) == 0 || (st.task.Limit > 0 && st.remaining == 0)
}

// skipRows drops the rows of rec still to be skipped; nil when the whole
// batch is. It takes ownership of rec.
func (st *stream) skipRows(rec arrow.RecordBatch) arrow.RecordBatch {
	n := rec.NumRows()
	if n <= st.skip {
		st.skip -= n
		rec.Release()
		return nil
	}
	rest := rec.NewSlice(st.skip, n)
	rec.Release()
	st.skip = 0
	return rest
}
