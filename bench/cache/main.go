// Command cache measures the page cache (docs/cache.md): Parquet on S3
// (versitygw behind toxiproxy, +latency per response), scanned by scand
// with the cache off and on, cold and warm, against the same files on
// local disk (the limit) and pyarrow.dataset on S3 (the peer).
//
//	go run ./bench/cache                 (256 MiB, 3 turns: a few minutes on 2 cores)
//	go run ./bench/cache -size 1024      (the 1 GB case of docs/cache.md)
//
// Rows, run in interleaved turns, each its median:
//   - cold, cache off: a fresh scand without --cache-dir;
//   - cold, cache on: a fresh scand on an empty --cache-dir;
//   - warm: the same server's second scan (memory and disk tiers);
//   - warm after restart: a fresh scand on that directory (disk tier, its
//     index rebuilt);
//   - local disk: a fresh scand reading the same files from --root;
//   - pyarrow.dataset over S3FileSystem (bench/smallfiles/peer.py);
//   - 3 replicas (--peers, a --cache-dir each), cold then warm: planned
//     on the first, each endpoint read at its first location (its owner)
//     by the Go client, as it does;
//   - with 5 files or more (-size 320 and up), scan resistance: on a cache
//     of half of five files, the hot query (one file) twice, a one-off scan
//     of the four others, the hot query again: its share from the cache.
//
// scand rows read with the Go client, an endpoint per row group (16 MiB);
// GETs are the servers' own count of S3 reads (scand_storage_requests_total);
// "from cache" is the streams' bytes_from_cache over bytes_fetched.
//
// Python: <repo>/.venv/bin/python (or -python) with pyarrow; tools
// (versitygw, toxiproxy's server): <repo>/.tools/bin or $SCAND_TOOLS.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scand/scand/bench/internal/proc"
	"github.com/scand/scand/bench/internal/repo"
	"github.com/scand/scand/bench/internal/s3bench"
	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

type options struct {
	sizeMiB, turns int
	latency        time.Duration
	scand, python  string
	cpuProfile     string
	profileScan    string
}

const fileMiB = 64 // each file; row groups of 16 MiB

func main() {
	var o options
	flag.IntVar(&o.sizeMiB, "size", 256, "MiB of Parquet on S3 (files of 64 MiB)")
	flag.IntVar(&o.turns, "turns", 3, "interleaved turns of every row")
	flag.DurationVar(&o.latency, "latency", 30*time.Millisecond, "added to every S3 response")
	flag.StringVar(&o.scand, "scand", "", "scand binary (default: .tools/bin/scand, else built from this tree)")
	flag.StringVar(&o.python, "python", "", "python with pyarrow (default <repo>/.venv/bin/python)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write the server's CPU profile of turn 1's scan named by -profile-scan to this `file`")
	flag.StringVar(&o.profileScan, "profile-scan", "warm", "which scan -cpuprofile profiles: off (cold, cache off), cold, warm, restart (warm after restart) or local")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "cache:", err)
		os.Exit(1)
	}
}

type env struct {
	o        options
	dir, bin string
	endpoint string // S3 behind the latency proxy
	local    string // --root holding the same files under cache/
	rows     int64
	peer     *peer
}

type sample struct {
	wall time.Duration
	gets int64
	rows int64
	// fromCache and fetched are the streams' bytes_from_cache and
	// bytes_fetched (scand rows only).
	fromCache, fetched int64
	// cpu is the servers' CPU time during the scan (scand rows only).
	cpu time.Duration
}

