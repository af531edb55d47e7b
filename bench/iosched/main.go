// Command iosched benchmarks scand's IO scheduler on S3 against pyarrow, at
// a given network latency, and prints a table. It is a program, not a timed
// test: run it by hand, on a quiet machine.
//
//	go run ./bench/iosched [-scale 1.0] [-repeats 3] [-latency 30ms]
//
// It generates two Parquet files shaped like the examples (random
// int64/float64 columns, so nothing compresses; uncompressed, plain
// encoded, column statistics on, 4 row groups each):
//
//	wide128  65,536 rows x 128 columns, about 67 MB (row groups of 16 MiB)
//	wide400   6,554 rows x 400 columns, about 21 MB (row groups of 5 MiB)
//
// (-scale multiplies the rows), starts versitygw (an S3 server over a
// temporary directory) and toxiproxy in front of it with a latency toxic on
// the downstream stream (every response byte arrives -latency later;
// requests are not delayed, throughput is not limited), and puts a small
// counting HTTP reverse proxy in front of toxiproxy. Everything reads
// through that proxy, which counts object GETs, HEADs, LISTs and the bytes
// of GET responses, so the GETs column is measured the same way for scand
// and pyarrow.
//
// For each file it scans ALL columns and ALTERNATE columns (c000, c002, ...):
//
//   - scand, in-process (server.New with an S3 config pointing at the
//     counting proxy, and the Go client), a fresh server per row:
//     "coalescing off" (iosched.Options{NoCoalesce: true}: one GET per
//     column chunk), "static 4 MiB hole", and "adaptive" (the default: the
//     hole is learned as TTFB x bandwidth; the model is warmed first with
//     scans of a different object, so the measured file is still cold);
//   - pyarrow 26 (bench/iosched/peer.py, run with <repo>/.venv/bin/python)
//     through pyarrow.fs.S3FileSystem: pq.ParquetFile(f).read(columns)
//     (pre_buffer off), and pq.read_table(columns, pre_buffer=True/False).
//
// Each row is one cold scan (the first; for scand it reads the footer, later
// scans get it from the metadata cache; pyarrow has no such cache and reads
// the footer every time) and then -repeats timed scans; wall time is
// min/median/max over the repeats, end to end in the reader (for scand:
// GetFlightInfo, every DoGet, decoding in the client). pyarrow rows whose
// cold scan takes over 8 s (pre_buffer off: one round trip per column chunk,
// two or one at a time) get one timed scan, to keep the run short. A
// "targets" section checks the targets for alternate columns.
//
// Last, the memory line: `scand serve` (built from this tree) as a child
// process with --io-memory (default 256 MiB) serving 16 concurrent full
// scans of wide128; its peak RSS (VmHWM from /proc/PID/status, reset with
// clear_refs after a warm-up scan) against the target budget + 128 MiB.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/scand/scand/bench/internal/s3bench"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scand/scand/bench/internal/proc"
	"github.com/scand/scand/client"
	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/s3"
)

