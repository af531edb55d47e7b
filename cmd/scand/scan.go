package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// requestFlags are the flags that say what to scan, shared by scan and
// explain.
type requestFlags struct {
	server  string
	columns string
	limit   int64
	paths   []string
	// filter is --filter (SQL); substraitFile is --filter-substrait, whose
	// bytes check reads into substrait.
	filter        string
	substraitFile string
	substrait     []byte
	// table is --table, and the snapshot choices that go with it.
	table        string
	snapshotID   int64
	ref          string
	asOf         string
	tableVersion *int64 // a Delta table's version; nil: the latest
	// How to reach a secured server.
	token                  string
	tlsCA, tlsCert, tlsKey string
}

func (r *requestFlags) register(fs *flag.FlagSet) {
	r.registerConn(fs)
	fs.StringVar(&r.columns, "columns", "", "comma-separated columns to read; nested fields as a.b (default all)")
	fs.Int64Var(&r.limit, "limit", 0, "maximum rows to return (0 = no limit)")
	fs.StringVar(&r.filter, "filter", "", "rows to return, as a SQL WHERE `expression`, e.g. \"fare > 10 AND city IN ('Paris', 'Rome')\"; hive partitions, files and row groups that cannot match are skipped unread")
	fs.StringVar(&r.substraitFile, "filter-substrait", "", "rows to return, as a serialized Substrait ExtendedExpression in `file` (pyarrow.substrait.serialize_expressions); not with --filter")
	fs.StringVar(&r.table, "table", "", "a `table` to scan instead of PATHs: a Delta table's directory (holding _delta_log/), an Iceberg table's location (holding metadata/) or metadata file, under the server's root or s3://, or catalog.namespace.table of a catalog the server was started with (--catalog)")
	fs.Func("table-version", "with a Delta --table: the `version` to read (default the latest)", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("not a table version (an integer >= 0): %q", v)
		}
		r.tableVersion = &n
		return nil
	})
	fs.Int64Var(&r.snapshotID, "snapshot-id", 0, "with --table: the snapshot `id` to read (default the current one)")
	fs.StringVar(&r.ref, "ref", "", "with --table: the branch or tag to read")
	fs.StringVar(&r.asOf, "as-of", "", "with --table: read the table as it was at this RFC 3339 `time`")
}

// registerConn registers the flags that reach a server: its address, the
// token and the client TLS.
func (r *requestFlags) registerConn(fs *flag.FlagSet) {
	fs.StringVar(&r.server, "server", client.DefaultAddr, "scand server address")
	fs.StringVar(&r.token, "token", "", "bearer `token` sent on every call (--auth tokens or jwt); prefer SCAND_TOKEN, flags show in ps")
	fs.StringVar(&r.tlsCA, "tls-ca", "", "CA `file` (PEM) to trust the server's certificate with (implies TLS; empty with grpc+tls://: the system's roots)")
	fs.StringVar(&r.tlsCert, "tls-cert", "", "client certificate `file` (PEM) for mutual TLS")
	fs.StringVar(&r.tlsKey, "tls-key", "", "client private key `file` (PEM) for mutual TLS")
}

// dial connects to --server with the token and TLS settings.
func (r *requestFlags) dial(ctx context.Context) (*client.Client, error) {
	var opts []client.Option
	if r.token != "" {
		opts = append(opts, client.WithToken(r.token))
	}
	cfg, err := r.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, client.WithTLS(cfg))
	}
	return client.Dial(ctx, r.server, opts...)
}