func run(o options) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	if o.python == "" {
		o.python = filepath.Join(root, ".venv", "bin", "python")
	}
	stack, err := s3bench.StartStack(root, "cache", o.scand)
	if err != nil {
		return err
	}
	defer stack.Stop()
	e := &env{o: o, dir: stack.Dir, bin: stack.Bin, local: filepath.Join(stack.Dir, "local")}
	if e.rows, err = e.prepare(stack.GatewayAddr); err != nil {
		return err
	}
	slow, err := stack.Toxiproxy.LatencyProxy(stack.GatewayAddr, o.latency)
	if err != nil {
		return err
	}
	e.endpoint = "http://" + slow
	if e.peer, err = startPeer(o.python, filepath.Join(root, "bench", "smallfiles", "peer.py"), e.endpoint); err != nil {
		return fmt.Errorf("python peer: %w", err)
	}
	defer e.peer.close()

	names := []string{"scand, cold, cache off", "scand, cold, cache on", "scand, warm (second scan)",
		"scand, warm after restart (disk tier)", "scand, local disk (the limit)", "pyarrow.dataset on S3 (the peer)",
		"3 replicas, cold, cache on", "3 replicas, warm (second scan)"}
	out := make([][]sample, len(names))
	var resist []float64
	for turn := range o.turns {
		ss, err := e.turn(turn)
		if err != nil {
			return err
		}
		if o.sizeMiB/fileMiB >= 5 {
			r, err := e.scanResistance(turn)
			if err != nil {
				return fmt.Errorf("scan resistance: %w", err)
			}
			logf("turn %d: scan resistance: the hot query %.1f %% from the cache", turn+1, 100*r)
			resist = append(resist, r)
		}
		for i, s := range ss {
			if s.rows != e.rows {
				return fmt.Errorf("%s: %d rows, want %d", names[i], s.rows, e.rows)
			}
			logf("turn %d: %-40s %7.2f s  %5d GETs  CPU %5.2f s", turn+1, names[i], s.wall.Seconds(), s.gets, s.cpu.Seconds())
			out[i] = append(out[i], s)
		}
	}
	printTable(os.Stdout, o, names, out)
	if len(resist) > 0 {
		slices.Sort(resist)
		fmt.Printf("\nscan resistance: the hot query (1 file, %d MiB) after a one-off scan of 4 other files, with --cache-size %d MiB\n"+
			"(half the working set) and --cache-memory %d MiB: %.1f %% of its bytes from the cache (median; turns %v); target >= 80 %%\n",
			fileMiB, resistCacheMiB, resistMemoryMiB, 100*resist[(len(resist)-1)/2], resist)
	}
	return nil
}

// The scan-resistance measurement: the hot query reads one file, the
// one-off scan the next four, through a cache of half the five files.
const (
	resistCacheMiB  = 5 * fileMiB / 2
	resistMemoryMiB = 16
)

// scanResistance runs the hot query twice, the one-off scan once, then
// the hot query again on one server, and returns the last hot query's
// share of bytes from the cache.
func (e *env) scanResistance(turn int) (float64, error) {
	dir := filepath.Join(e.dir, fmt.Sprintf("resist-%d", turn))
	defer os.RemoveAll(dir)
	srv, err := e.start([]string{"--cache-dir", dir, "--cache-size", fmt.Sprintf("%dMiB", resistCacheMiB),
		"--cache-memory", fmt.Sprintf("%dMiB", resistMemoryMiB)})
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	file := func(i int) string { return fmt.Sprintf("s3://%s/cache/part-%03d.parquet", s3bench.Bucket, i) }
	for range 2 {
		if _, err := srv.scan(file(0)); err != nil {
			return 0, err
		}
		srv.waitWritten()
	}
	if _, err := srv.scanPaths(file(1), file(2), file(3), file(4)); err != nil {
		return 0, err
	}
	srv.waitWritten()
	s, err := srv.scan(file(0))
	if err != nil || s.fetched == 0 {
		return 0, err
	}
	return float64(s.fromCache) / float64(s.fetched), nil
}

// prepare writes the files, puts them in the bucket and under the local
// root, and returns the rows.
func (e *env) prepare(gwAddr string) (int64, error) {
	ctx := context.Background()
	s3c := s3bench.S3Client("http://" + gwAddr)
	if _, err := s3c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(s3bench.Bucket)}); err != nil {
		return 0, err
	}
	dir := filepath.Join(e.local, "cache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var rows int64
	for i := range max(1, e.o.sizeMiB/fileMiB) {
		name := fmt.Sprintf("part-%03d.parquet", i)
		n, err := writeFile(filepath.Join(dir, name), i)
		if err != nil {
			return 0, err
		}
		rows += n
		if err := s3bench.Upload(ctx, s3c, "cache/"+name, filepath.Join(dir, name)); err != nil {
			return 0, err
		}
	}
	logf("wrote and uploaded %d MiB (%d rows)", max(1, e.o.sizeMiB/fileMiB)*fileMiB, rows)
	return rows, nil
}

