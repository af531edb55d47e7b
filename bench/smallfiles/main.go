// Command smallfiles measures scans of many small Parquet files on S3
// with a round-trip latency: scand's cold
// planning, a stock pyarrow.flight client reading the endpoints in turn,
// the Go client, and pyarrow.dataset over the same objects, then the same
// files' local cousin (a stock client against pq.read_table).
//
//	go run ./bench/smallfiles            (about 2-3 minutes on 2 cores)
//	go run ./bench/smallfiles -turns 0 -cpuprofile plan.pprof
//	                                     (planning timelines and a profile only)
//
// The objects sit in versitygw (a local S3) behind toxiproxy, which adds
// -latency to every response, and a counting proxy in front of it, which
// counts the GETs and LISTs of whoever reads (scand and pyarrow alike).
// Every scand row is a fresh server (cold metadata cache) planning the
// prefix with one GetFlightInfo, then reading it; the rows run in
// interleaved turns (-turns), and the table shows each row's median.
// "scand, old settings" is the server with the settings before footer
// concurrency and files ahead existed (--footer-concurrency 8
// --files-ahead -1 --io-concurrency 16), for the A/B.
//
// Python: <repo>/.venv/bin/python (or -python) with pyarrow; tools
// (versitygw, toxiproxy's server): <repo>/.tools/bin or $SCAND_TOOLS.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/scand/scand/bench/internal/proc"
	"github.com/scand/scand/bench/internal/repo"
	"github.com/scand/scand/bench/internal/s3bench"
	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

type options struct {
	files, rows, localFiles, turns int
	latency                        time.Duration
	scand, python                  string
	baseline                       string
	cpuProfile                     string
	localOnly                      bool
}

func main() {
	var o options
	flag.IntVar(&o.files, "files", 500, "Parquet files on S3")
	flag.IntVar(&o.rows, "rows", 1000, "rows per file")
	flag.IntVar(&o.localFiles, "local-files", 2000, "Parquet files on local disk (0: skip that table)")
	flag.IntVar(&o.turns, "turns", 2, "interleaved turns of every row (0: only the planning timelines)")
	flag.DurationVar(&o.latency, "latency", 30*time.Millisecond, "added to every S3 response")
	flag.StringVar(&o.scand, "scand", "", "scand binary (default: .tools/bin/scand, else built from this tree)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write the server's CPU profile of one cold planning (new settings) to this `file`")
	flag.StringVar(&o.python, "python", "", "python with pyarrow (default <repo>/.venv/bin/python)")
	flag.StringVar(&o.baseline, "baseline", "", "a second scand `binary` (an older build) whose local rows run in the same turns, for a before/after")
	flag.BoolVar(&o.localOnly, "local-only", false, "only the local table (no S3 stack)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "smallfiles:", err)
		os.Exit(1)
	}
}

// env is what the rows run against.
type env struct {
	o          options
	dir, bin   string
	cp         *countingProxy
	peer       *peer
	s3Prefix   string // s3://bucket/small/
	localDir   string // the -local-files files
	localFiles string // root of scand's local rows
}

// sample is one run of one row.
type sample struct {
	plan, total time.Duration
	// clientCPU is the peer's CPU time (the reader's, for pq.read_table),
	// serverCPU scand's during the scan (local rows).
	clientCPU, serverCPU time.Duration
	gets, lists          int64
	rows                 int64
	endpoints            int
}

func run(o options) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	if o.python == "" {
		o.python = filepath.Join(root, ".venv", "bin", "python")
	}
	if o.localOnly {
		return runLocal(root, o)
	}
	stack, err := s3bench.StartStack(root, "smallfiles", o.scand)
	if err != nil {
		return err
	}
	defer stack.Stop()
	dir, gwAddr, tp := stack.Dir, stack.GatewayAddr, stack.Toxiproxy
	e := &env{o: o, dir: dir, bin: stack.Bin, s3Prefix: "s3://" + s3bench.Bucket + "/small/"}
	if err := upload(o, dir, gwAddr); err != nil {
		return err
	}
	slow, err := tp.LatencyProxy(gwAddr, o.latency)
	if err != nil {
		return err
	}
	if e.cp, err = startCountingProxy(slow); err != nil {
		return err
	}
	if e.peer, err = startPeer(o.python, filepath.Join(root, "bench", "smallfiles", "peer.py"), e.cp.endpoint()); err != nil {
		return fmt.Errorf("python peer: %w", err)
	}
	defer e.peer.close()
	if o.turns > 0 {
		s3rows, err := e.measureS3()
		if err != nil {
			return err
		}
		printS3(os.Stdout, o, s3rows)
	}
	if err := e.planTimelines(os.Stdout); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		if err := e.profilePlanning(o.cpuProfile); err != nil {
			return err
		}
	}
	if o.localFiles > 0 && o.turns > 0 {
		local, err := e.measureLocal()
		if err != nil {
			return err
		}
		printLocal(os.Stdout, o, local)
	}
	return nil
}

