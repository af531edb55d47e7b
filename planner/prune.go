package planner

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/source"
)

// Pruning runs cheapest first, and counts what each level dropped in the
// plan's figures: hive partitions before any footer is read (the filter
// relaxed to the partition columns, filter.Relax), then whole files by
// their file-level statistics, then row groups (stripes) by theirs.
// filter.Predicate.MayMatch decides; a level that cannot decide keeps.

// prunePartitions returns the indexes of the files whose partition values
// may match the filter.
func prunePartitions(f *Filter, parts *partitions, listed []source.File, stats *scandv1.PlanStats) ([]int, error) {
	all := make([]int, len(listed))
	for i := range all {
		all[i] = i
	}
	if f == nil || len(parts.fields) == 0 {
		return all, nil
	}
	relaxed := filter.Relax(f.Expr, parts.has)
	if relaxed == nil {
		return all, nil
	}
	pred, err := filter.Bind(relaxed, arrow.NewSchema(parts.fields, nil))
	if err != nil {
		return nil, err
	}
	var kept []int
	for i, file := range listed {
		st, err := parts.stats(i)
		if err != nil {
			return nil, err
		}
		if pred.MayMatch(st) {
			kept = append(kept, i)
			continue
		}
		stats.FilesPrunedByPartition++
		stats.BytesWithoutFilter += file.Object.Size
	}
	return kept, nil
}

// pruneStats binds the filter to the scan's columns and drops the files
// and row groups whose statistics rule it out, setting each file's keep
// and the tickets' extra fields. Without a filter it only counts. With
// counted set (PlanCount), the row groups whose statistics prove the
// filter true on every row are dropped too, their rows added to counted.
func (pl *Planner) pruneStats(f *Filter, files []plannedFile, parts *partitions, tbl *table, stats *scandv1.PlanStats, counted *int64) error {
	if f == nil {
		for _, pf := range files {
			countFile(pf, stats)
		}
		return nil
	}
	schema := filterSchema(files, parts)
	if tbl != nil {
		schema = tbl.filterSchema() // table.go
	}
	pred, err := filter.Bind(f.Expr, schema)
	if err != nil {
		return err
	}
	types := columnTypes(schema)
	for i := range files {
		if files[i].keep != nil {
			continue // read for the schema only
		}
		if err := pruneFile(pred, &files[i], parts, types, stats, counted); err != nil {
			return err
		}
		files[i].extra = pl.extraFields(files[i], schema, pred.Columns())
	}
	return nil
}

// countFile adds an unpruned file to the plan's figures.
func countFile(pf plannedFile, stats *scandv1.PlanStats) {
	for _, i := range pf.groups() {
		g := pf.proj.Groups[i]
		stats.RowGroups++
		stats.BytesWithoutFilter += g.Bytes
		stats.BytesWithFilter += g.Bytes
		stats.RowsWithoutFilter += g.Rows
		stats.RowsWithFilter += g.Rows
	}
}

// pruneFile decides which of a file's row groups to keep; with counted
// set, a group the filter holds on wholly is counted instead of kept.
func pruneFile(pred *filter.Predicate, pf *plannedFile, parts *partitions, types map[string]arrow.DataType, stats *scandv1.PlanStats, counted *int64) error {
	pstats, err := parts.stats(pf.part)
	if err != nil {
		return err
	}
	groups := pf.readProj.Groups
	chosen := pf.groups()
	for _, g := range chosen {
		stats.RowGroups++
		stats.BytesWithoutFilter += pf.proj.Groups[g].Bytes
		stats.RowsWithoutFilter += groups[g].Rows
	}
	at := func(g int) filter.StatsSource {
		j := joinedStats{parts: pstats, types: types}
		if pf.stats != nil {
			j.file = pf.stats(g)
		}
		return j
	}
	pf.keep = make([]int, 0, len(chosen))
	if !pred.MayMatch(at(-1)) {
		stats.FilesPrunedByStats++
		stats.RowGroupsPruned += int64(len(chosen))
		return nil
	}
	wholeFile := counted != nil && pred.AllMatch(at(-1))
	for _, g := range chosen {
		if groups[g].Rows > 0 && !pred.MayMatch(at(g)) {
			stats.RowGroupsPruned++
			continue
		}
		if counted != nil && (wholeFile || pred.AllMatch(at(g))) {
			*counted += groups[g].Rows
			pf.counted += groups[g].Rows
			continue
		}
		pf.keep = append(pf.keep, g)
		stats.BytesWithFilter += groups[g].Bytes
		stats.RowsWithFilter += groups[g].Rows
	}
	return nil
}

// filterSchema is what a filter may name: every top-level column of every
// file (typed as the first file that has it says), and the partition
// columns.
func filterSchema(files []plannedFile, parts *partitions) *arrow.Schema {
	var fields []arrow.Field
	seen := map[string]bool{}
	for _, pf := range files {
		for _, fld := range pf.schema.Fields() {
			if !seen[fld.Name] {
				seen[fld.Name] = true
				fields = append(fields, plainField(fld))
			}
		}
	}
	return arrow.NewSchema(append(fields, parts.fields...), nil)
}

// columnTypes maps every column of s, by dotted name, to the type its
// statistics and bound literals have (filter.ValueType).
func columnTypes(s *arrow.Schema) map[string]arrow.DataType {
	out := map[string]arrow.DataType{}
	var walk func(prefix string, f arrow.Field)
	walk = func(prefix string, f arrow.Field) {
		name := prefix + f.Name
		out[name] = filter.ValueType(f.Type)
		if st, ok := f.Type.(*arrow.StructType); ok {
			for _, c := range st.Fields() {
				walk(name+".", c)
			}
		}
	}
	for _, f := range s.Fields() {
		walk("", f)
	}
	return out
}

// extraFields are the fields a filtered task needs that its file lacks:
// the partition columns the filter reads, and filter columns only other
// files have (see ScanTask.extra_fields).
func (pl *Planner) extraFields(pf plannedFile, schema *arrow.Schema, filterColumns []string) []byte {
	var fields []arrow.Field
	seen := map[string]bool{}
	for _, c := range filterColumns {
		top, _, _ := strings.Cut(c, ".")
		if seen[top] || pf.schema.HasField(top) {
			continue
		}
		seen[top] = true
		if i := schema.FieldIndices(top); len(i) > 0 {
			fields = append(fields, schema.Field(i[0]))
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return SerializeSchema(arrow.NewSchema(fields, nil), pl.cfg.Mem)
}

// finishPlanStats completes the plan's figures once its tasks are cut.
func finishPlanStats(p *Plan, f *Filter) {
	if f != nil {
		p.Stats.Filter = f.Expr.String()
		p.Stats.LateMaterialization = p.Late
	}
}
