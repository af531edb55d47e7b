// Command scand serves Parquet and ORC files over Arrow Flight and scans
// them.
//
//	scand serve    run the Flight server on a local directory
//	scand scan     scan files through a running server and print the rows
//	scand explain  show what a scan would read, without reading it
//	scand schema   print the schema a scan of some paths returns
//	scand ls       list the files a server serves under a prefix
//	scand demo     write a sample dataset, serve it, scan it, keep serving
//	scand version  print the version
//
// Every flag can also be set from the environment as SCAND_<FLAG>, upper
// case with dashes as underscores (--split-bytes is SCAND_SPLIT_BYTES); a
// flag on the command line wins over the environment. Flags may follow
// the positional arguments.
//
// # Scan output
//
// scan prints to stdout (or --output FILE) in one of five formats; --stats
// adds the IO figures on stderr, so stdout stays machine-readable.
//
//   - table (the default) is for people: aligned columns with numbers on
//     the right, nested values as JSON, cells cut at 60 characters. It shows
//     the first --max-rows rows (100; 0 shows all) and then a "... N more
//     rows" line. The rest of the scan is still read and counted, so the
//     row count and --stats describe the whole scan; use --limit to read
//     less.
//   - csv has a header line and nulls as empty fields; structs, lists and
//     maps are JSON in one field.
//   - json is one object per row, keys in column order.
//   - parquet (snappy) and arrow (the Arrow IPC file format) write a
//     binary file and need --output. Batches are written as they arrive,
//     so memory stays bounded however large the scan is.
//
// --output writes to a temporary file next to FILE and renames it when
// the scan succeeded, so a failed scan leaves no partial file.
//
// --progress auto (the default) draws a progress bar on stderr (rows of
// the planned total, bytes, files; redrawn at most 10 times a second and
// erased at the end) when stderr is a terminal, the scan runs longer
// than a second, and the rows are not streaming to the same terminal.
// --progress on always draws it, off never.
//
// # Filters
//
// --filter takes SQL WHERE text ("fare > 10 AND city = 'Paris'"; quote it
// for the shell), --filter-substrait a file holding a serialized Substrait
// ExtendedExpression; a command takes one of the two. The server skips
// hive partitions (directories named key=value), files and row groups
// that cannot match before reading them, and drops the other rows that do
// not. explain then adds a "filter:" block: the filter as the server
// understood it, files matched and pruned by partition and by file
// statistics, row groups kept of total, bytes with and without the filter,
// and an upper bound of the rows. scan --stats adds the rows read and
// those the filter rejected.
//
// # Exit codes
//
// 0 on success; 1 when the command failed: "scand: <CODE_NAME>: <server
// message>" on stderr, and a "hint: ..." line when there is something
// specific to say (the format of client.Error and the Python client); 2 for
// a usage error, which prints one line and "see scand <command> --help";
// 130 when interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/scand/scand/client"
)

// version is set at build time:
//
//	go build -ldflags "-X main.version=v0.1.0" ./cmd/scand
var version = "dev"

const usage = `scand serves Parquet and ORC files over Apache Arrow Flight.

Usage:
  scand serve   [--listen 127.0.0.1:8815] [--root .] [--split-bytes N]
                [--compression lz4|zstd]
                [--peers h:p,... | --peers-dns name:port] [--advertise grpc://h:p]
  scand scan    [--server grpc://127.0.0.1:8815] [--columns a,b] [--limit N]
                [--filter SQL | --filter-substrait FILE]
                [--batch-rows N] [--split-bytes N] [--compression lz4|zstd]
                [--format table|csv|json|parquet|arrow]
                [--output FILE] [--max-rows N] [--progress auto|on|off]
                [--stats] PATH...
  scand explain [--server grpc://127.0.0.1:8815] [--columns a,b] [--limit N]
                [--filter SQL | --filter-substrait FILE]
                [--split-bytes N] PATH...
  scand schema  [--server grpc://127.0.0.1:8815] [--columns a,b] PATH...
  scand ls      [--server grpc://127.0.0.1:8815] [PREFIX]
  scand demo    [--listen 127.0.0.1:8815] [--dir DIR] [--once]
  scand version   (or scand --version)

Every flag can also be set from the environment as SCAND_<FLAG>
(SCAND_LISTEN, SCAND_ROOT, SCAND_SERVER, ...); the command line wins.
Run "scand COMMAND -h" for the flags of a command.
`

// errUsage marks a command-line mistake; main exits 2 for it after
// usageErr has printed what was wrong.
var errUsage = errors.New("usage")

// env is the environment as the commands see it; tests replace it.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.LookupEnv}))
}

// run executes one command and returns the process exit code: 0 on
// success, 1 when the command failed, 2 for a usage error, 130 when
// interrupted.
func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return 2
	}
	cmds := map[string]func(context.Context, []string, env) error{
		"serve":   runServe,
		"scan":    runScan,
		"explain": runExplain,
		"schema":  runSchema,
		"ls":      runLs,
		"demo":    runDemo,
		"version": runVersion,
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(e.stdout, usage)
		return 0
	case "--version", "-version":
		name = "version"
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(e.stderr, "scand: unknown command %q\nsee scand --help\n", name)
		return 2
	}
	err := cmd(ctx, rest, e)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(e.stderr, "scand: interrupted")
		return 130
	}
	fmt.Fprintln(e.stderr, errorLine(err))
	return 1
}

// errorLine renders err as the lines the CLI prints: "scand: " and the
// error on one line; for a status, "<CODE_NAME>: <server message>" and,
// when the client has one, a "hint: ..." line, as the Go and Python
// clients format it (see client.Error).
func errorLine(err error) string {
	msg, hint := err.Error(), ""
	var ce *client.Error
	if errors.As(err, &ce) {
		msg, hint = ce.Error(), ce.Hint()
	}
	line := "scand: " + oneLine(msg)
	if hint != "" {
		line += "\nhint: " + oneLine(hint)
	}
	return line
}

// oneLine joins msg's lines with "; " and collapses runs of spaces.
func oneLine(msg string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}