// writeFile writes 64 MiB of 8 random int64 columns, plain, uncompressed,
// in row groups of 16 MiB.
func writeFile(path string, seed int) (int64, error) {
	const cols = 8
	rows := int64(fileMiB << 20 / (cols * 8))
	fields := make([]arrow.Field, cols)
	for c := range fields {
		fields[c] = arrow.Field{Name: fmt.Sprintf("c%d", c), Type: arrow.PrimitiveTypes.Int64}
	}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(rows/4))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	const batch = 1 << 16
	for done := int64(0); done < rows; done += batch {
		n := min(batch, rows-done)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for c := range cols {
			ib := b.Field(c).(*array.Int64Builder)
			for range n {
				ib.Append(rng.Int64())
			}
		}
		rec := b.NewRecordBatch()
		err := w.Write(rec)
		rec.Release()
		b.Release()
		if err != nil {
			return 0, err
		}
	}
	return rows, w.Close()
}

// turn runs every row once.
func (e *env) turn(turn int) ([]sample, error) {
	var out []sample
	s3path := "s3://" + s3bench.Bucket + "/cache/"
	// scan reads path on srv; with -cpuprofile, turn 1's scan of the kind
	// -profile-scan names is profiled.
	scan := func(srv *server, path, kind string) (sample, error) {
		if turn != 0 || e.o.cpuProfile == "" || e.o.profileScan != kind {
			return srv.scan(path)
		}
		prof := make(chan error, 1)
		go func() {
			body, err := s3bench.HTTPGet("http://" + srv.maddr + "/debug/pprof/profile?seconds=3")
			if err == nil {
				err = os.WriteFile(e.o.cpuProfile, []byte(body), 0o644)
			}
			prof <- err
		}()
		time.Sleep(100 * time.Millisecond)
		s, err := srv.scan(path)
		if err := <-prof; err != nil {
			logf("profile: %v", err)
		}
		return s, err
	}
	scanOnce := func(extra []string, path, kind string) (sample, error) {
		srv, err := e.start(extra)
		if err != nil {
			return sample{}, err
		}
		defer srv.stop()
		return scan(srv, path, kind)
	}
	s, err := scanOnce(nil, s3path, "off")
	if err != nil {
		return nil, err
	}
	out = append(out, s)

	cacheDir := filepath.Join(e.dir, fmt.Sprintf("cache-%d", turn))
	srv, err := e.start([]string{"--cache-dir", cacheDir})
	if err != nil {
		return nil, err
	}
	for _, kind := range []string{"cold", "warm"} {
		s, err := scan(srv, s3path, kind)
		if err != nil {
			srv.stop()
			return nil, err
		}
		out = append(out, s)
	}
	srv.waitWritten()
	logf("cache on: %d MiB written, %d pages not written (writer behind), %d MiB fetched", srv.metric("scand_cache_written_bytes_total", "")>>20,
		srv.metric("scand_cache_writes_dropped_total", ""), srv.metric("scand_cache_fetched_bytes_total", "")>>20)
	srv.stop()
	if s, err = scanOnce([]string{"--cache-dir", cacheDir}, s3path, "restart"); err != nil {
		return nil, err
	}
	out = append(out, s)
	os.RemoveAll(cacheDir)

	if s, err = scanOnce(nil, "cache/", "local"); err != nil {
		return nil, err
	}
	out = append(out, s)
	if s, err = e.peerRun(map[string]any{"mode": "dataset", "path": s3bench.Bucket + "/cache/"}); err != nil {
		return nil, err
	}
	out = append(out, s)
	cold, warm, err := e.replicas(turn, s3path)
	if err != nil {
		return nil, err
	}
	return append(out, cold, warm), nil
}

// replicas starts 3 replicas that know each other, each on its own
// --cache-dir, and scans twice, planning on the first.
func (e *env) replicas(turn int, path string) (cold, warm sample, err error) {
	keys := filepath.Join(e.dir, "ticket-keys")
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(rand.IntN(256))
	}
	if err := os.WriteFile(keys, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return cold, warm, err
	}
	addrs := make([]string, 3)
	for i := range addrs {
		if addrs[i], err = s3bench.FreeAddr(); err != nil {
			return cold, warm, err
		}
	}
	var srvs []*server
	defer func() {
		for _, s := range srvs {
			s.stop()
		}
	}()
	for i, addr := range addrs {
		dir := filepath.Join(e.dir, fmt.Sprintf("replica-%d-%d", turn, i))
		defer os.RemoveAll(dir)
		srv, err := e.startAt(addr, []string{"--cache-dir", dir, "--peers", strings.Join(addrs, ","),
			"--advertise", "grpc://" + addr, "--ticket-key-file", keys})
		if err != nil {
			return cold, warm, err
		}
		srvs = append(srvs, srv)
	}
	// Membership settles within a few seconds: wait for a plan that names
	// all three.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		n, err := srvs[0].owners(path)
		if err != nil {
			return cold, warm, err
		}
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			return cold, warm, fmt.Errorf("3 replicas: plans name %d owners after 20 s", n)
		}
	}
	gets := func() (n int64) {
		for _, s := range srvs {
			n += s.gets()
		}
		return n
	}
	cpu := func() (d time.Duration) {
		for _, s := range srvs {
			d += s.cpu()
		}
		return d
	}
	for i := range 2 {
		g0, cpu0 := gets(), cpu()
		s, err := srvs[0].scan(path)
		if err != nil {
			return cold, warm, err
		}
		s.gets, s.cpu = gets()-g0, cpu()-cpu0
		if i == 0 {
			cold = s
		} else {
			warm = s
		}
	}
	return cold, warm, nil
}

