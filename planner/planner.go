package planner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/planner/planmem"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/filter"
	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// Defaults of Config.
const (
	// DefaultSplitBytes is the target of projected, compressed bytes per
	// task: large enough that per-stream overhead is noise, small enough
	// that a scan of a big file spreads over several streams.
	DefaultSplitBytes = 64 << 20
	// DefaultFooterConcurrency bounds how many footers one request reads
	// at once when Config.FooterConcurrency is 0: enough to keep a local
	// disk busy. Object stores are latency-bound (a footer costs a round
	// trip, not bandwidth), so cmd/scand raises it with S3 configured.
	DefaultFooterConcurrency = 8
	// DefaultTimeout bounds one plan when Config.Timeout is 0.
	DefaultTimeout = 2 * time.Minute
)

// Config is what the planner needs from the process that runs it: how to
// find a request's source and open its files, and the budgets and knobs
// that shape a plan. Everything that touches a store, a caller or a
// connection is passed in.
type Config struct {
	// Resolve returns the source a request names (its paths, or a
	// table). It carries the caller's scope: a source lists only what
	// the caller may read. Required.
	Resolve func(ctx context.Context, req *scandv1.ScanRequest) (source.Source, error)
	// Open opens a listed file and its format's reader (through the IO
	// scheduler, checking what was opened against the caller's scope).
	// Required.
	Open func(ctx context.Context, info storage.Info) (*Opened, error)
	// Hole is the gap worth reading through for a file, as the IO
	// scheduler learned it (iosched.Scheduler.Hole); nil means 0.
	Hole func(name string) int64
	// Admit grants a decode-memory reservation for bloom filters read
	// while planning when PlanMemory is nil (admission.Controller.Admit);
	// nil, or a nil Reserver, means not charged. done releases it.
	Admit func(ctx context.Context) (r scanner.Reserver, done func(), err error)
	// PlanMemory is the planning share of the IO memory: the footers a
	// plan decodes and what it keeps are charged to it (budget.go); nil
	// means planning is not charged.
	PlanMemory *planmem.Budget
	// Mem allocates the schemas a plan serializes; nil means
	// memory.DefaultAllocator.
	Mem memory.Allocator
	// Log receives the readers' warnings about the files planned; nil
	// means slog.Default().
	Log *slog.Logger
	// SplitBytes is the target of projected, compressed bytes per task
	// when a request names none; 0 = DefaultSplitBytes.
	SplitBytes int64
	// Timeout bounds one plan (listing, footers); 0 = DefaultTimeout.
	Timeout time.Duration
	// FooterConcurrency bounds the footers one plan reads at once; 0 =
	// DefaultFooterConcurrency.
	FooterConcurrency int
	// MaxIndexBytes is the streams' page index cap: negative means no
	// page index, so no read is predicted to go late.
	MaxIndexBytes int64
	// LateMaterialization is the streams' mode, for the predictions.
	LateMaterialization scanner.LateMode
}

// Opened is a file open for reading its footer.
type Opened struct {
	File scanner.File
	// Info is what was opened (the version pinned).
	Info  storage.Info
	Close func() error
}

// Planner turns requests into plans. It holds no state between plans and
// is safe for concurrent use.
type Planner struct {
	cfg Config
}

