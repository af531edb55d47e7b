package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// splitBytesUsage is --split-bytes of scan and explain, which take the
// same value so that a scan runs the endpoints its explain showed.
const splitBytesUsage = "target compressed `size` per endpoint, e.g. 16MiB (0 = the server's default)"

type explainFlags struct {
	requestFlags
	splitBytes byteSize
}

const explainSynopsis = "[flags] PATH...\n\nPrints what a scan of PATH would read (files, endpoints with their row groups\nand rows, totals, schema) without reading any rows. PATH is as for scan.\nWith --filter it also prints what the filter pruned: files by partition and\nby statistics, row groups, bytes with and without it."

func parseExplain(args []string, e env) (explainFlags, error) {
	var f explainFlags
	fs := newFlagSet("explain", explainSynopsis, e)
	f.register(fs)
	fs.Var(&f.splitBytes, "split-bytes", splitBytesUsage)
	pos, err := parse(fs, args, e)
	if err != nil {
		return f, err
	}
	return f, f.check(fs, pos)
}

func (f explainFlags) request() *scandv1.ScanRequest {
	req := f.requestFlags.request()
	req.SplitBytes = int64(f.splitBytes)
	return req
}

func runExplain(ctx context.Context, args []string, e env) error {
	f, err := parseExplain(args, e)
	if err != nil {
		return err
	}
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	plan, err := c.Explain(ctx, f.request())
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(e.stdout, plan.String()+lateReport(plan.Stats)+placement(plan.Info))
	return err
}

// lateReport is explain's per-endpoint late-materialization prediction
// (the reader decides per row group while reading; a stream's
// late_row_groups says what it did); empty without a filter.
func lateReport(stats *client.PlanStats) string {
	if stats == nil || len(stats.Late) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nlate materialization (predicted from the footers):\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  #\tlate\n")
	for i, l := range stats.Late {
		fmt.Fprintf(tw, "  %d\t%s\n", i, l)
	}
	tw.Flush()
	return b.String()
}

// placement is explain's report of where each endpoint should be read
// (its locations: the owner, then the runner-up) and how many endpoints
// each replica owns; empty when the server names no locations (a replica
// alone, without --peers).
func placement(info *flight.FlightInfo) string {
	var b strings.Builder
	owned := map[string]int{}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  #\tlocations (owner first)\n")
	for i, ep := range info.GetEndpoint() {
		var locs []string
		for _, l := range ep.GetLocation() {
			locs = append(locs, l.GetUri())
		}
		if len(locs) > 0 {
			owned[locs[0]]++
		}
		fmt.Fprintf(tw, "  %d\t%s\n", i, cmp.Or(strings.Join(locs, ", "), "-"))
	}
	if len(owned) == 0 {
		return ""
	}
	tw.Flush()
	out := "\nplacement:\n" + b.String() + "\nowners:\n"
	for _, r := range slices.Sorted(maps.Keys(owned)) {
		out += fmt.Sprintf("  %s: %d endpoints\n", r, owned[r])
	}
	return out
}
