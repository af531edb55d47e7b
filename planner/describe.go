package planner

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/sync/errgroup"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// plannedFile is one file of a scan, with its projection resolved.
type plannedFile struct {
	info   storage.Info
	format scanner.Format
	proj   *scanner.Projection
	// columns is the request's column list as this file sees it (nil for
	// all columns), and names the file's column names, kept for the
	// unknown-column error.
	columns *scandv1.ColumnSelection
	names   []string
	// With a filter: the file's whole schema (the filter may name any of
	// its columns), the projection DoGet reads (the scan's columns and the
	// filter's), the statistics for pruning, and the row groups that
	// survive it (nil: every group).
	schema   *arrow.Schema
	readProj *scanner.Projection
	stats    func(g int) filter.StatsSource
	keep     []int
	// chosen are the row groups the source chose (source.File.RowGroups),
	// nil for all: pruning and splitting see only these.
	chosen []int
	// dropped are the groups bloom filters dropped after statistics kept
	// them (bloomprune.go).
	dropped []int
	// late predicts, for a split of the file's groups, whether a filtered
	// read goes late (lateplan.go); nil without a filter.
	late func(groups []int, mode scanner.LateMode) scanner.LatePlan
	// part is the file's index in the scan's partitions, and extra the
	// IPC-encoded fields its tickets carry (ScanTask.extra_fields).
	part  int
	extra []byte
	// A table's file (table.go): the names its tickets give its columns,
	// its deletes, and its name as the table's metadata writes it.
	columnNames []string
	nestedNames map[string]string // a table file's nested fields renamed (fieldid.NestedNames)
	deletes     []*scandv1.RowDeletes
	tablePath   string
	// partValues are the values of the partition columns the file lacks
	// (ScanTask.partition_values; partvalues.go).
	partValues []byte
	// counted are the rows of the file's row groups a count plan counted
	// from statistics instead of keeping (PlanCount).
	counted int64
}

