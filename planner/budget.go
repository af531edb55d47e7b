package planner

import (
	"context"

	"github.com/scand/scand/planner/planmem"
	"github.com/scand/scand/scanner"
)

// Planning's memory is charged to Config.PlanMemory (package planmem):
// a plan opens a plan's account and prepays what its files will keep
// at a minimum (prepaidBytesPerFile each), so that plans wait whole for
// room before they hold anything; each file it opens gets a charge that
// the footer reader reserves what it decodes from
// (scanner.WithMetadataBudget) before decoding, and once the file is
// described the plan keeps, until it answers, what its state of the file
// still holds (keptBytes). Bloom filters read to prune are charged to the
// plan too, and skipped when the share has no room (groupBlooms). With
// footers read FooterConcurrency at a time and the kept state charged, a
// plan of 10,000 files holds a bounded batch of decoded footers at once,
// and concurrent plans wait for each other, or are refused
// (RESOURCE_EXHAUSTED) when the share is full of plans that all wait.

type planKey struct{}

// withPlan returns ctx carrying the plan's account.
func withPlan(ctx context.Context, p *planmem.Plan) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, planKey{}, p)
}

// planOf returns the plan's account ctx carries, or nil (not planning, or
// planning not charged).
func planOf(ctx context.Context) *planmem.Plan {
	p, _ := ctx.Value(planKey{}).(*planmem.Plan)
	return p
}

// withFileCharge returns ctx for opening a file charged to c (nil: not
// charged).
func withFileCharge(ctx context.Context, c *planmem.File) context.Context {
	if c == nil {
		return ctx
	}
	return scanner.WithMetadataBudget(ctx, c)
}

// Per-file plan state: the projection's schema and row group figures,
// the names kept for errors, the ticket's fields. A plan prepays
// prepaidBytesPerFile for each file, which covers what a narrow file
// keeps (a few columns, a row group), so that such plans never grow past
// what they prepaid.
const (
	prepaidBytesPerFile  = 2 << 10
	keptBytesPerFile     = 1 << 10
	keptBytesPerColumn   = 256
	keptBytesPerRowGroup = 32
)

// keptBytes estimates what a plan keeps of a described file until it
// answers. A filtered scan also keeps the file's statistics and late
// planner, which hold the open reader (its schema manifest and readers;
// the decoded footer itself is the metadata cache's, charged there): a
// column's worth more per column of the file, and the second projection.
func keptBytes(pf plannedFile, filtered bool) int64 {
	if pf.proj == nil {
		return keptBytesPerFile
	}
	n := keptBytesPerFile + keptBytesPerColumn*int64(len(pf.proj.Schema.Fields())+len(pf.names)) +
		keptBytesPerRowGroup*int64(len(pf.proj.Groups))
	if !filtered && pf.stats != nil {
		// Extremes without a filter keep the statistics of the projected
		// columns (extremes.go), as a filtered scan keeps its columns'.
		n += 2 * keptBytesPerColumn * int64(len(pf.proj.Schema.Fields()))
	}
	if filtered {
		if pf.schema != nil {
			n += 2 * keptBytesPerColumn * int64(len(pf.schema.Fields()))
		}
		if pf.readProj != nil && pf.readProj != pf.proj {
			n += keptBytesPerColumn*int64(len(pf.readProj.Schema.Fields())) + keptBytesPerRowGroup*int64(len(pf.readProj.Groups))
		}
	}
	return n
}
