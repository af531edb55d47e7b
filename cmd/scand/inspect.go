package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// schema and ls look at what a server serves without scanning it: the
// schema a scan would return (GetSchema) and the files under a prefix
// (ListFlights), what the Python package's conn.schema and
// conn.list_files do.

const schemaSynopsis = "[flags] PATH...\n\nPrints the schema a scan of PATH returns (one column a line: name: type),\nwithout reading any rows. PATH is as for scan; --columns narrows it."

const lsSynopsis = "[flags] [PREFIX]\n\nLists the files the server serves whose path starts with PREFIX (all of\nthem without one), one a line: size, then path. PREFIX is a path relative\nto the server's root (\"trips/\") or an object-store prefix\n(\"s3://bucket/trips/\")."

func runSchema(ctx context.Context, args []string, e env) error {
	var f requestFlags
	fs := newFlagSet("schema", schemaSynopsis, e)
	f.registerConn(fs)
	fs.StringVar(&f.columns, "columns", "", "comma-separated columns; nested fields as a.b (default all)")
	pos, err := parse(fs, args, e)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErr(fs, "no PATH given")
	}
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	schema, err := c.Schema(ctx, &scandv1.ScanRequest{Paths: pos, Columns: splitList(f.columns)})
	if err != nil {
		return err
	}
	return printSchema(e.stdout, schema)
}

// printSchema prints one top-level column a line, as explain's schema
// block does: "name: type", " not null" when the column has no nulls.
func printSchema(w io.Writer, schema *arrow.Schema) error {
	for _, f := range schema.Fields() {
		null := ""
		if !f.Nullable {
			null = " not null"
		}
		if _, err := fmt.Fprintf(w, "%s: %s%s\n", f.Name, f.Type, null); err != nil {
			return err
		}
	}
	return nil
}

func runLs(ctx context.Context, args []string, e env) error {
	var f requestFlags
	fs := newFlagSet("ls", lsSynopsis, e)
	f.registerConn(fs)
	pos, err := parse(fs, args, e)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr(fs, "one PREFIX at most, got %d", len(pos))
	}
	prefix := ""
	if len(pos) == 1 {
		prefix = pos[0]
	}
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	infos, err := c.List(ctx, prefix)
	if err != nil {
		return err
	}
	return printFiles(e.stdout, infos)
}

// printFiles prints one file a line: its size, right-aligned and in
// binary units, then its path (the descriptor's, as the Python package's
// list_files reads it). A catalog's table ({"table": NAME}, which has no
// size) prints "table" and its name.
func printFiles(w io.Writer, infos []*flight.FlightInfo) error {
	sizes := make([]string, len(infos))
	names := make([]string, len(infos))
	width := 0
	for i, fi := range infos {
		d := fi.GetFlightDescriptor()
		var cmd struct {
			Table string `json:"table"`
		}
		switch {
		case len(d.GetPath()) > 0:
			sizes[i], names[i] = formatBytes(fi.GetTotalBytes()), d.GetPath()[0]
		case json.Unmarshal(d.GetCmd(), &cmd) == nil && cmd.Table != "":
			sizes[i], names[i] = "table", cmd.Table
		default:
			sizes[i], names[i] = formatBytes(fi.GetTotalBytes()), string(d.GetCmd())
		}
		width = max(width, len(sizes[i]))
	}
	for i := range infos {
		path := names[i]
		if _, err := fmt.Fprintf(w, "%*s  %s\n", width, sizes[i], path); err != nil {
			return err
		}
	}
	return nil
}