type server struct {
	p           *s3bench.Process
	addr, maddr string
}

func (e *env) start(extra []string) (*server, error) {
	addr, err := s3bench.FreeAddr()
	if err != nil {
		return nil, err
	}
	return e.startAt(addr, extra)
}

func (e *env) startAt(addr string, extra []string) (*server, error) {
	maddr, err := s3bench.FreeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--listen", addr, "--metrics-listen", maddr, "--root", e.local, "--log-level", "warn",
		"--s3-endpoint", e.endpoint, "--s3-path-style", "--s3-region", s3bench.Region,
		"--s3-access-key", s3bench.AccessKey, "--s3-secret-key", s3bench.SecretKey}
	if e.o.cpuProfile != "" {
		args = append(args, "--pprof")
	}
	args = append(args, extra...)
	envv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "AWS_EC2_METADATA_DISABLED=true"}
	p, err := s3bench.StartProcess("scand", e.dir, e.bin, args, envv, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil && s3bench.HTTPUp("http://"+maddr+"/metrics")
	})
	if err != nil {
		return nil, err
	}
	return &server{p: p, addr: addr, maddr: maddr}, nil
}

func (s *server) stop() { s.p.Stop() }

// metric sums the series of name whose labels contain match.
func (s *server) metric(name, match string) int64 { return int64(s.metricFloat(name, match)) }

// cpu is the server's CPU time so far.
func (s *server) cpu() time.Duration {
	return time.Duration(s.metricFloat("process_cpu_seconds_total", "") * float64(time.Second))
}

func (s *server) metricFloat(name, match string) float64 {
	body, err := s3bench.HTTPGet("http://" + s.maddr + "/metrics")
	if err != nil {
		return -1
	}
	re := regexp.MustCompile(`(?m)^` + name + `(\{[^}]*\})? (\S+)$`)
	var sum float64
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		if match == "" || regexp.MustCompile(match).MatchString(m[1]) {
			v, _ := strconv.ParseFloat(m[2], 64)
			sum += v
		}
	}
	return sum
}

func (s *server) gets() int64 {
	return s.metric("scand_storage_requests_total", `backend="s3".*op="read"|op="read".*backend="s3"`)
}

// waitWritten waits (up to 30 s) for the disk writer to write every
// fetched page.
func (s *server) waitWritten() {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s.metric("scand_cache_written_bytes_total", "") >= s.metric("scand_cache_fetched_bytes_total", "") {
			return
		}
	}
}

// scan plans and reads path with the Go client.
func (s *server) scan(path string) (sample, error) { return s.scanPaths(path) }

// scanPaths plans and reads paths, as one scan, with the Go client.
func (s *server) scanPaths(paths ...string) (sample, error) {
	ctx := context.Background()
	c, err := client.Dial(ctx, s.addr)
	if err != nil {
		return sample{}, err
	}
	defer c.Close()
	g0, cpu0 := s.gets(), s.cpu()
	start := time.Now()
	info, err := c.Info(ctx, request(paths...))
	if err != nil {
		return sample{}, err
	}
	sc, err := c.ScanInfo(ctx, info)
	if err != nil {
		return sample{}, err
	}
	defer sc.Release()
	var out sample
	for sc.Next() {
		out.rows += sc.RecordBatch().NumRows()
	}
	out.wall = time.Since(start)
	out.gets = s.gets() - g0
	out.cpu = s.cpu() - cpu0
	st := sc.Stats()
	out.fromCache, out.fetched = st.BytesFromCache, st.BytesFetched
	return out, sc.Err()
}

// request scans path, an endpoint per row group (16 MiB), so that 3
// replicas share the files' row groups.
func request(paths ...string) *scandv1.ScanRequest {
	return &scandv1.ScanRequest{Paths: paths, SplitBytes: 16 << 20}
}