// runLocal runs the local table alone, without the S3 stack.
func runLocal(root string, o options) error {
	dir, err := os.MkdirTemp("", "scand-smallfiles-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	e := &env{o: o, dir: dir, cp: &countingProxy{}}
	if e.bin, err = s3bench.ScandBinary(root, dir, o.scand); err != nil {
		return err
	}
	// The peer's S3 filesystem is never used here.
	if e.peer, err = startPeer(o.python, filepath.Join(root, "bench", "smallfiles", "peer.py"), "http://127.0.0.1:1"); err != nil {
		return fmt.Errorf("python peer: %w", err)
	}
	defer e.peer.close()
	local, err := e.measureLocal()
	if err != nil {
		return err
	}
	printLocal(os.Stdout, o, local)
	return nil
}

// upload writes the files and puts them in the bucket, 8 at a time.
func upload(o options, dir, gwAddr string) error {
	ctx := context.Background()
	s3c := s3bench.S3Client("http://" + gwAddr)
	if _, err := s3c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(s3bench.Bucket)}); err != nil {
		return err
	}
	src := filepath.Join(dir, "s3src")
	if err := writeFiles(src, o.files, o.rows); err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(8)
	for i := range o.files {
		g.Go(func() error {
			name := fileName(i)
			return s3bench.Upload(ctx, s3c, "small/"+name, filepath.Join(src, name))
		})
	}
	return g.Wait()
}

func fileName(i int) string { return fmt.Sprintf("part-%05d.parquet", i) }

// writeFiles writes n files of rows rows each into dir: an id, a float, a
// short string and a small int, snappy-compressed as pyarrow writes
// them by default (about 20 KB a file at 1,000 rows).
func writeFiles(dir string, n, rows int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	var g errgroup.Group
	g.SetLimit(2)
	for i := range n {
		g.Go(func() error { return writeFile(filepath.Join(dir, fileName(i)), schema, i, rows) })
	}
	return g.Wait()
}

func writeFile(path string, schema *arrow.Schema, i, rows int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	for r := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i*rows + r))
		b.Field(1).(*array.Float64Builder).Append(rng.Float64())
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("s%04d", rng.IntN(5000)))
		b.Field(3).(*array.Int32Builder).Append(int32(rng.IntN(100)))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		return err
	}
	return w.Close()
}

// s3Row is one row of the S3 table: how to run it once.
type s3Row struct {
	name string
	run  func(e *env) (sample, error)
}

// oldSettings are the server's settings before footer concurrency and
// files ahead were tuned for object stores.
var oldSettings = []string{"--footer-concurrency", "8", "--files-ahead", "-1", "--io-concurrency", "16"}

func s3Rows() []s3Row {
	return []s3Row{
		{"scand, stock pyarrow.flight client, endpoints in turn", func(e *env) (sample, error) { return e.stockClient(nil) }},
		{"scand (old settings), stock client, in turn", func(e *env) (sample, error) { return e.stockClient(oldSettings) }},
		{"scand, Go client (4 streams)", func(e *env) (sample, error) { return e.goClient() }},
		{"pyarrow.dataset over S3FileSystem", func(e *env) (sample, error) {
			return e.peerRun(map[string]any{"mode": "dataset", "path": s3bench.Bucket + "/small/"})
		}},
	}
}

