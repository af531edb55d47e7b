package planner

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// A scan of no columns (ScanRequest.no_columns) is planned as the scan of
// what must be read to count its rows, every task marked rows_only so
// that DoGet sends the rows' count, not their values:
//   - without a filter, nothing: the tasks are the files' splits as for
//     any scan, and their rows come from the footers (a table's file with
//     deletes is the exception: its first column is read, counting the
//     rows that survive the deletes);
//   - with a filter (and no limit), the plan is a count plan (PlanCount):
//     row groups the statistics rule out are skipped, those they prove
//     true on every row get a task per file that reads nothing (its
//     rows), and the rest are read, the filter's first column alone.
// The plan's schema has no fields; its tasks keep the fingerprint of
// what they read.

// planNoColumns plans a scan of no columns.
func (pl *Planner) planNoColumns(ctx context.Context, req *scandv1.ScanRequest) (*Plan, error) {
	if n := len(req.GetColumns()); n > 0 {
		return nil, invalidf("no_columns reads no columns: leave columns empty (it names %d)", n)
	}
	f, err := ParseFilter(req.GetFilter(), req.GetFilterSubstrait())
	if err != nil {
		return nil, err
	}
	read := proto.Clone(req).(*scandv1.ScanRequest)
	if f != nil {
		read.Columns = f.columns()[:1]
	}
	p, err := pl.planWithin(ctx, read, planMode{count: f != nil && req.GetLimit() == 0})
	if err != nil {
		return nil, err
	}
	if f == nil && slices.ContainsFunc(p.Tasks, taskHasDeletes) && p.Schema.NumFields() > 0 {
		read.Columns = []string{p.Schema.Field(0).Name}
		if p, err = pl.planWithin(ctx, read, planMode{}); err != nil {
			return nil, err
		}
	}
	for _, t := range p.Tasks {
		t.RowsOnly = true
	}
	p.Schema = arrow.NewSchema(nil, nil)
	if f == nil && !slices.ContainsFunc(p.Tasks, taskHasDeletes) {
		p.Bytes = 0
	}
	return p, nil
}

func taskHasDeletes(t *scandv1.ScanTask) bool {
	if len(t.GetDeletes()) > 0 {
		return true
	}
	return slices.ContainsFunc(t.GetMore(), func(m *scandv1.ScanTask) bool { return len(m.GetDeletes()) > 0 })
}

// countedTasks are, for a count plan of no columns, one task per file
// whose row groups the statistics counted (plannedFile.counted): it reads
// nothing and sends that many rows. None for any other plan.
func countedTasks(req *scandv1.ScanRequest, files []plannedFile) []*scandv1.ScanTask {
	if !req.GetNoColumns() {
		return nil
	}
	var out []*scandv1.ScanTask
	for _, f := range files {
		if f.counted == 0 {
			continue
		}
		out = append(out, &scandv1.ScanTask{
			Path:            f.info.Name,
			Size:            f.info.Size,
			Version:         f.info.Version,
			Format:          formatProto(f.format),
			Rows:            f.counted,
			BatchRows:       req.BatchRows,
			MaxMessageBytes: req.MaxMessageBytes,
			Compression:     req.Compression,
			RowsOnly:        true,
		})
	}
	return out
}