// owners is how many replicas a plan of path names first.
func (s *server) owners(path string) (int, error) {
	ctx := context.Background()
	c, err := client.Dial(ctx, s.addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	info, err := c.Info(ctx, request(path))
	if err != nil {
		return 0, err
	}
	first := map[string]bool{}
	for _, ep := range info.Endpoint {
		if len(ep.Location) > 0 {
			first[ep.Location[0].Uri] = true
		}
	}
	return len(first), nil
}

// peer is the Python child (bench/smallfiles/peer.py).
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
	return p, nil
}

func (p *peer) recv(v any) error {
	if !p.out.Scan() {
		return fmt.Errorf("the peer ended: %v", p.out.Err())
	}
	return json.Unmarshal(p.out.Bytes(), v)
}

func (e *env) peerRun(req map[string]any) (sample, error) {
	b, _ := json.Marshal(req)
	if _, err := fmt.Fprintf(e.peer.in, "%s\n", b); err != nil {
		return sample{}, err
	}
	var res struct {
		Seconds float64
		Rows    int64
		Error   string
	}
	if err := e.peer.recv(&res); err != nil {
		return sample{}, err
	}
	if res.Error != "" {
		return sample{}, fmt.Errorf("peer: %s", res.Error)
	}
	return sample{wall: time.Duration(res.Seconds * float64(time.Second)), rows: res.Rows, gets: -1}, nil
}

func (p *peer) close() {
	p.in.Close()
	p.cmd.Wait()
}

func median(ss []sample) sample {
	s := slices.Clone(ss)
	slices.SortFunc(s, func(a, b sample) int { return int(a.wall - b.wall) })
	return s[(len(s)-1)/2]
}

func medianCPU(ss []sample) time.Duration {
	d := make([]time.Duration, len(ss))
	for i, s := range ss {
		d[i] = s.cpu
	}
	slices.Sort(d)
	return d[(len(d)-1)/2]
}

func printTable(w io.Writer, o options, names []string, rows [][]sample) {
	mib := float64(max(1, o.sizeMiB/fileMiB) * fileMiB)
	fmt.Fprintf(w, "\n%.0f MiB of Parquet (8 int64 columns, plain, uncompressed) on S3 (versitygw) at +%v per response;\n", mib, o.latency)
	fmt.Fprintf(w, "median of %d interleaved turns; 2 shared cores, noisy\n\n", o.turns)
	fmt.Fprintf(w, "| %-40s | %9s | %9s | %6s | %10s | %13s | %10s |\n", "reader", "wall", "MiB/s", "GETs", "from cache", "vs local disk", "server CPU")
	fmt.Fprintf(w, "|%s|%s|%s|%s|%s|%s|%s|\n", dashes(42), dashes(11), dashes(11), dashes(8), dashes(12), dashes(15), dashes(12))
	local := median(rows[4]).wall
	for i, name := range names {
		m := median(rows[i])
		gets := strconv.FormatInt(m.gets, 10)
		if m.gets < 0 {
			gets = "-"
		}
		hit := "-"
		if m.fetched > 0 {
			hit = fmt.Sprintf("%.1f %%", 100*float64(m.fromCache)/float64(m.fetched))
		}
		cpu := "-"
		if m.fetched > 0 || m.gets >= 0 {
			cpu = fmt.Sprintf("%.2f s", medianCPU(rows[i]).Seconds())
		}
		fmt.Fprintf(w, "| %-40s | %7.2f s | %9.0f | %6s | %10s | %12.2fx | %10s |\n", name, m.wall.Seconds(), mib/m.wall.Seconds(), gets, hit, local.Seconds()/m.wall.Seconds(), cpu)
	}
	fmt.Fprintf(w, "\n3 replicas, warm: %.2fx one replica's cold wall (cache on)\n", median(rows[7]).wall.Seconds()/median(rows[1]).wall.Seconds())
	fmt.Fprintln(w, "\nvs local disk: local disk's wall / the row's (throughput relative to the limit); GETs: the server's S3 reads;")
	fmt.Fprintln(w, "server CPU: the servers' process CPU time during the scan (median of its own)")
	fmt.Fprintln(w, "targets: warm >= 0.9x local disk with 0 GETs; cold with the cache <= 1.05x the wall of cold without;")
	fmt.Fprintln(w, "3 replicas, warm: >= 95 % from cache, wall <= 0.4x one replica's cold")
}

func dashes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '-'
	}
	return string(b)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "cache: "+format+"\n", args...)
}