func main() {
	scale := flag.Float64("scale", 1.0, "multiplies the rows of the generated files")
	repeats := flag.Int("repeats", 3, "timed scans per row, after the cold one")
	latency := flag.Duration("latency", 30*time.Millisecond, "latency added to every S3 response (toxiproxy)")
	ioMemory := flag.String("io-memory", "256MiB", "memory run: --io-memory of the scand child")
	memScans := flag.Int("mem-scans", 16, "memory run: concurrent full scans of wide128")
	skipPeer := flag.Bool("skip-peer", false, "do not run the pyarrow peer")
	skipMemory := flag.Bool("skip-memory", false, "do not run the memory line")
	python := flag.String("python", "", "python with pyarrow for the peer (default <repo>/.venv/bin/python)")
	dir := flag.String("dir", "", "working directory (default: a temporary one, removed at the end)")
	custom := flag.String("custom", "", "an extra scand row with these IO options, e.g. \"hole=4MiB max-request=4MiB window=32MiB tolerance=0.5 concurrency=16\"")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process (scand server and Go client) during the scand rows")
	only := flag.String("only", "", "only the files whose name contains this (wide128, wide400)")
	flag.Parse()
	log.SetFlags(0)
	started := time.Now()
	loadBefore := loadavg()

	root, err := repoRoot()
	if err != nil {
		log.Fatal(err)
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "bench-iosched-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	if *python == "" {
		*python = filepath.Join(root, ".venv", "bin", "python")
	}
	budget, err := parseSize(*ioMemory)
	if err != nil {
		log.Fatalf("-io-memory: %v", err)
	}
	// Static keys are given; no instance-metadata lookups.
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()

	// Data.
	ds := []*dataset{
		{name: "wide128", key: "data/wide128.parquet", cols: 128, rows: scaled(65536, *scale), rowGroups: 4},
		{name: "wide400", key: "data/wide400.parquet", cols: 400, rows: scaled(6554, *scale), rowGroups: 4},
	}
	for i, d := range ds {
		d.path = filepath.Join(*dir, d.name+".parquet")
		if err := writeDataset(d, uint64(i+1)); err != nil {
			log.Fatal(err)
		}
		logf("generated %s: %d rows x %d columns, %d row groups, %.1f MB, footer %d bytes",
			d.name, d.rows, d.cols, d.rowGroups, float64(d.size)/1e6, d.footer)
	}
	// The adaptive model is warmed on another object, so that the measured
	// files' first scans stay cold.
	warm := *ds[1]
	warm.name, warm.key = "warm", "warm/wide400.parquet"

	// S3: versitygw <- toxiproxy (latency) <- counting proxy <- readers.
	gw, gwAddr, err := s3bench.StartVersity(root, *dir)
	if err != nil {
		log.Fatal(err)
	}
	defer gw.Stop()
	toxi, err := s3bench.StartToxiproxy(root, *dir)
	if err != nil {
		log.Fatal(err)
	}
	defer toxi.Stop()
	toxiAddr, err := toxi.LatencyProxy(gwAddr, *latency)
	if err != nil {
		log.Fatal(err)
	}
	cp, err := startCountingProxy(toxiAddr)
	if err != nil {
		log.Fatal(err)
	}
	defer cp.close()
	admin := s3bench.S3Client("http://" + gwAddr)
	if _, err := admin.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: ptr(s3bench.Bucket)}); err != nil {
		log.Fatalf("create bucket: %v", err)
	}
	for _, d := range append(ds, &warm) {
		if err := s3bench.Upload(ctx, admin, d.key, d.path); err != nil {
			log.Fatal(err)
		}
	}
	ttfb, bw, err := measureLink(ctx, s3bench.S3Client(cp.endpoint()), ds[0].key, min(16<<20, ds[0].size), 5)
	if err != nil {
		log.Fatalf("measuring the link: %v", err)
	}
	logf("link through toxiproxy: TTFB %.1f ms, bandwidth %.0f MB/s, TTFB x bandwidth = %s",
		ttfb.Seconds()*1e3, bw/1e6, mib(int64(ttfb.Seconds()*bw)))

	// scand, in-process.
	var results []*result
	modes := []struct {
		name string
		opts iosched.Options
	}{
		{"scand coalescing off", iosched.Options{NoCoalesce: true}},
		{"scand static 4 MiB hole", iosched.Options{Hole: 4 << 20}},
		{"scand adaptive", iosched.Options{}},
	}
	if *custom != "" {
		opts, err := parseOptions(*custom)
		if err != nil {
			log.Fatalf("-custom: %v", err)
		}
		modes = append(modes, struct {
			name string
			opts iosched.Options
		}{"scand " + *custom, opts})
	}
	if *only != "" {
		ds = slices.DeleteFunc(ds, func(d *dataset) bool { return !strings.Contains(d.name, *only) })
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
	}
	for _, d := range ds {
		for _, alt := range []bool{true, false} {
			for _, m := range modes {
				r, err := runScand(ctx, cp, d, alt, m.name, m.opts, &warm, *repeats)
				if err != nil {
					log.Fatalf("%s %s: %v", d.name, m.name, err)
				}
				logf("%-8s %-9s %-26s %s", d.name, colsName(alt), m.name, r.short())
				results = append(results, r)
			}
		}
	}

	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}

	// pyarrow.
	pyVersion := "not run"
	if !*skipPeer {
		peer, err := startPeer(*python, filepath.Join(root, "bench", "iosched", "peer.py"), cp.endpoint())
		if err != nil {
			log.Fatalf("pyarrow peer: %v", err)
		}
		pyVersion = fmt.Sprintf("pyarrow %s (cpu_count %v, io_thread_count %v)", peer.hello["pyarrow"], peer.hello["cpu_count"], peer.hello["io_thread_count"])
		for _, d := range ds {
			for _, alt := range []bool{true, false} {
				for _, m := range peerModes {
					r, err := runPeer(peer, cp, d, alt, m, *repeats)
					if err != nil {
						log.Fatalf("%s %s: %v", d.name, m.label, err)
					}
					logf("%-8s %-9s %-26s %s", d.name, colsName(alt), m.label, r.short())
					results = append(results, r)
				}
			}
		}
		peer.close()
	}

	// Memory.
	var mem *memResult
	if !*skipMemory {
		mem, err = runMemory(ctx, root, *dir, cp, ds[0], budget, *memScans)
		if err != nil {
			log.Fatalf("memory run: %v", err)
		}
	}

	printReport(os.Stdout, reportInfo{
		scale: *scale, repeats: *repeats, latency: *latency, ttfb: ttfb, bw: bw, pyarrow: pyVersion,
		elapsed: time.Since(started), load: loadBefore + " at the start, " + loadavg() + " at the end",
	}, ds, results, mem)
}