// New returns a planner for cfg.
func New(cfg Config) (*Planner, error) {
	if cfg.Resolve == nil || cfg.Open == nil {
		return nil, errors.New("planner: Config.Resolve and Config.Open are required")
	}
	cfg.SplitBytes = cmp.Or(max(cfg.SplitBytes, 0), DefaultSplitBytes)
	cfg.FooterConcurrency = cmp.Or(max(cfg.FooterConcurrency, 0), DefaultFooterConcurrency)
	cfg.Timeout = cmp.Or(max(cfg.Timeout, 0), DefaultTimeout)
	if cfg.Mem == nil {
		cfg.Mem = memory.DefaultAllocator
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Hole == nil {
		cfg.Hole = func(string) int64 { return 0 }
	}
	return &Planner{cfg: cfg}, nil
}

// Plan is a scan planned: the unified schema and the tasks, one per
// endpoint, with their totals and what pruning kept.
type Plan struct {
	Schema *arrow.Schema
	Tasks  []*scandv1.ScanTask
	// Rows and Bytes are the tasks' rows (after the limit) and projected,
	// compressed bytes.
	Rows, Bytes int64
	// Stats are what pruning kept, for FlightInfo's app_metadata.
	Stats *scandv1.PlanStats
	// Late is each task's late-materialization prediction (nil entries
	// without a filter).
	Late []*scandv1.LatePlan
	// Counted are the rows of the row groups whose statistics prove the
	// filter true on every row (filter.Predicate.AllMatch): PlanCount
	// counts them here and gives them no task. Always 0 from Plan.
	Counted int64
	// Extremes are, per column PlanExtremes named, the least and greatest
	// values of the row groups exact statistics answered for (and the
	// filter held on wholly), which have no task; nil from Plan.
	Extremes map[string]filter.ColumnStats
}

// Plan plans req within Config.Timeout: resolve the source, list its
// files, prune partitions (and a table's files by the statistics its
// metadata records), read the footers of what is left, find unknown
// columns, unify the schemas, prune by statistics and bloom filters, and
// split into tasks.
func (pl *Planner) Plan(ctx context.Context, req *scandv1.ScanRequest) (*Plan, error) {
	if req.GetNoColumns() {
		return pl.planNoColumns(ctx, req) // rowsonly.go
	}
	return pl.planWithin(ctx, req, planMode{})
}

// PlanCount plans req for counting its rows: as Plan, except that the
// row groups whose statistics prove the filter true on every row are not
// read but counted (Plan.Counted), so that the rows are Counted plus the
// rows the tasks return. Without a filter every row group has a task (its
// rows are the plan's Rows already). The request must have no limit.
func (pl *Planner) PlanCount(ctx context.Context, req *scandv1.ScanRequest) (*Plan, error) {
	if req.GetLimit() != 0 {
		return nil, invalidf("a count plans no limit (got %d)", req.GetLimit())
	}
	return pl.planWithin(ctx, req, planMode{count: true})
}

// planMode says what a plan is for besides reading rows.
type planMode struct {
	// count: PlanCount's counting of the row groups the filter holds on.
	count bool
	// extremes: PlanExtremes' columns, whose least and greatest values
	// come from exact statistics where they can.
	extremes []string
}

func (pl *Planner) planWithin(ctx context.Context, req *scandv1.ScanRequest, mode planMode) (*Plan, error) {
	pctx, cancel := context.WithTimeout(ctx, pl.cfg.Timeout)
	defer cancel()
	p, err := pl.plan(pctx, req, mode)
	if err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return nil, &Error{Kind: DeadlineExceeded, Msg: fmt.Sprintf(
			"planning the scan took longer than %v (--plan-timeout): name fewer files, or narrower globs or prefixes", pl.cfg.Timeout)}
	}
	return p, err
}

