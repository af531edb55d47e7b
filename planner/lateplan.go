package planner

import (
	"fmt"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
)

// Late materialization in the plan: each endpoint of a filtered scan
// says whether its read is predicted to go late (PlanStats'
// late_materialization, printed by `scand explain`). The reader decides
// per row group while reading; the prediction is the same decision made
// from the footer alone (scanner.LatePlanner), so it costs no IO. What a
// stream then did is StreamStats' late_row_groups.

// latePlanOf returns, for a file of a filtered scan, the prediction for
// a split of its groups; a format without a LatePlanner (ORC) is read in
// one pass.
func latePlanOf(f scanner.File, readProj *scanner.Projection, filterColumns []string, roundTrip int64) func(groups []int, mode scanner.LateMode) scanner.LatePlan {
	lp, ok := f.(scanner.LatePlanner)
	if !ok {
		return func(groups []int, _ scanner.LateMode) scanner.LatePlan {
			return scanner.LatePlan{Strategy: "no", Reason: fmt.Sprintf("%s files are read in one pass", f.Format()), Groups: len(groups)}
		}
	}
	return func(groups []int, mode scanner.LateMode) scanner.LatePlan {
		return lp.PlanLate(readProj, groups, filterColumns, mode, roundTrip)
	}
}

// latePlan is the prediction for one split of pf, nil when the scan has
// no filter.
func (pl *Planner) latePlan(pf plannedFile, split []int) *scandv1.LatePlan {
	if pf.late == nil {
		return nil
	}
	if pl.cfg.MaxIndexBytes < 0 {
		return &scandv1.LatePlan{Strategy: "no", Reason: "the page index is not read (max index bytes < 0)", RowGroups: int64(len(split))}
	}
	lp := pf.late(split, pl.cfg.LateMaterialization)
	return &scandv1.LatePlan{Strategy: lp.Strategy, Reason: lp.Reason, LateRowGroups: int64(lp.LateGroups), RowGroups: int64(lp.Groups)}
}

// joinLate adds the prediction of a file packed into an endpoint (b) to
// the endpoint's (a).
func joinLate(a, b *scandv1.LatePlan) {
	if a == nil || b == nil {
		return
	}
	a.LateRowGroups += b.LateRowGroups
	a.RowGroups += b.RowGroups
	switch {
	case a.Strategy == b.Strategy && a.Strategy != "while reading":
	case a.LateRowGroups == 0:
		a.Strategy = "no"
	default:
		a.Strategy = "while reading"
		a.Reason = fmt.Sprintf("%d of %d row groups of the endpoint's files; %s", a.LateRowGroups, a.RowGroups, a.Reason)
	}
}
