package planner

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/sync/errgroup"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
)

// Bloom filter pruning: the level after statistics (docs/indexes.md).
// Only a filter with = or IN terms asks for it, only the files with row
// groups left after statistics are reopened (their footers come from the
// metadata cache), and each reads only the filters of those groups and of
// the columns those terms name, in one announced batch of ranges.

// bloomFilterer is a file whose row groups (stripes) may have bloom
// filters: parquet.File and orc.File. GroupBlooms reads the filters of
// columns in groups, and returns each group's membership test; a group
// or column without a usable filter may contain anything.
type bloomFilterer interface {
	GroupBlooms(ctx context.Context, groups []int, columns []string) (func(g int) filter.Membership, error)
}

// budgetedBlooms is a bloomFilterer that charges the filter bytes it
// reads to a decode budget, skipping a filter the budget refuses
// (parquet.File).
type budgetedBlooms interface {
	GroupBloomsWithin(ctx context.Context, budget scanner.Reserver, groups []int, columns []string) (func(g int) filter.Membership, error)
}

// groupBlooms reads bf's filters of columns in groups, charged while they
// are read where bf can be charged: to the plan's account of the planning
// share when there is one (budget.go), else to a grant of the decode
// share. A plan reading filters holds their bytes like a stream holds its
// pages; growing the charge never waits, and a filter it has no room for
// is skipped, its group kept.
func (pl *Planner) groupBlooms(ctx context.Context, bf bloomFilterer, groups []int, columns []string) (func(g int) filter.Membership, error) {
	bb, ok := bf.(budgetedBlooms)
	if !ok {
		return bf.GroupBlooms(ctx, groups, columns)
	}
	if r := planOf(ctx).Reserver(); r != nil { // the planning share (budget.go)
		return bb.GroupBloomsWithin(ctx, r, groups, columns)
	}
	if pl.cfg.Admit == nil { // no admission control
		return bb.GroupBloomsWithin(ctx, nil, groups, columns)
	}
	r, done, err := pl.cfg.Admit(ctx)
	if err != nil {
		return nil, err
	}
	if done != nil {
		defer done()
	}
	return bb.GroupBloomsWithin(ctx, r, groups, columns)
}

// withMembership is a group's statistics with its bloom filters.
type withMembership struct {
	filter.StatsSource
	filter.Membership
}

// pruneBloom drops, from every file's kept row groups, those whose bloom
// filters rule out what the filter's = and IN terms need.
func (pl *Planner) pruneBloom(ctx context.Context, f *Filter, files []plannedFile, parts *partitions, stats *scandv1.PlanStats) error {
	if f == nil {
		return nil
	}
	pred, err := filter.Bind(f.Expr, filterSchema(files, parts))
	if err != nil {
		return err
	}
	// Partition columns live in paths, not files: they have no bloom
	// filter, and a filter on them alone must not reopen the files its
	// partitions kept.
	columns := slices.DeleteFunc(pred.EqualityColumns(), parts.has)
	if len(columns) == 0 {
		return nil
	}
	types := columnTypes(filterSchema(files, parts))
	pruned := make([]int64, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pl.cfg.FooterConcurrency)
	for i := range files {
		if len(files[i].keep) == 0 {
			continue
		}
		g.Go(func() error {
			n, err := pl.pruneFileBloom(gctx, pred, columns, &files[i], parts, types)
			pruned[i] = n
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, n := range pruned {
		stats.RowGroupsPrunedByBloom += n
		for _, gi := range files[i].dropped {
			stats.BytesWithFilter -= files[i].readProj.Groups[gi].Bytes
			stats.RowsWithFilter -= files[i].readProj.Groups[gi].Rows
		}
	}
	return nil
}

// pruneFileBloom reopens one file and drops the kept groups its bloom
// filters rule out, recording them in pf.dropped; it returns how many.
func (pl *Planner) pruneFileBloom(ctx context.Context, pred *filter.Predicate, columns []string, pf *plannedFile, parts *partitions, types map[string]arrow.DataType) (int64, error) {
	charge := planOf(ctx).File()
	defer charge.Keep(0)
	o, err := pl.cfg.Open(withFileCharge(ctx, charge), pf.info)
	if err != nil {
		return 0, err
	}
	defer o.Close()
	bf, ok := o.File.(bloomFilterer)
	if !ok {
		return 0, nil
	}
	member, err := pl.groupBlooms(ctx, bf, pf.keep, columns)
	if err != nil {
		return 0, err
	}
	pstats, err := parts.stats(pf.part)
	if err != nil {
		return 0, err
	}
	kept := pf.keep[:0:0]
	for _, g := range pf.keep {
		j := joinedStats{parts: pstats, types: types}
		if pf.stats != nil {
			j.file = pf.stats(g)
		}
		if pred.MayMatch(withMembership{StatsSource: j, Membership: member(g)}) {
			kept = append(kept, g)
			continue
		}
		pf.dropped = append(pf.dropped, g)
	}
	pf.keep = kept
	return int64(len(pf.dropped)), nil
}