// plan is Plan's pipeline, step by step.
func (pl *Planner) plan(ctx context.Context, req *scandv1.ScanRequest, mode planMode) (*Plan, error) {
	pm := pl.cfg.PlanMemory.Begin() // budget.go
	defer pm.End()
	ctx = withPlan(ctx, pm)
	f, err := ParseFilter(req.GetFilter(), req.GetFilterSubstrait())
	if err != nil {
		return nil, err
	}
	listing, err := pl.list(ctx, req)
	if err != nil {
		return nil, err
	}
	tbl := tableOf(listing) // table.go; nil for files
	if tbl != nil {
		if err := checkTable(listing, req.Columns); err != nil {
			return nil, err
		}
	}
	parts := partitionsOf(listing)
	stats := &scandv1.PlanStats{Files: int64(len(listing.Files))}
	if t := listing.Table; t != nil {
		stats.ManifestsRead, stats.ManifestsSkipped = t.ManifestsRead, t.ManifestsSkipped
		stats.TableFilesPruned, stats.DeleteFiles = t.DataFilesPruned, t.DeleteFiles
	}
	chosen, err := prunePartitions(f, parts, listing.Files, stats)
	if err != nil {
		return nil, err
	}
	if tbl != nil {
		if chosen, err = tbl.pruneFiles(f, parts, listing.Files, chosen, stats); err != nil { // table.go
			return nil, err
		}
	}
	schemaOnly := len(chosen) == 0 && len(listing.Files) > 0 && tbl == nil
	if schemaOnly {
		// Every partition is pruned; one footer still gives the schema
		// (a table's schema is its own).
		chosen = []int{0}
	}
	if err := pm.Prepay(ctx, prepaidBytesPerFile*int64(len(chosen)), fmt.Sprintf("planning %d files", len(chosen))); err != nil {
		return nil, err
	}
	files, err := pl.describe(ctx, req.Columns, f, listing.Files, chosen, tbl, mode.extremes != nil)
	if err != nil {
		return nil, err
	}
	if schemaOnly {
		files[0].keep = []int{}
	}
	var unified *arrow.Schema
	if tbl != nil {
		unified = tbl.schemaFor(req.Columns)
	} else {
		if err := unknownColumns(req.Columns, files, parts); err != nil {
			return nil, err
		}
		if unified, err = unifiedSchema(req.Columns, files, parts); err != nil {
			return nil, err
		}
	}
	var counted *int64
	if mode.count && !tbl.hasDeletes(files) { // table.go: deleted rows are not in the statistics
		counted = new(int64)
	}
	if err := pl.pruneStats(f, files, parts, tbl, stats, counted); err != nil {
		return nil, err
	}
	if tbl == nil { // a table's files are not opened again by their own names
		if err := pl.pruneBloom(ctx, f, files, parts, stats); err != nil {
			return nil, err
		}
	}
	var extremes map[string]filter.ColumnStats
	if mode.extremes != nil && !tbl.hasDeletes(files) {
		if extremes, err = takeExtremes(f, files, parts, tbl, unified, mode.extremes); err != nil { // extremes.go
			return nil, err
		}
	}
	countedFiles := countedTasks(req, files) // rowsonly.go; before files are dropped
	files = slices.DeleteFunc(files, func(pf plannedFile) bool { return pf.keep != nil && len(pf.keep) == 0 })
	if tbl != nil && listing.Table == nil {
		stats.DeleteFiles = deleteFiles(files) // table.go
	}
	p, err := pl.planTasks(req, unified, files)
	if err != nil {
		return nil, err
	}
	for _, t := range countedFiles {
		p.Tasks = append(p.Tasks, t)
		p.Late = append(p.Late, nil)
		p.Rows += t.Rows
	}
	p.Stats = stats
	if counted != nil {
		p.Counted = *counted
	}
	p.Extremes = extremes
	finishPlanStats(p, f)
	return p, nil
}

// list resolves the request's source and lists its files, refusing what
// the planner's steps do not read yet.
func (pl *Planner) list(ctx context.Context, req *scandv1.ScanRequest) (*source.Listing, error) {
	src, err := pl.cfg.Resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	// What a source reads to list (a Delta log's commits and checkpoints)
	// is charged to the plan while the source holds it, as a footer is
	// (budget.go): a table's log competes for the planning share like
	// any file's metadata instead of taking memory beside it.
	charge := planOf(ctx).File()
	defer charge.Keep(0)
	listing, err := src.List(withFileCharge(ctx, charge))
	if err != nil {
		return nil, err
	}
	return listing, checkListing(listing)
}

// checkListing refuses a listing whose files need what the planner does
// not do yet: a table's own schema, columns matched by field id or
// renamed, deletes. Reading them as plain files would answer wrongly.
func checkListing(l *source.Listing) error {
	if l.Schema != nil {
		return nil // a table's: checkTable
	}
	for _, f := range l.Files {
		switch {
		case f.Columns.Match != source.ByName || f.Columns.Physical != nil:
			return unimplementedf("%s: this server does not map a file's columns by field id or physical name yet", f.Object.Name)
		case len(f.Deletes) > 0:
			return unimplementedf("%s: this server does not apply deletes yet", f.Object.Name)
		case len(f.Partition) != len(l.Partitions):
			return fmt.Errorf("source listed %s with %d partition values for %d partition columns", f.Object.Name, len(f.Partition), len(l.Partitions))
		}
	}
	return nil
}