// describe reads the footers of the chosen files (bounded in parallel) and
// projects each onto the requested columns, and with a filter onto the
// filter's columns too.
func (pl *Planner) describe(ctx context.Context, columns []string, f *Filter, listed []source.File, chosen []int, tbl *table, withStats bool) ([]plannedFile, error) {
	files := make([]plannedFile, len(chosen))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pl.cfg.FooterConcurrency)
	for i, at := range chosen {
		g.Go(func() error {
			charge := planOf(gctx).File() // budget.go
			o, err := pl.cfg.Open(withFileCharge(gctx, charge), listed[at].Object)
			if err != nil {
				charge.Keep(0)
				return err
			}
			defer o.Close()
			pl.logWarnings(o.File)
			var names []string
			var nested map[string]string
			var partValues []byte
			if tbl != nil { // table.go
				if names, nested, partValues, err = tbl.open(o, listed[at], pl.cfg.Mem); err != nil {
					charge.Keep(0)
					return err
				}
			}
			files[i], err = describeFile(o, columns, f, pl.cfg.Hole(listed[at].Object.Name))
			if err == nil && withStats && files[i].stats == nil {
				files[i].stats = statsOf(o.File) // extremes.go
			}
			if err == nil && tbl != nil {
				files[i].columnNames, files[i].nestedNames, files[i].tablePath, files[i].partValues = names, nested, listed[at].TablePath, partValues
				files[i].deletes, err = tbl.deletesOf(listed[at])
			}
			if err == nil {
				err = chooseGroups(&files[i], listed[at].RowGroups)
			}
			files[i].part = at
			charge.Keep(keptBytes(files[i], f != nil))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return files, nil
}

// logWarnings logs what a reader has to say about a file it reads.
func (pl *Planner) logWarnings(f scanner.File) {
	if w, ok := f.(scanner.Warner); ok {
		for _, msg := range w.Warnings() {
			pl.cfg.Log.Warn("file read with a warning", "warning", msg)
		}
	}
}

// describeFile projects one opened file.
func describeFile(o *Opened, columns []string, f *Filter, roundTrip int64) (plannedFile, error) {
	proj, err := o.File.Project(columns)
	if err != nil {
		return plannedFile{}, err
	}
	pf := plannedFile{info: o.Info, format: o.File.Format(), proj: proj, readProj: proj}
	if len(columns) > 0 {
		pf.names = scanner.ColumnNames(o.File.Schema())
		pf.columns = selectColumns(pf.names, columns)
	}
	if f == nil {
		return pf, nil
	}
	pf.schema = o.File.Schema()
	pf.stats = statsOf(o.File)
	if len(columns) > 0 {
		if pf.readProj, err = o.File.Project(ReadColumns(columns, f.columns())); err != nil {
			return plannedFile{}, err
		}
	}
	pf.late = latePlanOf(o.File, pf.readProj, f.columns(), roundTrip)
	return pf, nil
}

// chooseGroups restricts pf to the row groups its source chose (nil: all
// of them), checked against the file's.
func chooseGroups(pf *plannedFile, groups []int) error {
	if groups == nil {
		return nil
	}
	n := len(pf.proj.Groups)
	for _, g := range groups {
		if g < 0 || g >= n {
			return fmt.Errorf("%s: the source chose row group %d of %d", pf.info.Name, g, n)
		}
	}
	pf.chosen = slices.Clone(groups)
	return nil
}

// groups are the indexes of pf's row groups that pruning and splitting
// see: those its source chose, or all.
func (pf *plannedFile) groups() []int {
	if pf.chosen != nil {
		return pf.chosen
	}
	all := make([]int, len(pf.proj.Groups))
	for i := range all {
		all[i] = i
	}
	return all
}

// ReadColumns are the columns a filtered scan reads: the requested ones,
// then the filter's that are not among them.
func ReadColumns(columns, filterColumns []string) []string {
	out := slices.Clone(columns)
	for _, c := range filterColumns {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// unifiedSchema is the schema of every batch of the scan: the files'
// projections unified, with the hive partition columns: where the request
// names them, or after the files' columns when it asks for all. Named
// columns follow the projection rule of projection.go.
func unifiedSchema(columns []string, files []plannedFile, parts *partitions) (*arrow.Schema, error) {
	names := make([]string, len(files))
	schemas := make([]*arrow.Schema, len(files))
	for i, f := range files {
		names[i], schemas[i] = f.info.Name, f.proj.Schema
		for _, pf := range parts.fields {
			if f.proj.Schema.HasField(pf.Name) || (f.schema != nil && f.schema.HasField(pf.Name)) {
				return nil, invalidf("%s has a column %q, and its path names a hive partition of that name too: rename one of them", f.info.Name, pf.Name)
			}
		}
	}
	unified, err := scanner.Unify(names, schemas)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	meta := unified.Metadata() // the first file's, kept with partition columns too
	if len(columns) == 0 {
		if len(parts.fields) == 0 {
			return unified, nil
		}
		return arrow.NewSchema(append(slices.Clone(unified.Fields()), parts.fields...), &meta), nil
	}
	// Named columns: in request order (projection.go), which Unify's order
	// of first appearance is not when the first file lacks a column.
	return arrow.NewSchema(requestedFields(columns, unified, parts), &meta), nil
}

// unknownColumns fails with the requested columns no file has; files that
// lack a column another file has return nulls for it. Partition columns
// are known.
func unknownColumns(columns []string, files []plannedFile, parts *partitions) error {
	missing := map[string]int{}
	for _, f := range files {
		for _, m := range f.proj.Missing {
			missing[m]++
		}
	}
	var unknown []string
	for _, c := range columns {
		if missing[c] == len(files) && len(files) > 0 && !parts.has(c) {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	// Every file's columns, each once, in file order.
	var available []string
	seen := map[string]bool{}
	for _, f := range files {
		for _, n := range f.names {
			if !seen[n] {
				seen[n] = true
				available = append(available, n)
			}
		}
	}
	for _, pf := range parts.fields {
		available = append(available, pf.Name)
	}
	return &scanner.UnknownColumnError{Columns: scanner.SortedUnique(unknown), Available: available}
}

// kept are the row groups of pf to split into tasks: those pruning kept,
// else those its source chose; nil for all.
func (pf *plannedFile) kept() []int {
	if pf.keep != nil {
		return pf.keep
	}
	return pf.chosen
}