// measureS3 runs every row -turns times, interleaved, and returns each
// row's samples.
func (e *env) measureS3() ([][]sample, error) {
	rows := s3Rows()
	out := make([][]sample, len(rows))
	for turn := range e.o.turns {
		for i, r := range rows {
			s, err := r.run(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
			if s.rows != int64(e.o.files*e.o.rows) {
				return nil, fmt.Errorf("%s: %d rows, want %d", r.name, s.rows, e.o.files*e.o.rows)
			}
			logf("turn %d: %s: plan %v, total %v, %d GETs", turn+1, r.name, s.plan.Round(time.Millisecond), s.total.Round(time.Millisecond), s.gets)
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

// counted runs f and adds the GETs and LISTs the proxy saw meanwhile.
func (e *env) counted(f func() (sample, error)) (sample, error) {
	before := e.cp.counts()
	s, err := f()
	d := e.cp.counts().sub(before)
	s.gets, s.lists = d.Gets, d.Lists
	return s, err
}

// stockClient starts a fresh scand on S3 (with extra flags) and has the
// peer's stock client read the prefix.
func (e *env) stockClient(extra []string) (sample, error) {
	srv, addr, err := e.startScand(true, e.dir, extra)
	if err != nil {
		return sample{}, err
	}
	defer srv.Stop()
	return e.counted(func() (sample, error) {
		return e.peerRun(map[string]any{"mode": "flight", "addr": addr, "path": e.s3Prefix})
	})
}

// goClient starts a fresh scand on S3 and reads the prefix with the Go
// client, its default 4 streams at once.
func (e *env) goClient() (sample, error) {
	srv, addr, err := e.startScand(true, e.dir, nil)
	if err != nil {
		return sample{}, err
	}
	defer srv.Stop()
	return e.counted(func() (sample, error) { return goScan(addr, e.s3Prefix) })
}

func goScan(addr, path string) (sample, error) {
	ctx := context.Background()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return sample{}, err
	}
	defer c.Close()
	start := time.Now()
	info, err := c.Info(ctx, &scandv1.ScanRequest{Paths: []string{path}})
	if err != nil {
		return sample{}, err
	}
	s := sample{plan: time.Since(start), endpoints: len(info.Endpoint)}
	sc, err := c.ScanInfo(ctx, info)
	if err != nil {
		return sample{}, err
	}
	defer sc.Release()
	for sc.Next() {
		s.rows += sc.RecordBatch().NumRows()
	}
	s.total = time.Since(start)
	return s, sc.Err()
}

// startScand starts a scand on root (with S3 when s3), waits for it, and
// returns it and its address.
func (e *env) startScand(s3 bool, root string, extra []string) (*s3bench.Process, string, error) {
	return e.startScandBin(e.bin, s3, root, extra)
}

func (e *env) startScandBin(bin string, s3 bool, root string, extra []string) (*s3bench.Process, string, error) {
	addr, err := s3bench.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	args := []string{"serve", "--listen", addr, "--root", root, "--log-level", "warn"}
	if s3 {
		args = append(args, "--s3-endpoint", e.cp.endpoint(), "--s3-path-style", "--s3-region", s3bench.Region,
			"--s3-access-key", s3bench.AccessKey, "--s3-secret-key", s3bench.SecretKey)
	}
	args = append(args, extra...)
	envv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "AWS_EC2_METADATA_DISABLED=true"}
	p, err := s3bench.StartProcess("scand", e.dir, bin, args, envv, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p, addr, err
}

// planTimelines plans the prefix once more on fresh servers, new settings
// and old, keeping the timeline of the requests S3 saw, and prints where
// planning's time went.
func (e *env) planTimelines(w io.Writer) error {
	fmt.Fprintf(w, "\nwhere cold planning's time goes (one GetFlightInfo per row, Go client; times from the plan's start)\n\n")
	fmt.Fprintf(w, "| %-14s | %8s | %9s | %13s | %5s | %17s | %14s | %8s | %10s |\n",
		"server", "planning", "scand CPU", "LIST", "GETs", "GETs from..to", "in flight max/avg", "GET p50", "after GETs")
	fmt.Fprintf(w, "|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", dashes(16), dashes(10), dashes(11), dashes(15), dashes(7), dashes(19), dashes(19), dashes(10), dashes(12))
	for _, r := range []struct {
		name  string
		extra []string
	}{{"new settings", nil}, {"old settings", oldSettings}} {
		srv, addr, err := e.startScand(true, e.dir, r.extra)
		if err != nil {
			return err
		}
		cpu0 := cpuTime(srv.Cmd.Process.Pid)
		e.cp.startTimeline()
		start := time.Now()
		err = planOnly(addr, e.s3Prefix)
		plan := time.Since(start)
		spans := e.cp.stopTimeline()
		cpu := cpuTime(srv.Cmd.Process.Pid) - cpu0
		srv.Stop()
		if err != nil {
			return err
		}
		printTimeline(w, r.name, plan, cpu, spans, e.cp.t0, start)
	}
	fmt.Fprintln(w, "\nscand CPU: user+system time of the server process during the plan (/proc); LIST: the listing's span; in flight: most")
	fmt.Fprintln(w, "GETs at once / their average over the GETs' span; after GETs: from the last GET's end to GetFlightInfo's answer")
	return nil
}

// profilePlanning plans the prefix on a fresh server (new settings) while
// its CPU profile (--pprof) is taken, and writes the profile to path.
func (e *env) profilePlanning(path string) error {
	maddr, err := s3bench.FreeAddr()
	if err != nil {
		return err
	}
	srv, addr, err := e.startScand(true, e.dir, []string{"--metrics-listen", maddr, "--pprof"})
	if err != nil {
		return err
	}
	defer srv.Stop()
	prof := make(chan error, 1)
	go func() {
		body, err := s3bench.HTTPGet("http://" + maddr + "/debug/pprof/profile?seconds=3")
		if err == nil {
			err = os.WriteFile(path, []byte(body), 0o644)
		}
		prof <- err
	}()
	time.Sleep(200 * time.Millisecond) // the profile has started
	start := time.Now()
	if err := planOnly(addr, e.s3Prefix); err != nil {
		return err
	}
	logf("profiled planning: %v; profile in %s (go tool pprof -top %s)", time.Since(start).Round(time.Millisecond), path, path)
	return <-prof
}

func planOnly(addr, path string) error {
	ctx := context.Background()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Info(ctx, &scandv1.ScanRequest{Paths: []string{path}})
	return err
}

func printTimeline(w io.Writer, name string, plan, cpu time.Duration, spans []httpSpan, t0, start time.Time) {
	off := start.Sub(t0)
	var list [2]time.Duration
	var gets []httpSpan
	for _, s := range spans {
		s.start, s.end = s.start-off, s.end-off
		if s.list {
			list = [2]time.Duration{min(list[0], s.start), max(list[1], s.end)}
			if list[0] == 0 {
				list[0] = s.start
			}
			continue
		}
		gets = append(gets, s)
	}
	if len(gets) == 0 {
		fmt.Fprintf(w, "| %-22s | %6.2f s | no GETs |\n", name, plan.Seconds())
		return
	}
	first, last := gets[0].start, gets[0].end
	durs := make([]time.Duration, len(gets))
	var busy time.Duration
	for i, g := range gets {
		first, last = min(first, g.start), max(last, g.end)
		durs[i] = g.end - g.start
		busy += durs[i]
	}
	slices.Sort(durs)
	avg := float64(busy) / float64(last-first)
	fmt.Fprintf(w, "| %-14s | %6.2f s | %7.2f s | %5.2f..%5.2f s | %5d | %6.2f..%6.2f s | %8d / %5.1f | %5.0f ms | %8.2f s |\n", name, plan.Seconds(),
		cpu.Seconds(), list[0].Seconds(), list[1].Seconds(), len(gets), first.Seconds(), last.Seconds(), maxInFlight(gets), avg,
		float64(durs[len(durs)/2].Microseconds())/1000, (plan - last).Seconds())
}

// maxInFlight is the most spans that overlap at one time.
func maxInFlight(spans []httpSpan) int {
	type edge struct {
		t     time.Duration
		delta int
	}
	var edges []edge
	for _, s := range spans {
		edges = append(edges, edge{s.start, 1}, edge{s.end, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.delta - b.delta // ends first at a tie
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// cpuTime is the user and system CPU time of process pid so far (Linux
// /proc; 0 elsewhere).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which ends with the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// localRow is one row of the local table.
type localRow struct {
	name string
	bin  string // scand binary; "" for pq.read_table
	warm bool   // the second scan of the same server, its metadata cache warm
}

func (e *env) localRows() []localRow {
	rows := []localRow{
		{"scand, stock client, endpoints in turn (cold)", e.bin, false},
		{"scand, the same server's second scan (warm)", e.bin, true},
	}
	if e.o.baseline != "" {
		rows = append(rows, localRow{"baseline scand (cold)", e.o.baseline, false},
			localRow{"baseline scand (warm)", e.o.baseline, true})
	}
	return append(rows, localRow{"pq.read_table(directory)", "", false})
}

// measureLocal writes -local-files files and reads them -turns times,
// interleaved: a stock client against a fresh scand (its first scan cold,
// its second warm), and pq.read_table. A warm row's server ran its cold
// scan just before, in the cold row of the same binary.
func (e *env) measureLocal() ([][]sample, error) {
	rows := e.localRows()
	out := make([][]sample, len(rows))
	root := filepath.Join(e.dir, "local")
	if err := writeFiles(filepath.Join(root, "small"), e.o.localFiles, e.o.rows); err != nil {
		return out, err
	}
	for turn := range e.o.turns {
		var srv *s3bench.Process
		var addr string
		for i, r := range rows {
			var s sample
			var err error
			switch {
			case r.bin == "":
				s, err = e.peerRun(map[string]any{"mode": "read_table", "path": filepath.Join(root, "small")})
			case r.warm:
				cpu0 := cpuTime(srv.Cmd.Process.Pid)
				s, err = e.peerRun(map[string]any{"mode": "flight", "addr": addr, "path": "small/"})
				s.serverCPU = cpuTime(srv.Cmd.Process.Pid) - cpu0
				srv.Stop()
			default:
				if srv, addr, err = e.startScandBin(r.bin, false, root, nil); err != nil {
					return out, err
				}
				cpu0 := cpuTime(srv.Cmd.Process.Pid)
				s, err = e.peerRun(map[string]any{"mode": "flight", "addr": addr, "path": "small/"})
				s.serverCPU = cpuTime(srv.Cmd.Process.Pid) - cpu0
			}
			if err != nil {
				return out, fmt.Errorf("%s: %w", r.name, err)
			}
			if s.rows != int64(e.o.localFiles*e.o.rows) {
				return out, fmt.Errorf("%s: %d rows, want %d", r.name, s.rows, e.o.localFiles*e.o.rows)
			}
			logf("local turn %d: %s: %v (plan %v, %d endpoints; CPU: server %v, client %v)", turn+1, r.name,
				s.total.Round(time.Millisecond), s.plan.Round(time.Millisecond), s.endpoints,
				s.serverCPU.Round(time.Millisecond), s.clientCPU.Round(time.Millisecond))
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

// peer is the Python child (peer.py).
type peer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startPeer(python, script, endpoint string) (*peer, error) {
	cmd := exec.Command(python, script, endpoint, s3bench.AccessKey, s3bench.Region)
	cmd.Env = append(os.Environ(), "PEER_SECRET_KEY="+s3bench.SecretKey)
	in, out, err := proc.Start(cmd)
	if err != nil {
		return nil, err
	}
	p := &peer{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	var ready map[string]any
	if err := p.recv(&ready); err != nil {
		p.close()
		return nil, err
	}
	logf("python peer: pyarrow %v, %v CPUs, %v IO threads", ready["pyarrow"], ready["cpu_count"], ready["io_thread_count"])
	return p, nil
}

func (p *peer) recv(v any) error {
	if !p.out.Scan() {
		return fmt.Errorf("the peer ended: %v", p.out.Err())
	}
	return json.Unmarshal(p.out.Bytes(), v)
}

// peerRun sends one request and returns its sample.
func (e *env) peerRun(req map[string]any) (sample, error) {
	return e.counted(func() (sample, error) {
		b, _ := json.Marshal(req)
		if _, err := fmt.Fprintf(e.peer.in, "%s\n", b); err != nil {
			return sample{}, err
		}
		var res struct {
			Plan, Seconds   float64
			CPU             float64
			Rows, Endpoints int64
			Error           string
		}
		if err := e.peer.recv(&res); err != nil {
			return sample{}, err
		}
		if res.Error != "" {
			return sample{}, fmt.Errorf("peer: %s", res.Error)
		}
		return sample{plan: seconds(res.Plan), total: seconds(res.Seconds), clientCPU: seconds(res.CPU), rows: res.Rows, endpoints: int(res.Endpoints)}, nil
	})
}

func (p *peer) close() {
	p.in.Close()
	p.cmd.Wait()
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// median is the middle sample by total time (the lower of the two middle
// ones for an even count).
func median(ss []sample) sample {
	s := slices.Clone(ss)
	slices.SortFunc(s, func(a, b sample) int { return int(a.total - b.total) })
	return s[(len(s)-1)/2]
}

func medianPlan(ss []sample) time.Duration {
	p := make([]time.Duration, len(ss))
	for i, s := range ss {
		p[i] = s.plan
	}
	slices.Sort(p)
	return p[(len(p)-1)/2]
}

func printS3(w io.Writer, o options, rows [][]sample) {
	fmt.Fprintf(w, "\n%d files of %d rows on S3 (versitygw) at +%v per response; median of %d interleaved turns; 2 shared cores, noisy\n\n",
		o.files, o.rows, o.latency, o.turns)
	fmt.Fprintf(w, "| %-55s | %9s | %9s | %6s | %5s | %9s |\n", "reader", "planning", "wall", "GETs", "LISTs", "vs pyarrow.dataset")
	fmt.Fprintf(w, "|%s|%s|%s|%s|%s|%s|\n", dashes(57), dashes(11), dashes(11), dashes(8), dashes(7), dashes(20))
	base := median(rows[len(rows)-1]).total
	for i, r := range s3Rows() {
		m := median(rows[i])
		plan := "-"
		if m.endpoints > 0 {
			plan = fmt.Sprintf("%.2f s", medianPlan(rows[i]).Seconds())
		}
		fmt.Fprintf(w, "| %-55s | %9s | %7.2f s | %6d | %5d | %17.2fx |\n", r.name, plan, m.total.Seconds(), m.gets, m.lists,
			m.total.Seconds()/base.Seconds())
	}
	fmt.Fprintln(w, "\nplanning: scand's GetFlightInfo on a fresh server (cold: no footer cached), part of wall; wall: plan and read everything;")
	fmt.Fprintln(w, "GETs/LISTs: seen by the counting proxy in front of S3; targets: stock client <= 0.5x pyarrow.dataset, planning <= 1.5 s")
}

func printLocal(w io.Writer, o options, r [][]sample) {
	fmt.Fprintf(w, "\n%d files of %d rows on local disk; median of %d interleaved turns; 2 shared cores, noisy\n\n", o.localFiles, o.rows, o.turns)
	fmt.Fprintf(w, "| %-46s | %9s | %9s | %9s | %10s | %10s | %9s |\n", "reader", "planning", "wall", "speed", "server CPU", "client CPU", "CPU ratio")
	fmt.Fprintf(w, "|%s|%s|%s|%s|%s|%s|%s|\n", dashes(48), dashes(11), dashes(11), dashes(11), dashes(12), dashes(12), dashes(11))
	last := len(r) - 1
	t := median(r[last])
	tcpu := medianDur(r[last], func(s sample) time.Duration { return s.clientCPU + s.serverCPU })
	for i, row := range (&env{o: o, bin: "scand"}).localRows() {
		m := median(r[i])
		plan := "-"
		if row.bin != "" {
			plan = fmt.Sprintf("%.2f s", medianPlan(r[i]).Seconds())
		}
		srv := medianDur(r[i], func(s sample) time.Duration { return s.serverCPU })
		cli := medianDur(r[i], func(s sample) time.Duration { return s.clientCPU })
		cpu := medianDur(r[i], func(s sample) time.Duration { return s.clientCPU + s.serverCPU })
		fmt.Fprintf(w, "| %-46s | %9s | %7.2f s | %8.2fx | %8.2f s | %8.2f s | %8.2fx |\n", row.name, plan, m.total.Seconds(),
			t.total.Seconds()/m.total.Seconds(), srv.Seconds(), cli.Seconds(), tcpu.Seconds()/cpu.Seconds())
	}
	fmt.Fprintln(w, "\nspeed: pq.read_table's wall / the row's (target >= 1.0x); cold: a fresh server's first scan; warm: its second;")
	fmt.Fprintln(w, "CPU: medians of the server's (/proc) and the Python client's (process_time) CPU time; CPU ratio: pq.read_table's")
	fmt.Fprintln(w, "CPU / the row's server+client CPU, which a loaded machine moves less than wall time")
}

// medianDur is the median of f over the samples.
func medianDur(ss []sample, f func(sample) time.Duration) time.Duration {
	d := make([]time.Duration, len(ss))
	for i, s := range ss {
		d[i] = f(s)
	}
	slices.Sort(d)
	return d[(len(d)-1)/2]
}

func dashes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '-'
	}
	return string(b)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "smallfiles: "+format+"\n", args...)
}
