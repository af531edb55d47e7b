package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

type scanFlags struct {
	server    string
	columns   string
	limit     int64
	batchRows int64
	compress  string
	format    string
	maxRows   int
	stats     bool
	paths     []string
}

const scanSynopsis = "[flags] PATH...\n\nPATH is a file, glob (\"trips/*.parquet\", \"**\" for any depth) or directory\nending in \"/\", relative to the server's root."

func parseScan(args []string, e env) (scanFlags, error) {
	var f scanFlags
	fs := newFlagSet("scan", scanSynopsis, e)
	fs.StringVar(&f.server, "server", client.DefaultAddr, "scand server address")
	fs.StringVar(&f.columns, "columns", "", "comma-separated columns to read; nested fields as a.b (default all)")
	fs.Int64Var(&f.limit, "limit", 0, "maximum rows to return (0 = no limit)")
	fs.Int64Var(&f.batchRows, "batch-rows", 0, "rows per record batch (0 = server's choice)")
	fs.StringVar(&f.compress, "compression", "", "ask for IPC body compression: lz4 or zstd (for slow links; empty = the server's default)")
	fs.StringVar(&f.format, "format", formatTable, "output format: table, csv or json (one object per line)")
	fs.IntVar(&f.maxRows, "max-rows", 100, "table format: rows to show; the rest are counted, not shown (0 = all)")
	fs.BoolVar(&f.stats, "stats", false, "print the scan's IO figures to stderr after the rows")
	pos, err := parse(fs, args, e)
	if err != nil {
		return f, err
	}
	f.paths = pos
	switch {
	case len(f.paths) == 0:
		return f, usageErr(fs, "no PATH given")
	case f.limit < 0:
		return f, usageErr(fs, "--limit must not be negative")
	case f.batchRows < 0:
		return f, usageErr(fs, "--batch-rows must not be negative")
	case f.maxRows < 0:
		return f, usageErr(fs, "--max-rows must not be negative")
	case f.format != formatTable && f.format != formatCSV && f.format != formatJSON:
		return f, usageErr(fs, "unknown --format %q (want table, csv or json)", f.format)
	}
	return f, nil
}

func (f scanFlags) request() *scandv1.ScanRequest {
	return &scandv1.ScanRequest{
		Paths:       f.paths,
		Columns:     splitList(f.columns),
		Limit:       f.limit,
		BatchRows:   f.batchRows,
		Compression: f.compress,
	}
}

func runScan(ctx context.Context, args []string, e env) error {
	f, err := parseScan(args, e)
	if err != nil {
		return err
	}
	c, err := client.Dial(ctx, f.server)
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	stats, err := scanTo(ctx, c, f.request(), f.format, f.maxRows, e.stdout)
	if err != nil {
		return err
	}
	if f.stats {
		printStats(e.stderr, stats, time.Since(start))
	}
	return nil
}

// scanTo runs req and prints its rows to w in format. It returns the
// scan's summed IO figures.
func scanTo(ctx context.Context, c *client.Client, req *scandv1.ScanRequest, format string, maxRows int, w io.Writer) (client.Stats, error) {
	scan, err := c.Scan(ctx, req)
	if err != nil {
		return client.Stats{}, err
	}
	defer scan.Release()
	p, err := newPrinter(format, scan.Schema(), w, maxRows)
	if err != nil {
		return client.Stats{}, err
	}
	for scan.Next() {
		if err := p.write(scan.RecordBatch()); err != nil {
			return client.Stats{}, fmt.Errorf("write output: %w", err)
		}
	}
	if err := scan.Err(); err != nil {
		// Show what arrived before the failure, then report it.
		_ = p.close()
		return client.Stats{}, err
	}
	if err := p.close(); err != nil {
		return client.Stats{}, fmt.Errorf("write output: %w", err)
	}
	return scan.Stats(), nil
}

// printStats prints a scan's IO figures as an aligned block.
func printStats(w io.Writer, st client.Stats, wall time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	used := ""
	if st.BytesFetched > 0 {
		used = fmt.Sprintf(", %.0f%% of fetched", 100*float64(st.BytesUsed)/float64(st.BytesFetched))
	}
	fmt.Fprintf(tw, "files\t%d\n", st.Files)
	fmt.Fprintf(tw, "endpoints\t%d\n", st.Endpoints)
	fmt.Fprintf(tw, "rows\t%d\n", st.Rows)
	fmt.Fprintf(tw, "batches\t%d\n", st.Batches)
	fmt.Fprintf(tw, "reads\t%d\n", st.Reads)
	fmt.Fprintf(tw, "bytes fetched\t%s (%d)\n", formatBytes(st.BytesFetched), st.BytesFetched)
	fmt.Fprintf(tw, "bytes used\t%s (%d%s)\n", formatBytes(st.BytesUsed), st.BytesUsed, used)
	fmt.Fprintf(tw, "bytes wasted\t%s (%d, gaps read to merge requests)\n", formatBytes(st.BytesWasted), st.BytesWasted)
	fmt.Fprintf(tw, "cache hits\t%d\n", st.CacheHits)
	fmt.Fprintf(tw, "io time\t%s (server, summed over streams)\n", seconds(st.IOSeconds))
	fmt.Fprintf(tw, "wall time\t%s\n", wall.Round(time.Microsecond))
	tw.Flush()
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}