// tlsConfig is the client TLS of --tls-ca, --tls-cert and --tls-key; nil
// when none is set.
func (r *requestFlags) tlsConfig() (*tls.Config, error) {
	if r.tlsCA == "" && r.tlsCert == "" && r.tlsKey == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if r.tlsCA != "" {
		pem, err := os.ReadFile(r.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", r.tlsCA)
		}
	}
	if (r.tlsCert == "") != (r.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together: a client certificate needs its key")
	}
	if r.tlsCert != "" {
		pair, err := tls.LoadX509KeyPair(r.tlsCert, r.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// check takes the positional arguments as paths and validates the flags.
func (r *requestFlags) check(fs *flag.FlagSet, pos []string) error {
	r.paths = pos
	switch {
	case r.table != "" && len(r.paths) > 0:
		return usageErr(fs, "--table and PATHs exclude each other: scan files or one table")
	case r.table == "" && (r.snapshotID != 0 || r.ref != "" || r.asOf != "" || r.tableVersion != nil):
		return usageErr(fs, "--snapshot-id, --ref, --table-version and --as-of choose a snapshot or version of a --table")
	case len(r.paths) == 0 && r.table == "":
		return usageErr(fs, "no PATH given")
	case r.limit < 0:
		return usageErr(fs, "--limit must not be negative")
	case r.filter != "" && r.substraitFile != "":
		// The request has room for one form (a protobuf oneof).
		return usageErr(fs, "--filter and --filter-substrait exclude each other: give one filter")
	}
	if r.substraitFile != "" {
		b, err := os.ReadFile(r.substraitFile)
		if err != nil {
			return fmt.Errorf("--filter-substrait: %w", err)
		}
		r.substrait = b
	}
	return nil
}

func (r *requestFlags) request() *scandv1.ScanRequest {
	req := &scandv1.ScanRequest{Paths: r.paths, Columns: splitList(r.columns), Limit: r.limit,
		Table: r.table, SnapshotId: r.snapshotID, Ref: r.ref, AsOf: r.asOf}
	req.Version = r.tableVersion
	switch {
	case r.filter != "":
		req.RowFilter = &scandv1.ScanRequest_Filter{Filter: r.filter}
	case r.substraitFile != "":
		req.RowFilter = &scandv1.ScanRequest_FilterSubstrait{FilterSubstrait: r.substrait}
	}
	return req
}

type scanFlags struct {
	requestFlags
	batchRows  int64
	splitBytes byteSize
	compress   string
	format     string
	output     string
	progress   string
	maxRows    int
	stats      bool
}

const scanSynopsis = "[flags] PATH...\n\nPATH is a file, glob (\"trips/*.parquet\", \"**\" for any depth) or directory\nending in \"/\", relative to the server's root."

func parseScan(args []string, e env) (scanFlags, error) {
	var f scanFlags
	fs := newFlagSet("scan", scanSynopsis, e)
	f.register(fs)
	fs.Int64Var(&f.batchRows, "batch-rows", 0, "rows per record batch (0 = server's choice)")
	fs.Var(&f.splitBytes, "split-bytes", splitBytesUsage)
	fs.StringVar(&f.compress, "compression", "", "ask for IPC body compression: lz4 or zstd (for slow links; empty = the server's default)")
	fs.StringVar(&f.format, "format", formatTable, "output format: table, csv, json (one object per line), parquet (snappy) or arrow (Arrow IPC file); parquet and arrow need --output")
	fs.StringVar(&f.output, "output", "", "write the rows to FILE instead of stdout (required for parquet and arrow)")
	fs.StringVar(&f.progress, "progress", progressAuto, "progress bar on stderr: auto (when stderr is a terminal and the rows do not stream to it), on or off")
	fs.IntVar(&f.maxRows, "max-rows", 100, "table format: rows to show, and to fetch (the server reads only the pages that hold them); the rest are counted from the footers (0 = fetch and show all)")
	fs.BoolVar(&f.stats, "stats", false, "print the scan's IO figures to stderr after the rows")
	pos, err := parse(fs, args, e)
	if err != nil {
		return f, err
	}
	if err := f.check(fs, pos); err != nil {
		return f, err
	}
	switch {
	case f.batchRows < 0:
		return f, usageErr(fs, "--batch-rows must not be negative")
	case f.maxRows < 0:
		return f, usageErr(fs, "--max-rows must not be negative")
	case !slices.Contains(formats, f.format):
		return f, usageErr(fs, "unknown --format %q (want %s)", f.format, strings.Join(formats, ", "))
	case binaryFormat(f.format) && (f.output == "" || f.output == "-"):
		return f, usageErr(fs, "--format %s writes a binary file: give --output FILE", f.format)
	case f.progress != progressAuto && f.progress != progressOn && f.progress != progressOff:
		return f, usageErr(fs, "unknown --progress %q (want auto, on or off)", f.progress)
	}
	return f, nil
}

func (f scanFlags) request() *scandv1.ScanRequest {
	req := f.requestFlags.request()
	req.BatchRows, req.Compression, req.SplitBytes = f.batchRows, f.compress, int64(f.splitBytes)
	return req
}

func runScan(ctx context.Context, args []string, e env) error {
	f, err := parseScan(args, e)
	if err != nil {
		return err
	}
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	o := scanOutput{format: f.format, maxRows: f.maxRows, w: e.stdout}
	var out *outputFile
	if f.output != "" && f.output != "-" {
		if out, err = createOutput(f.output); err != nil {
			return err
		}
		defer out.abort() // removes the file unless committed
		o.w = out
	}
	o.progress = f.progress == progressOn
	if f.progress == progressAuto && isTerminal(e.stderr) {
		// Rows streaming to the same terminal would tear the bar; the
		// table prints only at the end, after the bar is cleared.
		o.progress = out != nil || f.format == formatTable || !isTerminal(e.stdout)
	}
	if o.progress {
		o.progressW, o.progressClear = e.stderr, isTerminal(e.stderr)
		if f.progress == progressAuto {
			o.progressDelay = progressDelay
		}
	}
	stats, err := scanWith(ctx, c, f.request(), o)
	if err != nil {
		return err
	}
	if out != nil {
		if err := out.commit(); err != nil {
			return err
		}
	}
	if f.stats {
		printStats(e.stderr, stats, time.Since(start))
	}
	return nil
}

// scanTo runs req and prints its rows to w in format. It returns the
// scan's summed IO figures.
func scanTo(ctx context.Context, c *client.Client, req *scandv1.ScanRequest, format string, maxRows int, w io.Writer) (client.Stats, error) {
	return scanWith(ctx, c, req, scanOutput{format: format, maxRows: maxRows, w: w})
}

// scanOutput says where and how scanWith writes a scan.
type scanOutput struct {
	format  string
	maxRows int
	w       io.Writer

	// progress draws a progress bar on progressW; see [progress].
	progress      bool
	progressW     io.Writer
	progressClear bool
	progressDelay time.Duration
}

// scanWith runs req and writes its rows as o says, batch by batch as they
// arrive. It returns the scan's summed IO figures.
func scanWith(ctx context.Context, c *client.Client, req *scandv1.ScanRequest, o scanOutput) (client.Stats, error) {
	plan, peek, err := planScan(ctx, c, req, o)
	if err != nil {
		return client.Stats{}, err
	}
	scan, err := c.ScanInfo(ctx, plan.Info)
	if err != nil {
		return client.Stats{}, err
	}
	defer scan.Release()
	p, err := newPrinter(o.format, scan.Schema(), o.w, o.maxRows)
	if err != nil {
		return client.Stats{}, err
	}
	if tp, ok := p.(*tablePrinter); ok {
		tp.peek = peek
	}

	var bar *progress
	ends := fileEnds(plan)
	if o.progress {
		total := progressState{rows: plan.TotalRecords, bytes: plan.TotalBytes, files: len(plan.Files)}
		bar = newProgress(o.progressW, time.Now, total, o.progressDelay, o.progressClear)
	}
	var rows, batches int64
	state := func() progressState {
		st := scan.Stats()
		files := 0
		for files < len(ends) && ends[files] <= st.Endpoints {
			files++
		}
		return progressState{rows: rows, bytes: st.BytesFetched, files: files}
	}

	for scan.Next() {
		rec := scan.RecordBatch()
		rows, batches = rows+rec.NumRows(), batches+1
		if err := p.write(rec); err != nil {
			bar.finish(state())
			return client.Stats{}, fmt.Errorf("write output: %w", err)
		}
		if bar != nil {
			bar.update(state())
		}
	}
	bar.finish(state())
	if err := scan.Err(); err != nil {
		// Show what arrived before the failure, then report it. A scan
		// that failed before its first batch prints nothing: an empty
		// table and "(0 rows)" above the error read as an empty result.
		if batches > 0 {
			_ = p.close()
		}
		return client.Stats{}, err
	}
	if err := p.close(); err != nil {
		return client.Stats{}, fmt.Errorf("write output: %w", err)
	}
	return scan.Stats(), nil
}

// planScan plans req. The table format prints only --max-rows rows, so it
// asks the server for only those and one more (to know whether there are
// more): a peek at a large file then fetches the pages of its first rows,
// not the file. The count of the rest comes from the plan of the whole
// scan (the footers), which costs no data read.
func planScan(ctx context.Context, c *client.Client, req *scandv1.ScanRequest, o scanOutput) (*client.Plan, *peekCount, error) {
	if o.format != formatTable || o.maxRows == 0 || (req.Limit > 0 && req.Limit <= int64(o.maxRows)) {
		plan, err := c.Explain(ctx, req)
		return plan, nil, err
	}
	whole, err := c.Explain(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	peek := proto.Clone(req).(*scandv1.ScanRequest)
	peek.Limit = int64(o.maxRows) + 1
	plan, err := c.Explain(ctx, peek)
	if err != nil {
		return nil, nil, err
	}
	return plan, &peekCount{rows: whole.TotalRecords, filtered: req.GetFilter() != "" || len(req.GetFilterSubstrait()) > 0}, nil
}

// fileEnds is, for each file of plan, the number of endpoints done when
// the file is done: the progress bar counts files from endpoints.
func fileEnds(plan *client.Plan) []int {
	var ends []int
	for i, ep := range plan.Endpoints {
		for range ep.More { // files packed into one endpoint end with it
			ends = append(ends, i+1)
		}
		if i+1 == len(plan.Endpoints) || plan.Endpoints[i+1].Path != ep.Path {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// outputFile is --output: a temporary file next to the target, renamed
// over it once the scan succeeded, so that a failed or interrupted scan
// leaves no truncated file behind (nor destroys an older one).
type outputFile struct {
	*os.File
	path string
	done bool
}

func createOutput(path string) (*outputFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	return &outputFile{File: f, path: path}, nil
}

// commit closes the file and moves it to its path. The file gets the
// usual 0644 (a temporary file starts as 0600).
func (o *outputFile) commit() error {
	o.done = true
	o.File.Chmod(0o644)
	if err := o.File.Close(); err != nil {
		os.Remove(o.File.Name())
		return fmt.Errorf("output: %w", err)
	}
	if err := os.Rename(o.File.Name(), o.path); err != nil {
		os.Remove(o.File.Name())
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// abort removes the file unless it was committed.
func (o *outputFile) abort() {
	if o.done {
		return
	}
	o.done = true
	o.File.Close()
	os.Remove(o.File.Name())
}

// printStats prints a scan's IO figures as an aligned block.
func printStats(w io.Writer, st client.Stats, wall time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	share := func(n int64) string {
		if st.BytesFetched == 0 {
			return ""
		}
		return fmt.Sprintf(", %.0f%%", 100*float64(n)/float64(st.BytesFetched))
	}
	fmt.Fprintf(tw, "files\t%d%s\n", st.Files, namedFiles(st.Paths))
	fmt.Fprintf(tw, "endpoints\t%d\n", st.Endpoints)
	fmt.Fprintf(tw, "rows\t%d\n", st.Rows)
	if st.RowsRead > 0 {
		// Servers older than filters send no rows_read; then the line
		// would only say 0.
		fmt.Fprintf(tw, "rows read\t%d (%d rejected by the filter)\n", st.RowsRead, st.RowsFiltered)
	}
	if st.LateRowGroups > 0 {
		// What explain predicted, as it happened.
		fmt.Fprintf(tw, "late row groups\t%d (filter columns first)\n", st.LateRowGroups)
	}
	fmt.Fprintf(tw, "batches\t%d\n", st.Batches)
	fmt.Fprintf(tw, "reads\t%d\n", st.Reads)
	// The three lines under fetched add up to it.
	fmt.Fprintf(tw, "bytes fetched\t%s (%d) = used + wasted + unused\n", formatBytes(st.BytesFetched), st.BytesFetched)
	fmt.Fprintf(tw, "  used\t%s (%d%s, handed to the decoders)\n", formatBytes(st.BytesUsed), st.BytesUsed, share(st.BytesUsed))
	fmt.Fprintf(tw, "  wasted\t%s (%d%s, gaps read to merge requests)\n", formatBytes(st.BytesWasted), st.BytesWasted, share(st.BytesWasted))
	fmt.Fprintf(tw, "  unused\t%s (%d%s, read ahead, never needed)\n", formatBytes(st.BytesUnused), st.BytesUnused, share(st.BytesUnused))
	fmt.Fprintf(tw, "cache hits\t%d\n", st.CacheHits)
	if st.BytesFromCache > 0 {
		fmt.Fprintf(tw, "bytes from cache\t%s (%d, page cache)\n", formatBytes(st.BytesFromCache), st.BytesFromCache)
	}
	fmt.Fprintf(tw, "io time\t%s (server, summed over streams)\n", seconds(st.IOSeconds))
	fmt.Fprintf(tw, "wall time\t%s\n", wall.Round(time.Microsecond))
	tw.Flush()
}

// namedFiles names the first files of a scan for --stats: ": a, b, c,
// ... N more".
func namedFiles(paths []string) string {
	const shown = 3
	if len(paths) == 0 {
		return ""
	}
	if len(paths) <= shown {
		return " (" + strings.Join(paths, ", ") + ")"
	}
	return fmt.Sprintf(" (%s, ... %d more)", strings.Join(paths[:shown], ", "), len(paths)-shown)
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}