func ptr[T any](v T) *T { return &v }

func scaled(rows int, scale float64) int { return max(4, int(float64(rows)*scale+0.5)) }

func colsName(alt bool) string {
	if alt {
		return "alternate"
	}
	return "all"
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func mib(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// parseOptions parses "name=value ..." into IO options (hole, max-request,
// window, memory, tolerance, concurrency, no-coalesce).
func parseOptions(s string) (iosched.Options, error) {
	var o iosched.Options
	for _, kv := range strings.Fields(s) {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "hole":
			o.Hole, err = parseSize(v)
		case "max-request":
			o.MaxRequest, err = parseSize(v)
		case "window":
			o.Window, err = parseSize(v)
		case "memory":
			o.Memory, err = parseSize(v)
		case "tolerance":
			o.Tolerance, err = strconv.ParseFloat(v, 64)
		case "concurrency":
			o.Concurrency, err = strconv.Atoi(v)
		case "no-coalesce":
			o.NoCoalesce = true
		default:
			err = fmt.Errorf("unknown option %q", k)
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// result is one row of the table.
type result struct {
	ds        *dataset
	alternate bool
	reader    string // row label
	scand     bool
	first     counts        // requests of the cold scan
	firstTime time.Duration // its wall time
	each      []counts      // requests of each timed scan
	times     []time.Duration
	hole      int64 // scand: the hole of the last scan
	reads     int64 // scand: reads the server reported for the last scan
}

func (r *result) median() time.Duration {
	t := slices.Clone(r.times)
	slices.Sort(t)
	return t[len(t)/2]
}

// gets returns the GETs of the timed scans: one number, or a range.
func (r *result) gets() string {
	lo, hi := r.each[0].Gets, r.each[0].Gets
	for _, c := range r.each {
		lo, hi = min(lo, c.Gets), max(hi, c.Gets)
	}
	if lo == hi {
		return strconv.FormatInt(lo, 10)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

func (r *result) short() string {
	return fmt.Sprintf("GETs first %d, then %s; %.1f MB; cold %.3f s, median %.3f s", r.first.Gets, r.gets(),
		float64(r.each[len(r.each)-1].Bytes)/1e6, r.firstTime.Seconds(), r.median().Seconds())
}

// newScand wires an in-process server as scand serve does with its
// defaults: S3 through the proxy, --io-memory split half for prefetch and
// half for admission.
func newScand(ctx context.Context, cp *countingProxy, opts iosched.Options) (*server.Server, error) {
	lb, err := local.New(os.TempDir())
	if err != nil {
		return nil, err
	}
	b, err := s3.New(ctx, s3.Config{
		Endpoint: cp.endpoint(), PathStyle: true, Region: s3bench.Region, AccessKey: s3bench.AccessKey, SecretKey: s3bench.SecretKey,
	})
	if err != nil {
		return nil, err
	}
	mux := &storage.Mux{Default: lb}
	mux.Handle(s3.Scheme, b)
	opts.Memory = iosched.DefaultMemory / 2
	return server.New(server.Config{
		Bucket:    mux,
		Scheduler: iosched.New(mux, opts),
		Admission: admission.New(iosched.DefaultMemory/2, 0),
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// runScand measures one row with an in-process scand server of its own.
func runScand(ctx context.Context, cp *countingProxy, d *dataset, alt bool, label string, opts iosched.Options,
	warm *dataset, repeats int) (*result, error) {
	srv, err := newScand(ctx, cp, opts)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go srv.Serve(lis)
	defer srv.Stop()
	c, err := client.Dial(ctx, "grpc://"+lis.Addr().String())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if opts.Hole == 0 && !opts.NoCoalesce {
		// Teach the latency model: whole and alternate scans of another
		// object (tails, footers, merged requests of many sizes).
		for range 2 {
			for _, a := range []bool{false, true} {
				if _, err := scandScan(ctx, c, warm, a); err != nil {
					return nil, fmt.Errorf("warm-up: %w", err)
				}
			}
		}
	}
	r := &result{ds: d, alternate: alt, reader: label, scand: true}
	for i := range repeats + 1 {
		c0 := cp.counts()
		start := time.Now()
		st, err := scandScan(ctx, c, d, alt)
		if err != nil {
			return nil, err
		}
		dt := time.Since(start)
		n := cp.counts().sub(c0)
		if i == 0 {
			r.first, r.firstTime = n, dt
			continue
		}
		r.each = append(r.each, n)
		r.times = append(r.times, dt)
		r.hole, r.reads = st.Hole, st.Reads
	}
	return r, nil
}

// scandScan scans d's columns through the Go client and returns the
// server's figures, summed over the streams.
func scandScan(ctx context.Context, c *client.Client, d *dataset, alt bool) (client.Stats, error) {
	req := &scandv1.ScanRequest{Paths: []string{"s3://" + s3bench.Bucket + "/" + d.key}}
	if alt {
		req.Columns = d.columns(true)
	}
	scan, err := c.Scan(ctx, req)
	if err != nil {
		return client.Stats{}, err
	}
	defer scan.Release()
	var rows int64
	for scan.Next() {
		rows += scan.RecordBatch().NumRows()
	}
	if err := scan.Err(); err != nil {
		return client.Stats{}, err
	}
	if rows != int64(d.rows) {
		return client.Stats{}, fmt.Errorf("%s: %d rows, want %d", d.key, rows, d.rows)
	}
	return scan.Stats(), nil
}

// The pyarrow peer.

type peerMode struct{ mode, label string }

var peerModes = []peerMode{
	{"parquetfile", "pyarrow ParquetFile.read"},
	{"read_table_prebuf", "pyarrow pre_buffer=True"},
	{"read_table_nobuf", "pyarrow pre_buffer=False"},
}

type peer struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	hello map[string]any
}

func startPeer(python, script, endpoint string) (*peer, error) {
	if _, err := os.Stat(python); err != nil {
		return nil, fmt.Errorf("%w (create the venv with scripts/test.sh, or pass -python; -skip-peer skips pyarrow)", err)
	}
	cmd := exec.Command(python, script, endpoint, s3bench.AccessKey, s3bench.Region)
	cmd.Env = append(os.Environ(), "PEER_SECRET_KEY="+s3bench.SecretKey, "AWS_EC2_METADATA_DISABLED=true")
	in, out, err := proc.Start(cmd)
	if err != nil {
		return nil, err
	}
	p := &peer{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	p.out.Buffer(make([]byte, 1<<20), 1<<20)
	if err := p.read(&p.hello); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *peer) read(v any) error {
	if !p.out.Scan() {
		if err := p.out.Err(); err != nil {
			return err
		}
		return io.ErrUnexpectedEOF
	}
	return json.Unmarshal(p.out.Bytes(), v)
}

func (p *peer) scan(d *dataset, alt bool, mode string) (time.Duration, error) {
	req := map[string]any{"path": s3bench.Bucket + "/" + d.key, "mode": mode, "columns": nil}
	if alt {
		req["columns"] = d.columns(true)
	}
	b, _ := json.Marshal(req)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return 0, err
	}
	var resp struct {
		Seconds float64 `json:"seconds"`
		Rows    int     `json:"rows"`
		Error   string  `json:"error"`
	}
	if err := p.read(&resp); err != nil {
		return 0, err
	}
	if resp.Error != "" {
		return 0, fmt.Errorf("pyarrow: %s", resp.Error)
	}
	if resp.Rows != d.rows {
		return 0, fmt.Errorf("pyarrow read %d rows of %s, want %d", resp.Rows, d.key, d.rows)
	}
	return time.Duration(resp.Seconds * float64(time.Second)), nil
}

func (p *peer) close() {
	p.in.Close()
	p.cmd.Wait()
}

// slowScan caps the timed scans of a pyarrow row at one when its cold scan
// took longer (pre_buffer off reads one column chunk at a time: hundreds of
// round trips), to keep the run within minutes.
const slowScan = 8 * time.Second

func runPeer(p *peer, cp *countingProxy, d *dataset, alt bool, m peerMode, repeats int) (*result, error) {
	r := &result{ds: d, alternate: alt, reader: m.label}
	for i := 0; i <= repeats; i++ {
		if i == 1 && r.firstTime > slowScan {
			repeats = 1
		}
		c0 := cp.counts()
		dt, err := p.scan(d, alt, m.mode)
		if err != nil {
			return nil, err
		}
		n := cp.counts().sub(c0)
		if i == 0 {
			r.first, r.firstTime = n, dt
			continue
		}
		r.each = append(r.each, n)
		r.times = append(r.times, dt)
	}
	return r, nil
}

// The memory line.

type memResult struct {
	budget, idleRSS, warmRSS, peakRSS, sampledPeak, schedPeak int64
	scans                                                     int
	wall                                                      time.Duration
	file                                                      string
}

func runMemory(ctx context.Context, root, dir string, cp *countingProxy, d *dataset, budget int64, scans int) (*memResult, error) {
	bin := filepath.Join(dir, "scand")
	build := exec.Command("go", "build", "-o", bin, "./cmd/scand")
	build.Dir = root
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/scand: %w", err)
	}
	addr, err := s3bench.FreeAddr()
	if err != nil {
		return nil, err
	}
	maddr, err := s3bench.FreeAddr()
	if err != nil {
		return nil, err
	}
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SCAND_S3_SECRET_KEY=" + s3bench.SecretKey, "AWS_EC2_METADATA_DISABLED=true"}
	p, err := s3bench.StartProcess("scand", dir, bin, []string{"serve", "--listen", addr, "--root", empty,
		"--s3-endpoint", cp.endpoint(), "--s3-path-style", "--s3-access-key", s3bench.AccessKey, "--s3-region", s3bench.Region,
		"--io-memory", strconv.FormatInt(budget, 10), "--metrics-listen", maddr,
	}, env, func() bool { return s3bench.HTTPUp("http://" + maddr + "/metrics") })
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	pid := p.Cmd.Process.Pid
	m := &memResult{budget: budget, scans: scans, file: d.name}
	m.idleRSS = procStatus(pid, "VmRSS")
	dial := func() (*client.Client, error) { return client.Dial(ctx, "grpc://"+addr) }
	c, err := dial()
	if err != nil {
		return nil, err
	}
	if _, err := scandScan(ctx, c, d, false); err != nil { // footer cached, pools warm
		return nil, err
	}
	c.Close()
	m.warmRSS = procStatus(pid, "VmRSS")
	// Reset the peak RSS (VmHWM) to the current RSS.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return nil, fmt.Errorf("reset VmHWM: %w", err)
	}
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			m.sampledPeak = max(m.sampledPeak, procStatus(pid, "VmRSS"))
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	errs := make(chan error, scans)
	var wg sync.WaitGroup
	for range scans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial()
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_, err = scandScan(ctx, c, d, false)
			errs <- err
		}()
	}
	wg.Wait()
	m.wall = time.Since(start)
	close(stop)
	sampler.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return nil, err
		}
	}
	m.peakRSS = procStatus(pid, "VmHWM")
	m.schedPeak = metric("http://"+maddr+"/metrics", "scand_io_memory_peak_bytes")
	return m, nil
}

// procStatus returns a "kB" field of /proc/PID/status in bytes.
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

func metric(url, name string) int64 {
	resp, err := s3bench.HTTPGet(url)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(resp, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return int64(v)
		}
	}
	return -1
}

// The report.

type reportInfo struct {
	scale   float64
	repeats int
	latency time.Duration
	ttfb    time.Duration
	bw      float64
	pyarrow string
	elapsed time.Duration
	load    string
}

// loadavg is the 1-minute load average: other processes on the machine
// skew the timings.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
		}
	}
	return "unknown CPU"
}

