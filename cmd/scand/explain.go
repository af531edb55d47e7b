package main

import (
	"context"
	"fmt"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

type explainFlags struct {
	server     string
	columns    string
	limit      int64
	splitBytes byteSize
	paths      []string
}

const explainSynopsis = "[flags] PATH...\n\nPrints what a scan of PATH would read (files, endpoints with their row groups\nand rows, totals, schema) without reading any rows. PATH is as for scan."

func parseExplain(args []string, e env) (explainFlags, error) {
	var f explainFlags
	fs := newFlagSet("explain", explainSynopsis, e)
	fs.StringVar(&f.server, "server", client.DefaultAddr, "scand server address")
	fs.StringVar(&f.columns, "columns", "", "comma-separated columns to read; nested fields as a.b (default all)")
	fs.Int64Var(&f.limit, "limit", 0, "maximum rows to return (0 = no limit)")
	fs.Var(&f.splitBytes, "split-bytes", "target compressed bytes per endpoint, e.g. 16MiB (0 = the server's default)")
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
	}
	return f, nil
}

func (f explainFlags) request() *scandv1.ScanRequest {
	return &scandv1.ScanRequest{
		Paths:      f.paths,
		Columns:    splitList(f.columns),
		Limit:      f.limit,
		SplitBytes: int64(f.splitBytes),
	}
}

func runExplain(ctx context.Context, args []string, e env) error {
	f, err := parseExplain(args, e)
	if err != nil {
		return err
	}
	c, err := client.Dial(ctx, f.server)
	if err != nil {
		return err
	}
	defer c.Close()
	plan, err := c.Explain(ctx, f.request())
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(e.stdout, plan.String())
	return err
}
