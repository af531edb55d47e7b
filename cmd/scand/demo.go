package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
	"github.com/scand/scand/server/cluster"
)

type demoFlags struct {
	listen string
	dir    string
	once   bool
}

func parseDemo(args []string, e env) (demoFlags, error) {
	var f demoFlags
	fs := newFlagSet("demo", "[flags]", e)
	fs.StringVar(&f.listen, "listen", defaultListen, "address to serve on; if it is taken, a free port on 127.0.0.1 is used")
	fs.StringVar(&f.dir, "dir", "", "directory for the sample data (default: a temporary directory, removed on exit)")
	fs.BoolVar(&f.once, "once", false, "exit after the sample scan instead of serving until Ctrl-C")
	pos, err := parse(fs, args, e)
	if err != nil {
		return f, err
	}
	if len(pos) > 0 {
		return f, usageErr(fs, "unexpected argument %q", pos[0])
	}
	f.listen = listenAddr(f.listen)
	return f, nil
}

// The demo's sample scan.
var demoRequest = &scandv1.ScanRequest{
	Paths:   []string{"trips/*.parquet"},
	Columns: []string{"city", "fare", "pickup.lat"},
	Limit:   5,
}

// runDemo writes a sample dataset, serves it in-process, scans it through
// the client package exactly as a user's program would, and prints how to
// do the same from Python.
func runDemo(ctx context.Context, args []string, e env) error {
	f, err := parseDemo(args, e)
	if err != nil {
		return err
	}
	out := e.stdout
	dir := f.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "scand-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	files, err := writeDemoData(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Wrote a sample dataset to %s:\n", dir)
	for _, file := range files {
		fmt.Fprintf(out, "  %-24s %6d rows, %d row groups, %s\n", file.Name, file.Rows, file.RowGroups, formatBytes(file.Bytes))
	}
	fmt.Fprintln(out, "  columns: id int64, pickup_at timestamp, city string, fare float64, pickup struct<lat, lon>, tags list<string>")

	lis, err := net.Listen("tcp", f.listen)
	if errors.Is(err, syscall.EADDRINUSE) {
		fmt.Fprintf(out, "\n%s is in use (another scand?); using a free port instead.\n", f.listen)
		lis, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	// Per-scan log lines would interleave with the demo's output; keep
	// warnings and errors only.
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := newServer(ctx, serveFlags{}, dir, log, nil)
	if err != nil {
		lis.Close()
		return err
	}
	r := startServing(srv, lis)
	addr := "grpc://" + lis.Addr().String()
	fmt.Fprintf(out, "\nscand %s is serving it on %s\n", version, addr)

	if err := demoScan(ctx, addr, out); err != nil {
		_ = r.stop(log)
		return err
	}
	printPythonSnippet(out, addr)
	if f.once {
		fmt.Fprintln(out, "\n--once: stopping the server. Run `scand demo` without --once to keep it serving.")
		return r.stop(log)
	}
	fmt.Fprintf(out, "\nTry it from a shell too:\n\n  go run ./cmd/scand scan --server %s --columns city,fare,tags --limit 5 'trips/*.parquet'\n", addr)
	fmt.Fprintf(out, "\nServing on %s until Ctrl-C.\n", addr)
	return r.wait(ctx, log)
}

// demoScan runs the sample scan through the client and prints rows and
// IO figures.
func demoScan(ctx context.Context, addr string, out io.Writer) error {
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(out, "\nScanning %s, columns %s, limit %d, through the Go client:\n\n",
		strings.Join(demoRequest.Paths, " "), strings.Join(demoRequest.Columns, ","), demoRequest.Limit)
	start := time.Now()
	stats, err := scanTo(ctx, c, demoRequest, formatTable, 0, out)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\nIO figures (the server's, summed over the scan's streams):")
	fmt.Fprintln(out)
	printStats(out, stats, time.Since(start))
	return nil
}

func printPythonSnippet(out io.Writer, addr string) {
	fmt.Fprintf(out, `
The same scan from Python (pip install pyarrow), while the server runs:

    import json
    import pyarrow as pa
    import pyarrow.flight as flight

    client = flight.connect(%q)
    request = {"paths": ["trips/*.parquet"], "columns": ["city", "fare", "pickup.lat"], "limit": 5}
    info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(request)))
    table = pa.concat_tables([client.do_get(ep.ticket).read_all() for ep in info.endpoints])
    print(table)
`, addr)
}

// running is a server serving in the background.
type running struct {
	srv    *server.Server
	lis    net.Listener
	served chan error
	// grace is how long a stop lets streams finish (--drain-timeout).
	grace time.Duration
	// members, when set, is this replica's membership: it leaves its own
	// ring when the drain starts.
	members *cluster.Membership
}

func startServing(srv *server.Server, lis net.Listener) *running {
	r := &running{srv: srv, lis: lis, served: make(chan error, 1), grace: defaultDrainTimeout}
	go func() { r.served <- srv.Serve(lis) }()
	return r
}

// wait blocks until ctx is done, then stops the server gracefully. It
// returns early if Serve fails.
func (r *running) wait(ctx context.Context, log *slog.Logger) error {
	select {
	case err := <-r.served:
		return fmt.Errorf("serve on %s: %w", r.lis.Addr(), err)
	case <-ctx.Done():
	}
	return r.stop(log)
}

// stop drains the server (server.Shutdown): health NOT_SERVING at once,
// new scans refused with UNAVAILABLE, running streams given r.grace to
// finish before they are cut off. It waits for Serve to return.
func (r *running) stop(log *slog.Logger) error {
	log.Info("scand stopping: draining", "grace", r.grace)
	if r.members != nil {
		r.members.SetServing(false)
	}
	start := time.Now()
	if cut := r.srv.Shutdown(r.grace); cut > 0 {
		log.Warn("streams still running after the drain timeout were cut off", "streams", cut, "grace", r.grace)
	}
	if err := <-r.served; err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	log.Info("scand stopped", "drained_in", time.Since(start).Round(time.Millisecond))
	return nil
}
