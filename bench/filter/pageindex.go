package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// printPageIndexReport prints the -page-index variant's table: per query
// and engine, the median wall time, the GETs and bytes the counting proxy
// saw, and for scand the part of them that read the page index (from the
// streams' figures), with the pages it skipped. Targets (issue 15): at
// 0.01 % on the sort column, scand's GETs after the footers <= 2 per file
// read and wall time <= 0.3 x pyarrow's; limit 10 <= 2 MB fetched.
func printPageIndexReport(w io.Writer, res *results, latency time.Duration, rounds int, stopped string) {
	fmt.Fprintf(w, "\npage index: %d timed rounds, +%s per S3 response; medians (GETs and bytes at the S3 proxy; duckdb reads local files)\n", rounds, latency)
	if stopped != "" {
		fmt.Fprintf(w, "(%s)\n", stopped)
	}
	fmt.Fprintf(w, "%-10s %-15s %10s %7s %10s %12s %12s %8s\n", "query", "engine", "wall s", "GETs", "MB", "index GETs", "index kB", "skipped")
	for _, q := range res.m.Queries {
		for _, e := range res.engines {
			ms := res.timed(q, e)
			if len(ms) == 0 {
				continue
			}
			med := medianRun(ms)
			line := fmt.Sprintf("%-10s %-15s %10.3f %7d %10.2f", q.Name, e, med.wall.Seconds(), med.net.Gets, float64(med.net.Bytes)/1e6)
			if med.scand {
				line += fmt.Sprintf(" %12d %12.1f %8d", med.stats.IndexReads, float64(med.stats.IndexBytesFetched)/1e3, med.stats.PagesSkipped)
			}
			if med.err != nil {
				line += " error: " + med.err.Error()
			} else if med.rows != q.Rows {
				line += fmt.Sprintf(" ROWS %d, want %d", med.rows, q.Rows)
			}
			fmt.Fprintln(w, line)
		}
	}
}

// medianRun is the run of median wall time.
func medianRun(ms []*measurement) *measurement {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b *measurement) int { return int(a.wall - b.wall) })
	return s[len(s)/2]
}