func printReport(w io.Writer, info reportInfo, ds []*dataset, results []*result, mem *memResult) {
	fmt.Fprintf(w, "bench/iosched, %s; %d CPUs (%s), GOMAXPROCS %d, %s; %s\n",
		time.Now().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), runtime.GOMAXPROCS(0), runtime.Version(), info.pyarrow)
	fmt.Fprintf(w, "scale %g, %d timed scans per row after a cold one; S3 = versitygw behind toxiproxy, +%v latency on every response (downstream)\n",
		info.scale, info.repeats, info.latency)
	fmt.Fprintf(w, "link measured with ranged GETs: TTFB %.1f ms, %.0f MB/s; TTFB x bandwidth = %s\n",
		info.ttfb.Seconds()*1e3, info.bw/1e6, mib(int64(info.ttfb.Seconds()*info.bw)))
	for _, d := range ds {
		fmt.Fprintf(w, "%s: %d rows x %d columns (int64/float64), %d row groups, %.1f MB, footer %s\n",
			d.name, d.rows, d.cols, d.rowGroups, float64(d.size)/1e6, mib(d.footer))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "GETs: object GETs seen by the counting proxy, in the cold scan / in each timed scan; MB: GET response bytes of a timed scan;")
	fmt.Fprintln(w, "cold s: wall time of the cold scan; wall: timed scans, min / median / max; vs off, vs pa pb: median over the median of")
	fmt.Fprintln(w, "scand coalescing off, of pyarrow pre_buffer=True (same file and columns); note: the hole scand's adaptive planner used")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| %-7s | %-9s | %-26s | %11s | %6s | %6s | %-23s | %6s | %8s | %s |\n",
		"file", "columns", "reader / mode", "GETs", "MB", "cold s", "wall s min / med / max", "vs off", "vs pa pb", "note")
	fmt.Fprintf(w, "|%s|%s|%s|%s:|%s:|%s:|%s|%s:|%s:|%s|\n", dash(9), dash(11), dash(28), dash(12), dash(7), dash(7), dash(25), dash(7), dash(9), dash(6))
	for _, d := range ds {
		for _, alt := range []bool{true, false} {
			var off, pb time.Duration
			for _, r := range results {
				if r.ds == d && r.alternate == alt {
					switch r.reader {
					case "scand coalescing off":
						off = r.median()
					case "pyarrow pre_buffer=True":
						pb = r.median()
					}
				}
			}
			for _, r := range results {
				if r.ds != d || r.alternate != alt {
					continue
				}
				med := r.median()
				t := slices.Clone(r.times)
				sort.Slice(t, func(i, j int) bool { return t[i] < t[j] })
				note := ""
				if r.scand && r.reader == "scand adaptive" {
					note = "hole " + mib(r.hole)
				}
				if len(r.times) == 1 && len(r.times) < info.repeats {
					note += fmt.Sprintf("1 timed scan (cold > %v)", slowScan)
				}
				if r.scand && r.reads != r.each[len(r.each)-1].Gets {
					note += fmt.Sprintf(" (server counted %d reads)", r.reads)
				}
				fmt.Fprintf(w, "| %-7s | %-9s | %-26s | %11s | %6.1f | %6.3f | %-23s | %6s | %8s | %s |\n",
					d.name, colsName(alt), r.reader, fmt.Sprintf("%d / %s", r.first.Gets, r.gets()),
					float64(r.each[len(r.each)-1].Bytes)/1e6, r.firstTime.Seconds(),
					fmt.Sprintf("%.3f / %.3f / %.3f", t[0].Seconds(), med.Seconds(), t[len(t)-1].Seconds()),
					ratio(med, off), ratio(med, pb), strings.TrimSpace(note))
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "targets (alternate columns; scand static 4 MiB hole and adaptive):")
	for _, d := range ds {
		var off, pb time.Duration
		for _, r := range results {
			if r.ds == d && r.alternate {
				switch r.reader {
				case "scand coalescing off":
					off = r.median()
				case "pyarrow pre_buffer=True":
					pb = r.median()
				}
			}
		}
		for _, r := range results {
			if r.ds != d || !r.alternate || !r.scand || r.reader == "scand coalescing off" {
				continue
			}
			var lo, hi int64 = 1 << 62, 0
			for _, c := range r.each {
				lo, hi = min(lo, c.Gets), max(hi, c.Gets)
			}
			med := r.median()
			fmt.Fprintf(w, "  %s %s: wall %s x off (<= 0.25: %s), %s x pyarrow pre_buffer=True (<= 1: %s); GETs cold %d (<= %d: %s), timed %d-%d (<= %d: %s)\n",
				d.name, r.reader, ratio(med, off), verdictVs(off, med.Seconds() <= 0.25*off.Seconds()),
				ratio(med, pb), verdictVs(pb, med <= pb),
				r.first.Gets, d.rowGroups+1, verdict(r.first.Gets <= int64(d.rowGroups+1)),
				lo, hi, d.rowGroups, verdict(hi <= int64(d.rowGroups)))
		}
	}
	if mem != nil {
		fmt.Fprintln(w)
		target := mem.budget + 128<<20
		verdict := "within"
		if mem.peakRSS > target {
			verdict = "OVER"
		}
		fmt.Fprintf(w, "memory: `scand serve --io-memory %s`, %d concurrent full scans of %s in %.1f s: peak RSS %s (VmHWM; sampled VmRSS max %s; %s idle, %s after a warm-up scan), "+
			"%s the target budget + 128 MiB = %s; scheduler's peak prefetch memory %s\n",
			mib(mem.budget), mem.scans, mem.file, mem.wall.Seconds(), mib(mem.peakRSS), mib(mem.sampledPeak), mib(mem.idleRSS), mib(mem.warmRSS),
			verdict, mib(target), mib(mem.schedPeak))
	}
	fmt.Fprintf(w, "\ntotal run time %.0f s; load average (1 min) %s\n", info.elapsed.Seconds(), info.load)
}

func verdictVs(ref time.Duration, ok bool) string {
	if ref <= 0 {
		return "not run"
	}
	return verdict(ok)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func dash(n int) string { return strings.Repeat("-", n) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a.Seconds()/b.Seconds())
}
