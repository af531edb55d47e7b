package planner

import (
	"cmp"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
)

// planTasks cuts every file into splits of about the split bytes, one task
// each, and packs consecutive whole small files into one task (packer).
// Without a filter it stops once the request's limit is covered;
// with one, the rows a split returns are not known, so every task carries
// the whole limit (clients stop reading once they have it). Every task
// carries the fingerprint of unified, and every file's delta must rebuild
// unified exactly (projection.go), or planning fails with INTERNAL.
func (pl *Planner) planTasks(req *scandv1.ScanRequest, unified *arrow.Schema, files []plannedFile) (*Plan, error) {
	splitBytes := cmp.Or(req.SplitBytes, pl.cfg.SplitBytes)
	p := &Plan{Schema: unified}
	filtered := req.GetFilter() != "" || len(req.GetFilterSubstrait()) > 0
	// Deleted rows make a file's rows fewer than its footer says: a limit
	// is then planned as a filter's is, every task carrying all of it.
	filtered = filtered || slices.ContainsFunc(files, func(f plannedFile) bool { return len(f.deletes) > 0 })
	remaining := req.Limit
	pack := &packer{target: splitBytes, filtered: filtered} // whole small files share endpoints (pack.go)
	fingerprint := SchemaFingerprint(unified)
	for _, f := range files {
		delta := SchemaDelta(f.proj.Schema, unified, pl.cfg.Mem)
		if err := CheckPlannedSchema(f.info.Name, f.proj.Schema, delta, unified, pl.cfg.Mem); err != nil {
			return nil, err
		}
		read := cmp.Or(f.readProj, f.proj)
		splits := splitGroups(read.Groups, f.kept(), splitBytes)
		for _, split := range splits {
			task := newTask(req, f, split, delta)
			task.SchemaFingerprint = fingerprint
			rows, bytes := splitTotals(read, split)
			task.Rows = rows
			switch {
			case req.Limit > 0 && filtered:
				task.Limit, rows = req.Limit, min(rows, req.Limit)
			case req.Limit > 0 && rows >= remaining:
				task.Limit, rows = remaining, remaining
			}
			late := pl.latePlan(f, split)
			if !pack.join(task, bytes, len(splits) == 1) {
				p.Tasks = append(p.Tasks, task)
				p.Late = append(p.Late, late)
			} else {
				joinLate(p.Late[len(p.Late)-1], late) // the open endpoint is the last
			}
			p.Rows += rows
			p.Bytes += bytes
			if req.Limit > 0 && !filtered {
				if remaining -= rows; remaining == 0 {
					return p, nil
				}
			}
		}
	}
	if filtered && req.Limit > 0 {
		p.Rows = min(p.Rows, req.Limit)
	}
	return p, nil
}

// newTask is the ticket of one split of f.
func newTask(req *scandv1.ScanRequest, f plannedFile, split []int, delta *scandv1.SchemaDelta) *scandv1.ScanTask {
	task := &scandv1.ScanTask{
		Path:        f.info.Name,
		Size:        f.info.Size,
		Version:     f.info.Version,
		Format:      formatProto(f.format),
		RowGroups:   toInt32(split),
		Columns:     f.columns,
		BatchRows:   req.BatchRows,
		SchemaDelta: delta,
		// Kept as sent: the stream clamps it (messageSizeFor).
		MaxMessageBytes: req.MaxMessageBytes,
		Compression:     req.Compression,
		ExtraFields:     f.extra,
		Deletes:         f.deletes,
		TablePath:       f.tablePath,
		ColumnNames:     f.columnNames,
		NestedNames:     f.nestedNames,
		PartitionValues: f.partValues,
	}
	switch {
	case req.GetFilter() != "":
		task.RowFilter = &scandv1.ScanTask_Filter{Filter: req.GetFilter()}
	case len(req.GetFilterSubstrait()) > 0:
		task.RowFilter = &scandv1.ScanTask_FilterSubstrait{FilterSubstrait: req.GetFilterSubstrait()}
	}
	return task
}

// splitTotals sums the rows and projected, compressed bytes of a split.
func splitTotals(p *scanner.Projection, split []int) (rows, bytes int64) {
	for _, g := range split {
		rows += p.Groups[g].Rows
		bytes += p.Groups[g].Bytes
	}
	return rows, bytes
}

// splitGroups cuts a file's row groups (those in keep, or all when keep
// is nil) into runs of about target projected bytes each. A group is never
// divided; groups without rows are skipped.
func splitGroups(groups []scanner.Group, keep []int, target int64) [][]int {
	if keep == nil {
		keep = make([]int, len(groups))
		for i := range keep {
			keep[i] = i
		}
	}
	var out [][]int
	var cur []int
	var size int64
	for _, i := range keep {
		g := groups[i]
		if g.Rows == 0 {
			continue
		}
		if len(cur) > 0 && size+g.Bytes > target {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += g.Bytes
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func toInt32(s []int) []int32 {
	out := make([]int32, 0, len(s))
	for _, v := range s {
		out = append(out, int32(v))
	}
	return out
}

func formatProto(f scanner.Format) scandv1.Format {
	switch f {
	case scanner.FormatParquet:
		return scandv1.Format_FORMAT_PARQUET
	case scanner.FormatORC:
		return scandv1.Format_FORMAT_ORC
	}
	return scandv1.Format_FORMAT_UNSPECIFIED
}
