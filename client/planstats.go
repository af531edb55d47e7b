package client

import (
	"fmt"
	"io"
	"text/tabwriter"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// PlanStats say what the server's pruning kept of a filtered scan, level
// by level, cheapest first: files dropped by their hive partition values
// (their footers are never read), files dropped by their file-level
// statistics, then row groups (ORC stripes) dropped by theirs. The fields'
// meaning is documented on scandv1.PlanStats, which is what the server
// sends; PlanStats is its Go value.
type PlanStats struct {
	// Files is the number of files the request's paths matched;
	// FilesPrunedByPartition and FilesPrunedByStats those the filter
	// dropped before reading any row group.
	Files                  int64
	FilesPrunedByPartition int64
	FilesPrunedByStats     int64
	// RowGroups is the number of row groups in the files whose footers
	// were read; RowGroupsPruned those their statistics dropped, and
	// RowGroupsPrunedByBloom those their bloom filters dropped after.
	RowGroups              int64
	RowGroupsPruned        int64
	RowGroupsPrunedByBloom int64
	// BytesWithoutFilter and BytesWithFilter are the compressed bytes of
	// the projected (and filter) columns the scan would fetch without and
	// with the filter.
	BytesWithoutFilter int64
	BytesWithFilter    int64
	// RowsWithFilter is the rows in the row groups kept, an upper bound of
	// what the filter returns; RowsWithoutFilter the rows of every row
	// group of the files whose footers were read.
	RowsWithFilter    int64
	RowsWithoutFilter int64
	// Filter is the filter as the server understood it, in SQL; empty
	// without one.
	Filter string
	// Late is, with a filter, each endpoint's late-materialization
	// prediction, in endpoint order (empty from older servers).
	Late []LatePlan
	// A table's own planning (zero for files): its snapshot's manifests
	// read and skipped, its data files pruned before Files was counted
	// (-1 when the table does not say how many it has), and the delete
	// files attached to the files kept.
	ManifestsRead, ManifestsSkipped int64
	TableFilesPruned, DeleteFiles   int64
}

// LatePlan is one endpoint's late-materialization prediction
// (scandv1.LatePlan): Strategy "yes", "no" or "while reading", and why.
type LatePlan struct {
	Strategy, Reason         string
	LateRowGroups, RowGroups int64
}

// String is the prediction as explain prints it: "yes (filter on fare;
// 12 of 20 columns deferred)".
func (l LatePlan) String() string {
	if l.Reason == "" {
		return l.Strategy
	}
	return l.Strategy + " (" + l.Reason + ")"
}

// FilesKept is the number of files left after both file-level prunings.
func (s *PlanStats) FilesKept() int64 {
	return s.Files - s.FilesPrunedByPartition - s.FilesPrunedByStats
}

// RowGroupsKept is the number of row groups left after both prunings.
func (s *PlanStats) RowGroupsKept() int64 {
	return s.RowGroups - s.RowGroupsPruned - s.RowGroupsPrunedByBloom
}

// planStatsOf converts the server's message.
func planStatsOf(m *scandv1.PlanStats) *PlanStats {
	return &PlanStats{
		Files:                  m.GetFiles(),
		FilesPrunedByPartition: m.GetFilesPrunedByPartition(),
		FilesPrunedByStats:     m.GetFilesPrunedByStats(),
		RowGroups:              m.GetRowGroups(),
		RowGroupsPruned:        m.GetRowGroupsPruned(),
		RowGroupsPrunedByBloom: m.GetRowGroupsPrunedByBloom(),
		BytesWithoutFilter:     m.GetBytesWithoutFilter(),
		BytesWithFilter:        m.GetBytesWithFilter(),
		RowsWithFilter:         m.GetRowsWithFilter(),
		RowsWithoutFilter:      m.GetRowsWithoutFilter(),
		Filter:                 m.GetFilter(),
		Late:                   latePlansOf(m.GetLateMaterialization()),
		ManifestsRead:          m.GetManifestsRead(),
		ManifestsSkipped:       m.GetManifestsSkipped(),
		TableFilesPruned:       m.GetTableFilesPruned(),
		DeleteFiles:            m.GetDeleteFiles(),
	}
}

func latePlansOf(ms []*scandv1.LatePlan) []LatePlan {
	var out []LatePlan
	for _, m := range ms {
		out = append(out, LatePlan{Strategy: m.GetStrategy(), Reason: m.GetReason(), LateRowGroups: m.GetLateRowGroups(), RowGroups: m.GetRowGroups()})
	}
	return out
}

// parsePlanStats decodes a FlightInfo's app_metadata, the JSON form of
// scandv1.PlanStats (package wire holds the encoding). Unknown keys, which
// a newer server may send, are ignored.
func parsePlanStats(meta []byte) (*PlanStats, error) {
	m, err := wire.UnmarshalPlanStats(meta)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return planStatsOf(m), nil
}

// writeTo renders the pruning as an indented block under "filter:", one
// line per level. Only a filter prunes, so a plan without one has nothing
// to say here and writes nothing.
func (s *PlanStats) writeTo(w io.Writer) {
	if s == nil {
		return
	}
	s.writeTableTo(w)
	if s.Filter == "" {
		return
	}
	fmt.Fprintf(w, "\nfilter: %s\n", s.Filter)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  files\t%s matched, %s pruned by partition, %s by file statistics, %s kept\n",
		fmtInt(s.Files), fmtInt(s.FilesPrunedByPartition), fmtInt(s.FilesPrunedByStats), fmtInt(s.FilesKept()))
	fmt.Fprintf(tw, "  row groups\t%s of %s kept (%s pruned by statistics, %s by bloom filters, in the files whose footers were read)\n",
		fmtInt(s.RowGroupsKept()), fmtInt(s.RowGroups), fmtInt(s.RowGroupsPruned), fmtInt(s.RowGroupsPrunedByBloom))
	fmt.Fprintf(tw, "  bytes\t%s with the filter, %s without%s\n",
		fmtBytes(s.BytesWithFilter), fmtBytes(s.BytesWithoutFilter), saved(s.BytesWithFilter, s.BytesWithoutFilter))
	fmt.Fprintf(tw, "  rows\tat most %s with the filter, of %s\n", fmtInt(s.RowsWithFilter), fmtInt(s.RowsWithoutFilter))
	tw.Flush()
}

// writeTableTo renders a table's own planning under "table:"; files
// (no manifests) write nothing.
func (s *PlanStats) writeTableTo(w io.Writer) {
	if s.ManifestsRead+s.ManifestsSkipped == 0 {
		return
	}
	pruned := fmtInt(s.TableFilesPruned)
	if s.TableFilesPruned < 0 {
		pruned = "an unknown number of"
	}
	fmt.Fprintf(w, "\ntable:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  manifests\t%s read, %s skipped by partition summaries\n", fmtInt(s.ManifestsRead), fmtInt(s.ManifestsSkipped))
	fmt.Fprintf(tw, "  data files\t%s kept, %s pruned by partition values and column statistics\n", fmtInt(s.Files), pruned)
	fmt.Fprintf(tw, "  delete files\t%s attached\n", fmtInt(s.DeleteFiles))
	tw.Flush()
}

// saved is the share of bytes the filter spares, as " (75% less)".
func saved(with, without int64) string {
	if without <= 0 || with >= without {
		return ""
	}
	return fmt.Sprintf(" (%.0f%% less)", 100*float64(without-with)/float64(without))
}
