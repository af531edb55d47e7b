package planner

import scandv1 "github.com/scand/scand/proto/scand/v1"

// Endpoints of several files (ScanTask.more, docs/multifile.md).
//
// A scan of many small files would otherwise cost one endpoint, one DoGet
// and its round trips per file, whatever split_bytes says. The planner
// packs whole small files, in listing order, into one endpoint up to the
// split bytes; DoGet then reads them one after another into one stream.
// The endpoint's limit and skip_rows count rows of the whole endpoint's
// output, so resuming and limits work across file boundaries exactly as
// within one file.

// maxFilesPerEndpoint caps the files packed into one endpoint, whatever
// the split bytes allow: it bounds a ticket's size (a few tens of bytes a
// file) and keeps a handful of endpoints for clients that read them in
// parallel (2,000 files of 1,000 rows: 8 endpoints).
const maxFilesPerEndpoint = 256

// packer packs consecutive whole small files into one endpoint. The zero
// value with target set packs nothing yet.
type packer struct {
	target   int64 // the split bytes
	filtered bool  // every task then carries the whole limit
	head     *scandv1.ScanTask
	bytes    int64 // projected, compressed bytes in the open endpoint
	rows     int64 // rows of the open endpoint's files, before the limit
	files    int
}

// join adds task, a split of bytes, to the open endpoint if it is a whole
// file (whole) that fits; then it is not an endpoint of its own. Otherwise
// task starts a new endpoint (open for more when it is a small whole
// file) and join says false.
func (pk *packer) join(task *scandv1.ScanTask, bytes int64, whole bool) bool {
	small := whole && bytes < pk.target
	if small && pk.head != nil && pk.bytes+bytes <= pk.target && pk.files < maxFilesPerEndpoint {
		pk.moveEndpointFields(task)
		pk.head.More = append(pk.head.More, task)
		pk.bytes += bytes
		pk.rows += task.Rows
		pk.files++
		return true
	}
	pk.head = nil
	if small { // with an unfiltered limit, task is the scan's last anyway
		pk.head, pk.bytes, pk.rows, pk.files = task, bytes, task.Rows, 1
	}
	return false
}

// moveEndpointFields clears the fields of a file's task that are the
// endpoint's (they are the head's), moving an unfiltered limit, which
// counts this file's rows, onto the head, where it counts the endpoint's.
func (pk *packer) moveEndpointFields(task *scandv1.ScanTask) {
	if task.Limit > 0 && !pk.filtered {
		pk.head.Limit = pk.rows + task.Limit
	}
	task.Limit, task.BatchRows, task.Compression, task.RowFilter, task.SkipRows = 0, 0, "", nil, 0
	task.MaxMessageBytes, task.SchemaFingerprint = 0, 0
}
